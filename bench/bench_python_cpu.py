"""Where the CPU of a Python test file goes: the corpus's Python repositories (issue 47).

    python -m bench.bench_python_cpu                 # attrs, click, requests, tornado
    python -m bench.bench_python_cpu --rounds 9 attrs tornado

Each repository's bundle is cloned bare, then scanned ``--rounds`` times in this
process; each part is timed in process CPU time (not wall time: the machine is
shared), and the table gives medians over the rounds of the parts summed over the
repositories. "scan_commit" is the analyzer's whole scan (the listing and the scan
of its candidates); the rows below it time the Python reader's steps one by one on
the same files, the cyclic collector off as the scan has it. Old and new code are
compared by running this from two checkouts in turn.
"""

from __future__ import annotations

import argparse
import ast
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus.accuracy import CORPUS, load_truth
from clonegate._adapters.analysis import python
from clonegate._adapters.analysis.blobs import blob_reader
from clonegate._adapters.analysis.detect import MAX_FILE_BYTES
from clonegate._adapters.analysis.scan import list_commit, scan_commit

PYTHON_REPOSITORIES = ("attrs", "click", "requests", "tornado")
PARTS = (
    "scan_commit",
    "listing",
    "reading the candidates",
    "ast.parse",
    "freeing the syntax trees",
    "facts walk",
    "outline and freeze",
)


def clone(name: str, into: Path) -> Path:
    bare = into / f"{name}.git"
    bundle = CORPUS / f"{name}.bundle"
    subprocess.run(["git", "clone", "-q", "--bare", str(bundle), str(bare)], check=True)
    return bare


class Clock:
    """CPU seconds per part, added up."""

    def __init__(self) -> None:
        self.spent = dict.fromkeys(PARTS, 0.0)
        self._part = ""
        self._started = 0.0

    def start(self, part: str) -> None:
        self._part, self._started = part, time.process_time()

    def stop(self) -> None:
        self.spent[self._part] += time.process_time() - self._started


def one_repository(clock: Clock, bare: str, commit: str) -> int:
    """Time each part on one repository; its test files."""
    from dulwich.repo import Repo

    clock.start("scan_commit")
    result = scan_commit(bare, commit)
    clock.stop()
    clock.start("listing")
    listing = list_commit(bare, commit)
    clock.stop()
    with Repo(bare) as repo:
        read = blob_reader(repo.object_store, MAX_FILE_BYTES)
        clock.start("reading the candidates")
        blobs = [(path, read(sha)) for path, sha in listing.candidates]
        clock.stop()
    sources = [(path, blob) for path, blob in blobs if path.endswith(".py")]
    if not sources:
        return len(result.inventory.files)
    clock.start("ast.parse")
    trees = [ast.parse(blob, filename=path) for path, blob in sources]
    clock.stop()
    clock.start("facts walk")
    facts = [python.facts_of(tree) for tree in trees]
    clock.stop()
    clock.start("outline and freeze")
    for index, tree in enumerate(trees):
        python.outline_python(tree, facts[index]).freeze()
    del tree  # the last one is freed with the others
    clock.stop()
    clock.start("freeing the syntax trees")
    del trees, facts
    clock.stop()
    return len(result.inventory.files)


def one_round(repositories: list[tuple[Path, str]]) -> tuple[dict[str, float], int]:
    """CPU seconds per part over ``repositories`` (bare path, commit); test files."""
    clock = Clock()
    collecting = gc.isenabled()
    gc.disable()  # as the scan has it
    try:
        test_files = sum(one_repository(clock, str(bare), commit) for bare, commit in repositories)
    finally:
        if collecting:
            gc.enable()
    return clock.spent, test_files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("names", nargs="*", default=list(PYTHON_REPOSITORIES))
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="clonegate-python-cpu-") as tmp:
        repositories = [(clone(n, Path(tmp)), load_truth(n).commit) for n in args.names]
        one_round(repositories)  # lazy imports, compiled patterns
        rounds = [one_round(repositories) for _ in range(args.rounds)]
    test_files = rounds[0][1]
    medians = {part: statistics.median(r[part] for r, _ in rounds) for part in PARTS}
    print(f"{', '.join(args.names)}: {test_files} test files; medians of {args.rounds} rounds\n")
    print("| part | CPU ms | ms per test file |")
    print("|---|---|---|")
    for part in PARTS:
        print(f"| {part} | {medians[part] * 1000:.1f} | {medians[part] * 1000 / test_files:.2f} |")
    print(f"\ntest files per second per core: {test_files / medians['scan_commit']:,.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

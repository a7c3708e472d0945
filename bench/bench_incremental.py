"""Incremental runs and the analysis cache (issue 18), side by side in one run.

    python bench/bench_incremental.py            # a few minutes
    python bench/bench_incremental.py --quick    # 40 repositories, 10 forks

1. N repositories (default 200, each distinct; "tiny": 12 test files and 30 other
   files, "small project": 60 test files and 300 other files; "real": the corpus
   bundles of tests/fixtures/corpus in turn, their tips as published) served by
   ``git daemon`` on 127.0.0.1 (``--only tiny|small|real``: one kind, no forks).
   ``clonegate analyze -j 2 --db`` over all of them (the full run), then 10% of them
   get a new commit, then ``clonegate analyze --incremental`` (the re-run), then for
   reference a plain re-run with the cache warm. Each is a fresh command, start-up and
   exit included; the ratio re-run / full run is the target. Beside the re-run, what
   bounds it on this machine: the CPU-seconds the whole machine spent busy during it
   (``/proc/stat``; clonegate's share from its process tree) over the cores, the
   shortest the re-run could take with that much work; and the git part of the re-run
   done by git itself (every HEAD listed 4 at once, beside bare depth-1 clones of the
   changed ones 2 at once, named in advance; protocol v0, git's faster one against
   ``git daemon`` here, where clonegate speaks v2), with no start-up of clonegate's,
   no analysis and no store.
2. F forks (default 50) of one repository of 300 test files, each fork with one test
   file of its own: analyzed in-process (``AnalyzeUseCase`` with ``DulwichVCS`` and a
   ``TestInventoryAnalyzer``) with no cache, with a cold cache, then with the warm
   cache; files parsed (the analyzer's statistics) and seconds.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from bench.installed import compile_sources
from clonegate import (
    AnalysisSettings,
    AnalyzeUseCase,
    DulwichVCS,
    TestInventoryAnalyzer,
    with_max_concurrent_clones,
)
from clonegate.store import open_store
from tests.support.repos import fast_import, git
from tests.support.servers import git_daemon

ROOT = Path(__file__).resolve().parents[1]

CORPUS = ROOT / "tests" / "fixtures" / "corpus"
# The corpus's languages: a comment line in any of these is still a valid file.
SOURCE_SUFFIXES = (".py", ".rs", ".go", ".java", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx")
COMMITTER = "committer Bench <bench@example.invalid> 1700000000 +0000\n"


def _files(repo: int, tests: int, others: int) -> dict[str, str]:
    files = {}
    for i in range(tests):
        body = "".join(f"def test_{repo}_{i}_{k}():\n    assert {k}\n\n\n" for k in range(8))
        files[f"tests/unit/test_module_{i}.py"] = f"# repository {repo}\n{body}"
    for i in range(others):
        files[f"src/pkg/mod_{i}.py"] = f"# repository {repo}\ndef f_{i}():\n    return {i}\n"
    files["pytest.ini"] = "[pytest]\naddopts = -q\n"
    return files


def _commit(files: dict[str, str], parent: str | None = None) -> bytes:
    stream = [f"commit refs/heads/main\n{COMMITTER}data 6\nbench\n"]
    if parent:
        stream.append(f"from {parent}\n")
    for path, text in files.items():
        data = text.encode()
        stream.append(f"M 644 inline {path}\ndata {len(data)}\n{text}\n")
    return "".join(stream).encode()


def make(root: Path, name: str, files: dict[str, str]) -> str:
    bare = root / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    return fast_import(bare, _commit(files))


def change(root: Path, name: str, repo: int) -> None:
    """A new commit on ``name``: one test file changed."""
    bare = root / f"{name}.git"
    head = git("-C", str(bare), "rev-parse", "HEAD")
    text = "".join(f"def test_new_{repo}_{k}():\n    pass\n\n\n" for k in range(3))
    fast_import(bare, _commit({"tests/unit/test_module_0.py": text}, head))


def copy_real(root: Path, name: str, bundle: Path) -> None:
    """A real repository (a corpus bundle: its tip, depth 1) served as ``name``, its
    HEAD on branch main (the bundles hold a detached HEAD, which no commit moves)."""
    bare = root / f"{name}.git"
    git("clone", "-q", "--bare", str(bundle), str(bare))
    # The tip's parents are not in the bundle: say so, as a depth-1 clone does, or
    # git fails walking to them (a new commit's fast-forward check, a repack).
    (bare / "shallow").write_text(git("-C", str(bare), "rev-parse", "HEAD") + "\n")
    git("-C", str(bare), "update-ref", "refs/heads/main", "HEAD")
    git("-C", str(bare), "symbolic-ref", "HEAD", "refs/heads/main")


def change_real(root: Path, name: str) -> None:
    """A new commit on ``name``: a comment line added to its first source file named
    like a test (else the first source file under a test directory)."""
    bare = root / f"{name}.git"
    head = git("-C", str(bare), "rev-parse", "HEAD")
    paths = git("-C", str(bare), "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    sources = [p for p in paths if p.endswith(SOURCE_SUFFIXES)]
    named = [p for p in sources if "test" in p.rsplit("/", 1)[-1].lower()]
    path = (named or [p for p in sources if "test" in p.lower()])[0]
    text = git("-C", str(bare), "show", f"HEAD:{path}")
    comment = "#" if path.endswith(".py") else "//"
    fast_import(bare, _commit({path: f"{text}\n{comment} changed\n"}, head))


def clonegate(*args: str) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "-q", "--format", "jsonl", *args],
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=ROOT,
    )
    return time.perf_counter() - started


def busy_cpu() -> float:
    """CPU-seconds every core of the machine has spent running something since boot
    (/proc/stat): user, nice, system, irq and softirq; not idle or iowait, nor steal
    (the host's other guests), nor guest (already in user). Everything running
    counts, so the figure assumes an otherwise idle machine."""
    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:3]) + fields[5] + fields[6]) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    """CPU-seconds of this process's ended children and their descendants, each
    waited for by its parent (clonegate's zygote waits for its workers, the command
    for its zygote)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def git_rerun(root: Path, urls: list[str], changed: list[str]) -> tuple[float, float]:
    """Seconds git takes for the git part of a re-run, and the machine's busy
    CPU-seconds meanwhile: ``urls``' HEADs listed 4 at once beside bare depth-1 clones
    of ``changed`` 2 at once. git's best case: the changed repositories are named in
    advance, so their clones do not wait for their listings."""
    v0 = ("git", "-c", "protocol.version=0")
    clones = root / "git-clones"
    clones.mkdir()
    pairs = "".join(f"{url} {clones / str(n)}\n" for n, url in enumerate(changed))
    machine, started = busy_cpu(), time.perf_counter()
    listing = subprocess.Popen(
        ["xargs", "-P", "4", "-I", "{}", *v0, "ls-remote", "{}", "HEAD"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    cloning = subprocess.Popen(
        ["xargs", "-P", "2", "-n", "2", *v0, "clone", "-q", "--bare", "--depth", "1"],
        stdin=subprocess.PIPE,
        text=True,
    )
    # Both fed before either is waited for, so that they run side by side.
    for process, lines in ((listing, "".join(url + "\n" for url in urls)), (cloning, pairs)):
        assert process.stdin is not None
        process.stdin.write(lines)
        process.stdin.close()
    listing.wait()
    cloning.wait()
    elapsed, busy = time.perf_counter() - started, busy_cpu() - machine
    if listing.returncode or cloning.returncode:
        raise RuntimeError("git's re-run failed")
    shutil.rmtree(clones)
    return elapsed, busy


def incremental(root: Path, count: int, kind: tuple[int, int] | None) -> dict[str, float]:
    """Full run, then the re-runs, over ``count`` repositories: generated ones of
    ``kind`` = (test files, other files), or (None) the real corpus bundles in turn."""
    bundles = sorted(CORPUS.glob("*.bundle"))
    for r in range(count):
        if kind is None:
            copy_real(root, f"r{r}", bundles[r % len(bundles)])
        else:
            make(root, f"r{r}", _files(r, tests=kind[0], others=kind[1]))
    figures: dict[str, float] = {}
    with git_daemon(root) as daemon:
        urls = root / "urls.txt"
        urls.write_text("".join(daemon.url(f"r{r}") + "\n" for r in range(count)))
        db = str(root / "runs.db")
        common = ("-j", "2", "--db", db, "--from-file", str(urls))
        figures["full run s"] = clonegate(*common)
        for r in range(0, count, 10):  # 10%
            if kind is None:
                change_real(root, f"r{r}")
            else:
                change(root, f"r{r}", r)
        machine, tree = busy_cpu(), children_cpu()
        figures["incremental re-run s"] = clonegate(*common, "--incremental")
        figures["re-run: machine busy CPU s"] = busy_cpu() - machine
        figures["re-run: clonegate's CPU s"] = children_cpu() - tree
        figures["plain re-run, warm cache s"] = clonegate(*common)
        changed = [daemon.url(f"r{r}") for r in range(0, count, 10)]
        listed = [daemon.url(f"r{r}") for r in range(count)]
        seconds, busy = git_rerun(root, listed, changed)
        figures["git's own re-run s"] = seconds
        figures["git's own re-run: machine busy CPU s"] = busy
    full = figures["full run s"]
    figures["incremental / full"] = figures["incremental re-run s"] / full
    cores = os.cpu_count() or 1
    figures["re-run CPU floor / full"] = figures["re-run: machine busy CPU s"] / cores / full
    figures["git's own re-run / full"] = figures["git's own re-run s"] / full
    return figures


async def forks(root: Path, count: int) -> dict[str, float]:
    base = _files(0, tests=300, others=50)
    for f in range(count):
        own = dict(base)
        own[f"tests/unit/test_fork_{f}.py"] = f"def test_fork_{f}():\n    pass\n"
        make(root, f"fork{f}", own)
    figures: dict[str, float] = {}
    with git_daemon(root) as daemon:
        urls = [daemon.url(f"fork{f}") for f in range(count)]
        async with open_store(root / "cache.db") as store:
            for label, cache in (("no cache", None), ("cold", store), ("warm", store)):
                analyzer = TestInventoryAnalyzer(AnalysisSettings(cache=cache))
                use_case = AnalyzeUseCase(
                    with_max_concurrent_clones(2), vcs=DulwichVCS(), analyzer=analyzer
                )
                started = time.perf_counter()
                async with use_case.analyze_many(urls) as batch:
                    async for report in batch:
                        assert report.status == "ok", report.error
                figures[f"{label} s"] = time.perf_counter() - started
                figures[f"{label} files parsed"] = analyzer.statistics().files_parsed
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", choices=("tiny", "small", "real"), help="one kind, no forks")
    args = parser.parse_args()
    compile_sources()  # measured as installed (bench/installed.py)
    repositories, fork_count = (40, 10) if args.quick else (200, 50)
    with tempfile.TemporaryDirectory(prefix="bench-incremental-") as tmp:
        kinds: dict[str, tuple[int, int] | None] = {
            "tiny": (12, 30),
            "small project": (60, 300),
            "real (corpus)": None,
        }
        for label, kind in kinds.items():
            if args.only and not label.startswith(args.only):
                continue
            first = Path(tmp) / label.split()[0]
            first.mkdir()
            for name, value in incremental(first, repositories, kind).items():
                print(f"{repositories} {label} repositories, {name}: {value:.3f}")
        if args.only:
            return
        second = Path(tmp) / "forks"
        second.mkdir()
        for name, value in trio.run(forks, second, fork_count).items():
            print(f"{fork_count} forks, {name}: {value:.3f}")


if __name__ == "__main__":
    main()

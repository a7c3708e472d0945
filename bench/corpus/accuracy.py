"""How the analyzer's inventory matches the corpus truth (issue 16, bench/corpus/README.md).

    python -m bench.corpus.accuracy [NAME ...] [--details]

For each truth file in ``tests/fixtures/corpus/truth/``: clone its bundle (bare), scan the
commit with the analyzer, and match the reported tests against the truth's, file by file.
A test matches one truth entry of the same file by line and name, else by line alone
(runners evaluate template names that ADR 0005 keeps as written), else by name alone
(a truth tool that cannot tell lines). Prints one row per repository: tests in the truth,
reported, matched, recall (matched/truth), precision (matched/reported), status
disagreements among matched tests whose truth status is known, and files/s per core.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from clonegate._adapters.analysis.results import ScanResult
from clonegate._adapters.analysis.scan import scan_commit
from clonegate._domain.inventory import Inventory

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
TRUTH = CORPUS / "truth"


@dataclass(frozen=True, slots=True)
class Entry:
    """One test definition: from a truth file, or from the analyzer's inventory."""

    file: str
    line: int | None
    name: str
    status: str | None


@dataclass(frozen=True, slots=True)
class Truth:
    name: str
    commit: str
    tests: tuple[Entry, ...]
    # Paths the truth tool could not cover (a sub-project its runner does not load),
    # left out on both sides; each says why in the truth file.
    excluded: tuple[str, ...] = ()

    def covers(self, path: str) -> bool:
        return not any(path.startswith(prefix) for prefix in self.excluded)

    @property
    def files(self) -> set[str]:
        return {t.file for t in self.tests}


def truth_names() -> list[str]:
    return sorted(p.stem for p in TRUTH.glob("*.json"))


def load_truth(name: str) -> Truth:
    data = json.loads((TRUTH / f"{name}.json").read_text(encoding="utf-8"))
    tests = tuple(
        Entry(t["file"], t.get("line"), str(t.get("name", "")), t.get("status"))
        for t in data["tests"]
    )
    excluded = tuple(e["path"] for e in data.get("excluded", ()))
    return Truth(data["name"], data["commit"], tests, excluded)


def scan_bundle(name: str, commit: str) -> tuple[ScanResult, float]:
    """The analyzer's scan of the bundle's ``commit``, and the CPU seconds it took."""
    with tempfile.TemporaryDirectory(prefix="clonegate-corpus-") as tmp:
        bare = Path(tmp) / f"{name}.git"
        subprocess.run(
            ["git", "clone", "--quiet", "--bare", str(CORPUS / f"{name}.bundle"), str(bare)],
            check=True,
            capture_output=True,
        )
        started = time.process_time()
        result = scan_commit(str(bare), commit)
        return result, time.process_time() - started


def reported(inventory: Inventory) -> list[Entry]:
    return [
        Entry(f.path, t.line, t.name, t.status.value)
        for f in inventory.files
        for t in f.all_tests()
    ]


@dataclass
class Match:
    pairs: list[tuple[Entry, Entry]] = field(default_factory=list)  # (truth, reported)
    missed: list[Entry] = field(default_factory=list)
    extra: list[Entry] = field(default_factory=list)

    def status_disagreements(self) -> list[tuple[Entry, Entry]]:
        return [(t, r) for t, r in self.pairs if t.status is not None and t.status != r.status]


def match(truth: Iterable[Entry], found: Iterable[Entry]) -> Match:
    """Pair truth entries with reported tests of the same file, most specific key first."""
    result = Match()
    by_file: dict[str, tuple[list[Entry], list[Entry]]] = defaultdict(lambda: ([], []))
    for t in truth:
        by_file[t.file][0].append(t)
    for r in found:
        by_file[r.file][1].append(r)
    keys: list[Callable[[Entry], object]] = [
        lambda e: (e.line, e.name),
        lambda e: e.line,
        lambda e: e.name,
    ]
    for wanted, offered in by_file.values():
        for key in keys:
            pool: dict[object, list[Entry]] = defaultdict(list)
            for r in offered:
                pool[key(r)].append(r)
            left = []
            for t in wanted:
                k = key(t)
                if (t.line is None and key is keys[1]) or not pool.get(k):
                    left.append(t)
                    continue
                r = pool[k].pop(0)
                result.pairs.append((t, r))
                offered.remove(r)
            wanted[:] = left
        result.missed += wanted
        result.extra += offered
    return result


@dataclass(frozen=True, slots=True)
class Row:
    name: str
    truth: int
    reported: int
    matched: int
    status_wrong: int
    truth_files: int
    reported_files: int  # files with at least one test, as the truth's
    inventory_files: int  # every test file the inventory lists (some may hold no test)
    excluded: int  # tests reported under the truth's excluded paths
    by_status: dict[str, int]  # of the whole inventory, excluded paths included
    files_per_second: float
    frameworks: dict[str, str] = field(default_factory=dict)  # file -> framework reported

    @property
    def recall(self) -> float:
        return self.matched / self.truth if self.truth else 1.0

    @property
    def precision(self) -> float:
        return self.matched / self.reported if self.reported else 1.0


def measure(name: str) -> tuple[Row, Match]:
    truth = load_truth(name)
    result, cpu = scan_bundle(name, truth.commit)
    found = [e for e in reported(result.inventory) if truth.covers(e.file)]
    m = match(truth.tests, found)
    row = Row(
        name=name,
        truth=len(truth.tests),
        reported=len(found),
        matched=len(m.pairs),
        status_wrong=len(m.status_disagreements()),
        truth_files=len(truth.files),
        reported_files=len({e.file for e in found}),
        inventory_files=len(result.inventory.files),
        excluded=result.inventory.tests - len(found),
        by_status=result.inventory.by_status(),
        files_per_second=result.files_scanned / cpu if cpu else 0.0,
        frameworks={f.path: f.framework for f in result.inventory.files},
    )
    return row, m


def by_framework(measured: list[tuple[Row, Match]]) -> str:
    """Recall and precision per framework: a truth entry counts under the framework the
    analyzer reported for its file ("none" when it reported no test there)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # truth, rep, match, wrong
    for row, m in measured:

        def framework(entry: Entry, row: Row = row) -> str:
            return row.frameworks.get(entry.file, "none")

        for truth, found in m.pairs:
            counts[framework(found)][0] += 1
            counts[framework(found)][1] += 1
            counts[framework(found)][2] += 1
            if truth.status is not None and truth.status != found.status:
                counts[framework(found)][3] += 1
        for entry in m.missed:
            counts[framework(entry)][0] += 1
        for entry in m.extra:
            counts[framework(entry)][1] += 1
    lines = [
        "| framework | truth | reported | matched | recall | precision | status wrong |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (expected, reported_count, matched, wrong) in sorted(counts.items()):
        lines.append(
            f"| {name} | {expected} | {reported_count} | {matched} "
            f"| {matched / max(expected, 1):.2%} | {matched / max(reported_count, 1):.2%} "
            f"| {wrong} |"
        )
    return "\n".join(lines)


def table(rows: list[Row]) -> str:
    lines = [
        "| repository | truth | reported | matched | recall | precision | status wrong "
        "| files (truth/reported) | files/s per core |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.name} | {r.truth} | {r.reported} | {r.matched} | {r.recall:.2%} "
            f"| {r.precision:.2%} | {r.status_wrong} | {r.truth_files}/{r.reported_files} "
            f"| {r.files_per_second:,.0f} |"
        )
    truth, matched = sum(r.truth for r in rows), sum(r.matched for r in rows)
    reported_total = sum(r.reported for r in rows)
    lines.append(
        f"| **all** | {truth} | {reported_total} | {matched} | {matched / max(truth, 1):.2%} "
        f"| {matched / max(reported_total, 1):.2%} | {sum(r.status_wrong for r in rows)} | | |"
    )
    return "\n".join(lines)


def details(m: Match, limit: int) -> str:
    out = []
    for title, entries in (("missed", m.missed), ("extra", m.extra)):
        out.append(f"  {title}: {len(entries)}")
        out += [f"    {e.file}:{e.line} {e.name!r} {e.status}" for e in entries[:limit]]
    wrong = m.status_disagreements()
    out.append(f"  status wrong: {len(wrong)}")
    out += [
        f"    {t.file}:{t.line} {t.name!r} truth {t.status} reported {r.status}" for t, r in wrong
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="truth files to measure (default: all)")
    parser.add_argument("--details", action="store_true", help="list misses and extras")
    parser.add_argument("--limit", type=int, default=40, help="entries listed per kind")
    parser.add_argument("--by-framework", action="store_true", help="a table per framework too")
    args = parser.parse_args(argv)
    measured = []
    for name in args.names or truth_names():
        row, m = measure(name)
        measured.append((row, m))
        if args.details:
            print(f"{name}:\n{details(m, args.limit)}", file=sys.stderr)
    print(table([row for row, _ in measured]))
    if args.by_framework:
        print()
        print(by_framework(measured))
    return 0


if __name__ == "__main__":
    sys.exit(main())

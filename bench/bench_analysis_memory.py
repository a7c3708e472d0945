"""What the analyses take, outside the memory budget (issue 46, ADR 0014's "auto").

    python -m bench.bench_analysis_memory                  # the corpus, the shapes, hostile files
    python -m bench.bench_analysis_memory --only corpus    # or shapes, hostile, cli
    python -m bench.bench_analysis_memory --cache /tmp/shapes   # bench_memory's repositories

``jobs`` (corpus, shapes, hostile): each repository, cloned bare with git, is analyzed
in this process by a :class:`TestInventoryAnalyzer` on every CPU, as the command line
does. Per analysis job: its peak as the worker pool measures it (the worker's
``ru_maxrss`` above its resident size at the job's start, plus the zygote's pages it
wrote to: what a clone's peak is), and each analysis worker's USS
(``Private_Clean + Private_Dirty``), sampled every 10 ms. The shapes are
``bench_memory``'s four batches' repositories; the hostile ones are generated test
files at the analyzer's bounds (10 MiB a file, 500,000 punctuation marks).

``cli``: ``clonegate analyze --memory-budget off`` on each shape, 4 clones at ``-j 2``
(served by ``git daemon``), the process tree's PSS sampled every 10 ms, split into the
parent, the zygote, the clone workers (a thread beside the main one: the clone
envelope's watchdog) and the analysis workers: the tree's peak, and each part's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path
from typing import Any

import trio

from bench.bench_memory import _make_batches
from bench.installed import ROOT, compile_sources
from bench.proctree import _children
from clonegate import ClonedSource, TestInventoryAnalyzer
from tests.support.repos import fast_import, git
from tests.support.servers import git_daemon

MiB = 1 << 20
CORPUS = ROOT / "tests" / "fixtures" / "corpus"
SHAPES = ("data", "history", "delta", "small")


def _rollup(pid: int) -> tuple[int, int, int]:
    """(PSS, USS, threads) of ``pid`` in bytes; zeros once it is gone."""
    try:
        fields = {}
        with open(f"/proc/{pid}/smaps_rollup", "rb") as rollup:
            for line in rollup:
                name, _, rest = line.partition(b":")
                if rest.endswith(b" kB\n"):
                    fields[name] = int(rest.split()[0]) * 1024
        status = Path(f"/proc/{pid}/status").read_text()
    except (OSError, ValueError):
        return 0, 0, 0
    threads = int(status.split("Threads:", 1)[1].split()[0])
    uss = fields.get(b"Private_Clean", 0) + fields.get(b"Private_Dirty", 0)
    return fields.get(b"Pss", 0), uss, threads


class TreeSampler:
    """Samples the PSS and USS of every process under ``root`` every ``interval`` s,
    by depth: 0 the root, 1 its children (the zygote), 2 their children (the workers)."""

    def __init__(self, root: int, interval: float = 0.01) -> None:
        self.root, self.interval = root, interval
        self.samples: list[dict[int, tuple[int, int, int, int]]] = []  # pid: depth, pss, uss, thr
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TreeSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            tree, sample, stack = _children(), {}, [(self.root, 0)]
            while stack:
                pid, depth = stack.pop()
                sample[pid] = (depth, *_rollup(pid))
                stack.extend((child, depth + 1) for child in tree.get(pid, ()))
            self.samples.append(sample)

    def workers(self) -> dict[int, tuple[int, bool]]:
        """Each worker's peak USS, and whether it ever had a second thread (a clone)."""
        seen: dict[int, tuple[int, bool]] = {}
        for sample in self.samples:
            for pid, (depth, _pss, uss, threads) in sample.items():
                if depth >= 2:
                    peak, clone = seen.get(pid, (0, False))
                    seen[pid] = (max(peak, uss), clone or threads > 1)
        return seen

    def last_uss(self) -> dict[int, int]:
        """Each worker's USS in the last sample it was seen in (idle, after its jobs)."""
        last: dict[int, int] = {}
        for sample in self.samples:
            for pid, (depth, _pss, uss, _threads) in sample.items():
                if depth >= 2 and uss:
                    last[pid] = uss
        return last


class RecordingPool:
    """A worker pool that keeps each job's peak (``WorkerPool.run``'s second value)."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.peaks: list[tuple[str, int]] = []

    async def run(self, function: Any, *args: object, **options: Any) -> tuple[Any, int]:
        value, peak = await self.pool.run(function, *args, **options)
        self.peaks.append((str(getattr(function, "name", function)), peak))
        return value, peak


@dataclass
class Measured:
    name: str
    jobs: list[tuple[str, int]] = field(default_factory=list)
    worker_uss: list[int] = field(default_factory=list)
    tree_pss: int = 0
    outcome: str = "ok"
    largest_candidate: int = 0
    candidates: int = 0
    seconds: float = 0.0


def analyze_bare(name: str, bare: Path, commit: str) -> Measured:
    """One analysis of ``bare``'s ``commit`` in this process, measured."""
    from clonegate._adapters.workers import run_pool

    measured = Measured(name)

    async def main() -> None:
        recording = RecordingPool(run_pool())
        analyzer = TestInventoryAnalyzer(pool=recording)  # type: ignore[arg-type]
        source = ClonedSource("file://" + name, bare, "main", commit, _now(), 0, False, None)
        # The zygote's start is not the analysis's: one job of nothing first.
        with TreeSampler(os.getpid()) as sampler:
            started = time.perf_counter()
            try:
                report = await analyzer.analyze(source)
                measured.candidates = len(report.inventory.files)
            except Exception as exc:
                measured.outcome = f"{type(exc).__name__}: {exc}"[:80]
            measured.seconds = time.perf_counter() - started
        measured.jobs = recording.peaks
        measured.worker_uss = [uss for uss, _clone in sampler.workers().values()]
        measured.tree_pss = max((sum(v[1] for v in s.values()) for s in sampler.samples), default=0)

    trio.run(main)
    measured.largest_candidate = _largest_blob(bare, commit)
    return measured


def _now() -> Any:
    from datetime import datetime

    return datetime.now(UTC)


def _largest_blob(bare: Path, commit: str) -> int:
    out = git("-C", str(bare), "ls-tree", "-r", "-l", commit)
    sizes = [int(line.split()[3]) for line in out.splitlines() if line.split()[3] != "-"]
    return max(sizes, default=0)


def _clone_bare(origin: str, target: Path) -> str:
    subprocess.run(["git", "clone", "-q", "--bare", origin, str(target)], check=True)
    return git("-C", str(target), "rev-parse", "HEAD").strip()


def corpus(work: Path) -> list[Measured]:
    results = []
    for bundle in sorted(CORPUS.glob("*.bundle")):
        bare = work / f"{bundle.stem}.git"
        commit = _clone_bare(str(bundle), bare)
        results.append(analyze_bare(bundle.stem, bare, commit))
        subprocess.run(["rm", "-rf", str(bare)], check=True)
    return results


def shapes(served: Path, work: Path) -> list[Measured]:
    _make_batches(served, None, False)
    results = []
    for name in SHAPES:
        bare = work / f"{name}.git"
        commit = _clone_bare(str(served / f"{name}.git"), bare)
        results.append(analyze_bare(f"shape: {name}", bare, commit))
        subprocess.run(["rm", "-rf", str(bare)], check=True)
    return results


def _statements(count: int) -> bytes:
    """A test file of ``count`` bare names, one a line: no punctuation at all."""
    return b"def test_one():\n    pass\n" + b"a\n" * count


def _parametrized(count: int) -> bytes:
    """A generated pytest file: one test over ``count`` cases in a literal list."""
    rows = b"".join(b'    ("case%07d", %d),\n' % (i, i) for i in range(count))
    head = b"import pytest\n\nCASES = [\n"
    tail = b"]\n\n@pytest.mark.parametrize('name,value', CASES)\ndef test_case(name, value):\n"
    return head + rows + tail + b"    assert value >= 0\n"


def _js_cases(count: int) -> bytes:
    """A generated jest file: one test over ``count`` rows of an array."""
    rows = b"".join(b"  [%d, %d],\n" % (i, i) for i in range(count))
    return b"const rows = [\n" + rows + b"];\ntest.each(rows)('row %i', (a, b) => {});\n"


HOSTILE: dict[str, Callable[[], bytes]] = {
    # 10 MiB is the file limit; 500,000 punctuation marks the parse limit.
    "python: 5,000,000 bare names (10 MiB, no punctuation)": lambda: _statements(5_000_000),
    "python: parametrize, 83,000 cases (498,000 marks)": lambda: _parametrized(83_000),
    "python: parametrize, 20,000 cases (a large real one)": lambda: _parametrized(20_000),
    "jest: test.each, 124,000 rows (496,000 marks)": lambda: _js_cases(124_000),
}


def hostile(work: Path) -> list[Measured]:
    results = []
    for index, (title, make) in enumerate(HOSTILE.items()):
        bare = work / f"hostile-{index}.git"
        git("init", "-q", "--bare", "-b", "main", str(bare))
        body = make()
        path = "tests/test_big.py" if title.startswith("python") else "test/big.test.js"
        extra = b'{"devDependencies": {"jest": "29"}}\n' if path.endswith(".js") else b""
        stream = (
            b"commit refs/heads/main\nmark :1\n"
            b"committer F <f@example.invalid> 1700000000 +0000\ndata 1\nc\n"
            + f"M 644 inline {path}\ndata {len(body)}\n".encode()
            + body
            + (
                f"\nM 644 inline package.json\ndata {len(extra)}\n".encode() + extra
                if extra
                else b""
            )
            + b"\n"
        )
        fast_import(bare, stream)
        commit = git("-C", str(bare), "rev-parse", "HEAD").strip()
        measured = analyze_bare(title, bare, commit)
        results.append(measured)
        subprocess.run(["rm", "-rf", str(bare)], check=True)
    return results


def cli(served: Path, work: Path) -> None:
    """``clonegate analyze --memory-budget off`` on each shape, its tree's PSS by part."""
    _make_batches(served, None, False)
    print(
        "\n| shape, 4 clones, -j 2, budget off | tree peak | parent | zygote | clones | analyses "
        "| clones at the tree's peak | analyses at it | one analysis worker, peak USS "
        "| idle at the end |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    with git_daemon(served) as daemon:
        for name in SHAPES:
            urls = [daemon.url(f"{name}-{i}") for i in range(4)]
            depth = "1" if name == "small" else "0"
            command = [
                sys.executable,
                "-m",
                "clonegate",
                "analyze",
                "--depth",
                depth,
                "-j",
                "2",
                "--memory-budget",
                "off",
                *urls,
            ]
            env = {**os.environ, "TMPDIR": str(work)}
            env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{ROOT / 'cli'}"
            process = subprocess.Popen(
                command, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            with TreeSampler(process.pid) as sampler:
                process.wait()
            kinds = sampler.workers()

            def part(
                sample: dict[int, tuple[int, int, int, int]],
                which: str,
                kinds: dict[int, tuple[int, bool]] = kinds,
            ) -> int:
                total = 0
                for pid, (depth_, pss, _uss, _thr) in sample.items():
                    kind = (
                        "parent"
                        if depth_ == 0
                        else "zygote"
                        if depth_ == 1
                        else "clones"
                        if kinds.get(pid, (0, False))[1]
                        else "analyses"
                    )
                    total += pss if kind == which else 0
                return total

            totals = [sum(v[1] for v in s.values()) for s in sampler.samples]
            at = sampler.samples[totals.index(max(totals))]
            peaks = {
                k: max(part(s, k) for s in sampler.samples)
                for k in ("parent", "zygote", "clones", "analyses")
            }
            analysis_uss = max((u for u, clone in kinds.values() if not clone), default=0)
            last = sampler.last_uss()
            idle = max((u for p, u in last.items() if not kinds[p][1]), default=0)
            print(
                f"| {name} | {max(totals) / MiB:.0f} | {peaks['parent'] / MiB:.0f} "
                f"| {peaks['zygote'] / MiB:.0f} | {peaks['clones'] / MiB:.0f} "
                f"| {peaks['analyses'] / MiB:.0f} | {part(at, 'clones') / MiB:.0f} "
                f"| {part(at, 'analyses') / MiB:.0f} | {analysis_uss / MiB:.1f} "
                f"| {idle / MiB:.1f} |"
            )


def _table(results: list[Measured]) -> None:
    print(
        "\n| repository | outcome | candidates found | largest file KiB | jobs | largest job "
        "peak MiB | largest worker USS MiB | tree PSS MiB | s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for m in results:
        peak = max((p for _, p in m.jobs), default=0)
        uss = max(m.worker_uss, default=0)
        print(
            f"| {m.name} | {m.outcome} | {m.candidates} | {m.largest_candidate // 1024} "
            f"| {len(m.jobs)} | {peak / MiB:.1f} | {uss / MiB:.1f} | {m.tree_pss / MiB:.0f} "
            f"| {m.seconds:.2f} |"
        )


def _distribution(title: str, results: list[Measured]) -> None:
    peaks = sorted((max((p for _, p in m.jobs), default=0), m.name) for m in results)
    if not peaks:
        return
    values = [p for p, _ in peaks]
    p95 = values[max(0, -(-95 * len(values) // 100) - 1)]  # nearest rank
    print(
        f"\n{title}: {len(values)} analyses; largest job peak per analysis, MiB: median "
        f"{statistics.median(values) / MiB:.1f}, p95 {p95 / MiB:.1f}, max "
        f"{values[-1] / MiB:.1f} ({peaks[-1][1]})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--only", choices=("corpus", "shapes", "hostile", "cli"))
    parser.add_argument("--cache", type=Path, help="bench_memory's repositories, kept here")
    args = parser.parse_args(argv)
    compile_sources()
    with tempfile.TemporaryDirectory() as tmp:
        served = args.cache or Path(tmp) / "served"
        served.mkdir(exist_ok=True)
        work = Path(tmp) / "work"
        work.mkdir()
        print(f"{os.cpu_count()} CPUs")
        parts: tuple[tuple[str, Callable[[], list[Measured]]], ...] = (
            ("corpus", lambda: corpus(work)),
            ("shapes", lambda: shapes(served, work)),
            ("hostile", lambda: hostile(work)),
        )
        for part, run in parts:
            if args.only in (None, part):
                results = run()
                _table(results)
                _distribution(part, results)
        if args.only in (None, "cli"):
            cli(served, work)
    return 0


if __name__ == "__main__":
    sys.exit(main())

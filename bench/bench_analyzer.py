"""Analysis time of a repository with 2,000 test files against the time to clone it.

    python bench/bench_analyzer.py            # the issue-4 benchmark (about a minute)
    python bench/bench_analyzer.py --quick    # 60 test files: a smoke test

The repository: 2,000 unique test files spread over pytest, jest, vitest (TypeScript),
Go, JUnit 5 and Rust, six tests each, plus 1,000 other files, served by loopback
`git daemon`. Measured in one run, best of ``--rounds``: the clone (clonegate's
default: shallow, bare), the analysis of that clone (one worker process, so one core),
and two analyses one after the other against two at once (do they use both cores?).
Target (issue 4): analysis at most 0.5x the clone.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import trio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clonegate import ClonedSource, DulwichVCS, TestInventoryAnalyzer  # noqa: E402
from tests.servers import git_daemon, make_test_suite_repo  # noqa: E402


async def timed_clone(url: str, work: Path) -> tuple[float, ClonedSource]:
    start = time.perf_counter()
    source = await DulwichVCS(work_dir=work).clone(url)
    return time.perf_counter() - start, source


async def git_clone(url: str, work: Path) -> float:
    target = work / f"git-{time.monotonic_ns()}"
    start = time.perf_counter()
    await trio.run_process(
        ["git", "clone", "-q", "--depth", "1", "--single-branch", url, str(target)]
    )
    elapsed = time.perf_counter() - start
    await trio.run_process(["rm", "-rf", str(target)])
    return elapsed


async def measure(url: str, work: Path, rounds: int) -> dict[str, float]:
    analyzer = TestInventoryAnalyzer()
    best = dict.fromkeys(
        ("clone", "git clone (with checkout)", "analysis", "two in a row", "two at once"),
        float("inf"),
    )
    _, warm = await timed_clone(url, work)  # start the worker processes
    await analyzer.analyze(warm)
    for _ in range(rounds):
        seconds, source = await timed_clone(url, work)
        best["clone"] = min(best["clone"], seconds)
        reference = await git_clone(url, work)
        best["git clone (with checkout)"] = min(best["git clone (with checkout)"], reference)
        start = time.perf_counter()
        report = await analyzer.analyze(source)
        best["analysis"] = min(best["analysis"], time.perf_counter() - start)
        start = time.perf_counter()
        for _ in range(2):
            await analyzer.analyze(source)
        best["two in a row"] = min(best["two in a row"], time.perf_counter() - start)
        start = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for _ in range(2):
                nursery.start_soon(analyzer.analyze, source)
        best["two at once"] = min(best["two at once"], time.perf_counter() - start)
        await source.aclose()
    best["test files"] = report.inventory.test_files
    best["tests"] = report.inventory.tests
    await warm.aclose()
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    files, rounds = (60, 1) if args.quick else (2000, args.rounds)
    with tempfile.TemporaryDirectory() as served:
        make_test_suite_repo(Path(served), "suite", test_files=files, other_files=files // 2)
        with git_daemon(Path(served)) as daemon:
            best = trio.run(measure, daemon.url("suite"), Path(served), rounds)
    ratio = best["analysis"] / best["clone"]
    print(f"{best['test files']:.0f} test files, {best['tests']:.0f} tests; best of {rounds}\n")
    print("| measure | seconds |")
    print("|---|---|")
    for name in ("clone", "git clone (with checkout)", "analysis", "two in a row", "two at once"):
        print(f"| {name} | {best[name]:.3f} |")
    print(f"\nanalysis / clone: {ratio:.2f}x (target at most 0.5x)")
    git_ratio = best["analysis"] / best["git clone (with checkout)"]
    print(f"analysis / git clone --depth 1 (with checkout): {git_ratio:.2f}x")
    print(f"files per second per core: {best['test files'] / best['analysis']:.0f}")
    print(f"two analyses at once vs in a row: {best['two at once'] / best['two in a row']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

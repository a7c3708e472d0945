"""Analysis time of a repository with 2,000 test files against the time to clone it.

    python bench/bench_analyzer.py            # the issue-4 benchmark (about a minute)
    python bench/bench_analyzer.py --quick    # 60 test files: a smoke test
    python bench/bench_analyzer.py --kinds kotlin-junit5,kotest,testng   # issue 40's
    python bench/bench_analyzer.py --kinds xctest,swift-testing          # issue 41 (Swift)
    python bench/bench_analyzer.py --kinds phpunit,pest                  # issue 41's PHP
    python bench/bench_analyzer.py --kinds ruby-rspec,ruby-minitest      # issue 41's Ruby
    python bench/bench_analyzer.py --kinds gtest,catch2   # issue 41 (C++)
    python bench/bench_analyzer.py --kinds doctest        # issue 41 (C++, doctest)
    python bench/bench_analyzer.py --kinds xunit   # issue 41's C#

The repository: 2,000 unique test files spread over pytest, jest, vitest (TypeScript),
Go, JUnit 5 and Rust, six tests each, plus 1,000 other files, served by loopback
`git daemon`. Measured in one run, best of ``--rounds``: the clone (clonegate's
default: shallow, bare), `git clone --depth 1` for reference, the analysis of that
clone on every CPU (the default) and in one process, and the floor: tree-sitter's and
``ast``'s parse of every candidate file and nothing else, on one core.
Target (issue 4): analysis at most 0.5x the clone.
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
import time
from pathlib import Path

import trio

from clonegate import ClonedSource, CloneSettings, DulwichVCS, TestInventoryAnalyzer
from clonegate._adapters.analysis.detect import language_of
from clonegate._adapters.analysis.scan import list_commit
from clonegate._adapters.analysis.syntax import kit
from clonegate._adapters.workers import default_worker_limiter
from tests.support.repos import DEFAULT_KINDS, make_test_suite_repo
from tests.support.servers import git_daemon


async def timed_clone(url: str, work: Path) -> tuple[float, ClonedSource]:
    start = time.perf_counter()
    source = await DulwichVCS(CloneSettings(work_dir=work)).clone(url)
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


def parse_only(repo: str, commit: str) -> float:
    """Seconds to parse every candidate file, as the analyzer does, without analyzing it."""
    from dulwich.repo import Repo

    listing = list_commit(repo, commit)
    with Repo(repo) as opened:
        store = opened.object_store
        data = [(path, store[sha].as_raw_string()) for path, sha in listing.candidates]  # type: ignore[index]
    # The parsers of the languages the files are in, built before the clock starts.
    languages = {language_of(path) for path, _ in data} - {"python", None}
    parsers = {lang: kit(lang, "(ERROR) @e") for lang in languages if lang is not None}
    start = time.perf_counter()
    for path, blob in data:
        language = language_of(path)
        if language == "python":
            ast.parse(blob)
        elif language is not None:
            parsers[language].parse(blob, tolerate_errors=language == "cpp")
    return time.perf_counter() - start


async def measure(url: str, work: Path, rounds: int) -> dict[str, float]:
    analyzer = TestInventoryAnalyzer()
    cpus = default_worker_limiter()
    all_cpus = cpus.total_tokens
    best = dict.fromkeys(
        ("clone", "git clone (with checkout)", "analysis", "analysis, one process", "parse only"),
        float("inf"),
    )
    _, warm = await timed_clone(url, work)  # start the worker processes
    await analyzer.analyze(warm)
    for _ in range(rounds):
        seconds, source = await timed_clone(url, work)
        best["clone"] = min(best["clone"], seconds)
        reference = await git_clone(url, work)
        best["git clone (with checkout)"] = min(best["git clone (with checkout)"], reference)
        for name, tokens in (("analysis", all_cpus), ("analysis, one process", 1)):
            cpus.total_tokens = tokens
            start = time.perf_counter()
            report = await analyzer.analyze(source)
            best[name] = min(best[name], time.perf_counter() - start)
        cpus.total_tokens = all_cpus
        floor = parse_only(str(source.path), source.commit)
        best["parse only"] = min(best["parse only"], floor)
        await source.aclose()
    best["test files"] = report.inventory.test_files
    best["tests"] = report.inventory.tests
    best["cpus"] = all_cpus
    await warm.aclose()
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--kinds",
        default=",".join(DEFAULT_KINDS),
        help="the test files' frameworks, comma-separated (tests/support/repos.py _TEMPLATES)",
    )
    args = parser.parse_args(argv)
    files, rounds = (60, 1) if args.quick else (2000, args.rounds)
    kinds = tuple(args.kinds.split(","))
    with tempfile.TemporaryDirectory() as served:
        make_test_suite_repo(
            Path(served), "suite", test_files=files, other_files=files // 2, kinds=kinds
        )
        with git_daemon(Path(served)) as daemon:
            best = trio.run(measure, daemon.url("suite"), Path(served), rounds)
    cpus = best["cpus"]
    print(
        f"{best['test files']:.0f} test files, {best['tests']:.0f} tests, {cpus:.0f} CPUs;", end=" "
    )
    print(f"best of {rounds}\n")
    print("| measure | seconds |")
    print("|---|---|")
    for name in ("clone", "git clone (with checkout)", "analysis", "analysis, one process"):
        print(f"| {name} | {best[name]:.3f} |")
    print(f"| parse only, one core (the floor) | {best['parse only']:.3f} |")
    clone, analysis = best["clone"], best["analysis"]
    print(f"\nanalysis / clone: {analysis / clone:.2f}x (target at most 0.5x)")
    git_ratio = analysis / best["git clone (with checkout)"]
    print(f"analysis / git clone --depth 1 (with checkout): {git_ratio:.2f}x")
    print(
        f"parse only, spread over {cpus:.0f} CPUs / clone: {best['parse only'] / cpus / clone:.2f}x"
    )
    print(f"all CPUs / one process: {analysis / best['analysis, one process']:.2f}x")
    files_per_core = best["test files"] / best["analysis, one process"]
    print(f"files per second per core: {files_per_core:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

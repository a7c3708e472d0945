"""A large run written into a real SQLite store through the store API, without cloning
anything: what ``bench_report.py`` draws (issue 44).

Repositories queue at the run's start for ``SLOTS`` clone slots, first come first
served; each waits for a free slot, sets up, clones, then is analyzed without its slot.
Some are throttled once (a failed attempt, a ``retry_wait`` without the slot, then the
queue again, behind those waiting), a few fail. Each clone slot is a sequence of
clones, so at most ``SLOTS`` hold one at any instant, as the gate guarantees, and none
idles while a repository is queued. The budget shrinks and grows, a host's limit changes;
a few URLs and test names are hostile (markup, an escape sequence). Earlier runs of the
same repositories give each a history. Seeded: the same arguments, the same store.

A run's ``started_at`` and ``finished_at`` are the store's clock when it begins and
ends; here that clock is the simulated one (the store's ``_now`` read while a run is
written), so every phase lies within its run, as in a run that happened.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trio

from clonegate import (
    AnalysisTotals,
    Inventory,
    RefInfo,
    RepositoryReport,
    RepositoryStatus,
    TestCase,
    TestFile,
    TestStatus,
    TestSuite,
    Timings,
)
from clonegate._adapters.store import sqlite as store_module
from clonegate._domain.retries import FailedAttempt
from clonegate.store import Phase, RunEvent, SQLiteStore, open_store

SLOTS = 8
HOSTS = 20
START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
# Framework, language, test file's name: the mix a corpus of public repositories shows.
FRAMEWORKS = (
    ("pytest", "python", "tests/test_{}.py"),
    ("jest", "javascript", "src/{}.test.js"),
    ("vitest", "typescript", "src/{}.test.ts"),
    ("go", "go", "pkg/{}_test.go"),
    ("junit5", "java", "src/test/java/{}Test.java"),
    ("rspec", "ruby", "spec/{}_spec.rb"),
    ("cargo", "rust", "tests/{}.rs"),
)
HOSTILE = ("<script>alert(1)</script>", "</svg><b>bold</b>", "\x1b[2J\x1b]0;title\x07")
STATUSES = (TestStatus.ACTIVE,) * 20 + (TestStatus.SKIPPED, TestStatus.TODO, TestStatus.XFAIL)
FAILURES = (
    ("clone", "not_found", "{}: repository not found"),
    ("clone", "timeout", "{}: the clone took longer than 600 s"),
    ("clone", "throttled", "{}: HTTP 429 Too Many Requests (retry after 30 s)"),
    ("analyze", "analysis_error", "{}: the analyzer failed: RecursionError"),
)


@dataclass(frozen=True)
class GeneratedRun:
    run_id: int
    repositories: int
    failed: int
    tests: int


def build(path: Path, repositories: int, history: int = 2, seed: int = 44) -> GeneratedRun:
    """Write ``history`` earlier runs then the run measured; the last one's figures."""

    async def write() -> GeneratedRun:
        async with open_store(path) as store:
            made = None
            for run_no in range(history + 1):
                made = await _one_run(store, repositories, run_no, random.Random(seed + run_no))
            assert made is not None
            return made

    return trio.run(write)


async def _one_run(
    store: SQLiteStore, repositories: int, run_no: int, rng: random.Random
) -> GeneratedRun:
    began = START + timedelta(days=run_no)
    options = {
        "clone_depth": 1,
        "incremental": False,
        "max_concurrent_clones": SLOTS,
        "memory_budget": "auto",
        "analyzer_version": "bench",
        "retries": 2,
        "repository_timeout": 900,
        "clone_timeout": 600,
    }
    ways = _schedule(repositories, began.timestamp(), rng)
    reports = [_report(i, phases, attempts, rng, run_no) for i, (phases, attempts) in ways]
    ended = max(phase.ended for report in reports for phase in report.phases)
    with _store_clock(began):
        run_id = await store.begin_run(options)
    await store.save_events(run_id, _events(began, ended, rng))
    for report in reports:
        await store.save(run_id, report.url, report)
    with _store_clock(ended + timedelta(seconds=1)):
        await store.finish_run(run_id)
    failed = sum(report.status is not RepositoryStatus.OK for report in reports)
    tests = sum(report.analysis.tests for report in reports if report.analysis)
    return GeneratedRun(run_id, repositories, failed, tests)


@contextmanager
def _store_clock(at: datetime) -> Iterator[None]:
    """The store's clock reads ``at`` meanwhile (its write thread reads the module's)."""
    real = store_module._now
    store_module._now = lambda: at.isoformat(timespec="microseconds")
    try:
        yield
    finally:
        store_module._now = real


def _events(began: datetime, ended: datetime, rng: random.Random) -> list[RunEvent]:
    """The limits when the run began, then six changes at instants within it."""
    at = began
    found = [
        RunEvent("clone_limit", at, SLOTS, "-j 8"),
        RunEvent("memory_budget", at, 12000, "auto: 75% of the 16000 MiB available"),
    ]
    budget = 12000
    for step in range(6):
        at = began + (ended - began) * (step + rng.random()) / 6
        shrunk = rng.random() < 0.5
        after = budget - 2000 if shrunk else budget + 1000
        why = "memory stalls 50%" if shrunk else "no stall for 60 s"
        found.append(RunEvent("memory_budget", at, after, f"{budget} -> {after} MiB: {why}"))
        budget = after
        host = f"git-host-{rng.randrange(HOSTS)}.example"
        found.append(RunEvent("host_limit", at, rng.randint(1, 4), host))
    return found


Way = tuple[list[Phase], list[FailedAttempt]]  # a repository's phases and failed attempts


def _schedule(count: int, began: float, rng: random.Random) -> list[tuple[int, Way]]:
    """Every repository's way through a gate of ``SLOTS`` clone slots, first come first
    served: all queued at ``began``; a throttled one gives its slot back, waits, and
    queues again behind those already waiting. No slot idles while one is queued."""
    ways: list[Way] = [([], []) for _ in range(count)]
    queue = [(began, index, 1) for index in range(count)]  # (queued at, index, attempt)
    slots = [began] * SLOTS  # when each slot is next free, as a heap
    while queue:
        ready, index, attempt = heapq.heappop(queue)
        phases, attempts = ways[index]
        start = max(heapq.heappop(slots), ready)
        setup_end = start + rng.uniform(0.02, 0.1)
        clone_end = setup_end + rng.lognormvariate(0.3, 0.8)
        heapq.heappush(slots, clone_end)
        phases += [
            _phase("waiting", ready, start, attempt),
            _phase("setup", start, setup_end, attempt),
            _phase("clone", setup_end, clone_end, attempt),
        ]
        if attempt == 1 and rng.random() < 0.08:  # throttled: tried again once
            waited = rng.uniform(1, 10)
            attempts.append(FailedAttempt("throttled", "HTTP 429 Too Many Requests", waited))
            phases.append(_phase("retry_wait", clone_end, clone_end + waited, 1))
            heapq.heappush(queue, (clone_end + waited, index, 2))
        else:
            phases.append(
                _phase("analysis", clone_end, clone_end + rng.lognormvariate(-1, 0.7), None)
            )
    return list(enumerate(ways))


def _report(
    index: int,
    phases: list[Phase],
    attempts: list[FailedAttempt],
    rng: random.Random,
    grown: int,
) -> RepositoryReport:
    """Repository ``index``'s report after ``phases``; ``grown``: tests added to each
    file since the first run."""
    # Every 331st from the 4th: each hostile name within the first 1,000 repositories.
    hostile = HOSTILE[index // 331 % len(HOSTILE)] if index % 331 == 3 else ""
    url = f"git://git-host-{index % HOSTS}.example/team-{index}/repo-{index}{hostile}.git"
    queued = phases[0].started
    timings = Timings(
        waited=sum(_seconds(p) for p in phases if p.name == "waiting"),
        clone=sum(_seconds(p) for p in phases if p.name == "clone"),
        analysis=_seconds(phases[-1]),
        setup=sum(_seconds(p) for p in phases if p.name == "setup"),
    )
    if rng.random() < 0.03:
        where, kind, message = FAILURES[index % len(FAILURES)]
        failure = RepositoryReport.failure(url, index, where, kind, message.format(url))
        kept = phases if where == "analyze" else phases[:-1]
        return replace(failure, phases=tuple(kept), attempts=tuple(attempts), timings=timings)
    inventory = _inventory(index, grown, rng, hostile)
    totals = AnalysisTotals(
        inventory.test_files,
        inventory.tests,
        inventory.by_framework(),
        inventory.by_language(),
        inventory.by_status(),
        0,
        inventory.test_files * 5,
        "bench",
    )
    ref = RefInfo("main", f"{index:08x}{grown:032x}", queued)
    return RepositoryReport(
        url,
        index,
        RepositoryStatus.OK,
        ref=ref,
        timings=timings,
        analysis=totals,
        inventory=inventory,
        attempts=tuple(attempts),
        phases=tuple(phases),
    )


def _inventory(index: int, grown: int, rng: random.Random, hostile: str) -> Inventory:
    framework, language, pattern = FRAMEWORKS[index % len(FRAMEWORKS)]
    files = []
    for file_no in range(rng.randint(1, 4)):
        count = rng.randint(1, 8) + grown  # a repository's tests grow from run to run
        tests = tuple(
            TestCase(f"test_{file_no}_{n}{hostile}", 10 + n, rng.choice(STATUSES))
            for n in range(count)
        )
        suite = TestSuite(f"Suite{file_no}", 1, tests=tests[: count // 2])
        files.append(
            TestFile(
                pattern.format(f"module_{file_no}"),
                framework,
                language,
                suites=(suite,),
                tests=tests[count // 2 :],
            )
        )
    return Inventory(files=tuple(files))


def _phase(name: str, started: float, ended: float, attempt: int | None) -> Phase:
    at = datetime.fromtimestamp
    return Phase(name, at(started, UTC), at(ended, UTC), attempt)


def _seconds(phase: Phase) -> float:
    return (phase.ended - phase.started).total_seconds()

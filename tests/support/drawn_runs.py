"""Runs made for the HTML report's tests (issue 44, ADR 0022): a store filled through
the store's API, as a run of ``count`` repositories over ``slots`` clone slots would
have left it, without cloning anything. Durations vary by index (deterministic);
every 50th repository is retried once, every 97th fails, hostile names where asked."""

from __future__ import annotations

import heapq
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trio

from clonegate import (
    AnalysisTotals,
    InvalidURLError,
    Inventory,
    RefInfo,
    RepositoryReport,
    RepositoryStatus,
    TestCase,
    TestFile,
    TestStatus,
    TestSuite,
    Timings,
    parse_repo_url,
)
from clonegate._domain.retries import FailedAttempt
from clonegate.store import Phase, RunEvent, open_store

# Phases start at the moment the run is made (its row's ``started_at``, the store's
# clock) and last minutes after it, a drawing's axis stretched to fit them.
START = datetime.now(UTC).replace(microsecond=0)
HOSTILE_NAMES = ("<script>alert(1)</script>", "</svg><b>x", "\x1b[2J\x1b]0;title\x07")


def inventory(index: int, hostile: bool) -> Inventory:
    name = HOSTILE_NAMES[index % 3] if hostile else f"test_{index}"
    suite = TestSuite("Suite", 1, tests=(TestCase(name, 2), TestCase("b", 3, TestStatus.SKIPPED)))
    return Inventory(files=(TestFile(f"tests/test_{index}.py", "pytest", "python", (suite,)),))


def _at(seconds: float) -> datetime:
    return START + timedelta(seconds=seconds)


def _report(index: int, begin: float, slot_free: float, hostile: bool) -> RepositoryReport:
    """Repository ``index``, queued at ``begin``, given a slot at ``slot_free``."""
    url = f"https://example.org/team/repo{index}.git"
    if hostile and index % 3 == 0:
        url = f"https://example.org/{HOSTILE_NAMES[(index // 3) % 3]}/r{index}"
    clone = 0.5 + (index * 7919 % 100) / 40
    phases = [Phase("waiting", _at(begin), _at(slot_free), 1)]
    now = slot_free
    attempts: tuple[FailedAttempt, ...] = ()
    if index % 50 == 7:  # retried once: a failed attempt, a wait, then the slot again
        phases += [Phase("setup", _at(now), _at(now + 0.05), 1)]
        phases += [Phase("clone", _at(now + 0.05), _at(now + 0.5), 1)]
        phases += [Phase("retry_wait", _at(now + 0.5), _at(now + 1.5), 1)]
        attempts = (FailedAttempt("throttled", "429 Too Many Requests", 1.0),)
        now += 1.5
        phases += [Phase("waiting", _at(now), _at(now), 2)]
    attempt = len(attempts) + 1
    phases += [Phase("setup", _at(now), _at(now + 0.05), attempt)]
    phases += [Phase("clone", _at(now + 0.05), _at(now + clone), attempt)]
    now += clone
    if index % 97 == 5:
        failed = RepositoryReport.failure(url, index, "clone", "not_found", f"{url}: not found")
        return replace(failed, phases=tuple(phases), attempts=attempts)
    phases += [Phase("analysis", _at(now), _at(now + 0.3))]
    inv = inventory(index, hostile)
    totals = AnalysisTotals(
        1, 2, {"pytest": 2}, {"python": 2}, {"active": 1, "skipped": 1}, 0, 9, "v"
    )
    return RepositoryReport(
        url=url,
        index=index,
        status=RepositoryStatus.OK,
        ref=RefInfo("main", f"{index:040x}", START),
        analysis=totals,
        inventory=inv,
        timings=Timings(waited=slot_free - begin, setup=0.05, clone=clone - 0.05, analysis=0.3),
        clone_memory=(20 + index % 30) * 2**20,
        attempts=attempts,
        phases=tuple(phases),
    )


def _key(url: str) -> str:
    """The store's key, as a run gives it: a line that is no URL keyed by itself."""
    try:
        return parse_repo_url(url).key
    except InvalidURLError:
        return url


def schedule(count: int, slots: int, hostile: bool = False) -> list[RepositoryReport]:
    """``count`` reports as a fair limit of ``slots`` would have run them: each in
    order of its line, in the first slot to come free."""
    free = [0.0] * slots
    reports = []
    for index in range(count):
        slot_free = heapq.heappop(free)
        report = _report(index, 0.0, slot_free, hostile)
        clone_end = max(p.ended for p in report.phases if p.name in ("setup", "clone"))
        heapq.heappush(free, (clone_end - START).total_seconds())
        reports.append(report)
    return reports


def save_run(path: Path, count: int, slots: int, *, hostile: bool = False) -> int:
    """A finished run of ``count`` repositories in the store at ``path``; its id."""
    reports = schedule(count, slots, hostile)
    events = [
        RunEvent("clone_limit", START, slots),
        RunEvent("memory_budget", START, 800, "auto: 75% of 1066 MiB available"),
        RunEvent("memory_budget", _at(5), 600, "shrink 800 -> 600 MiB: memory stalls"),
        RunEvent("host_limit", _at(3), 2, "example.org" if not hostile else HOSTILE_NAMES[1]),
    ]

    async def save() -> int:
        async with open_store(path) as store:
            run_id = await store.begin_run({"clone_depth": 1, "max_concurrent_clones": slots})
            for report in reports:
                await store.save(run_id, _key(report.url), report)
            await store.save_events(run_id, events)
            await store.finish_run(run_id)
            return run_id

    return trio.run(save)

"""A run drawn after the fact (issue 44, ADR 0020): each repository's phases on the wall
clock, the run's limit and budget changes, ``--memory-budget auto``'s size said
(the report command's own tests: tests/test_run_report.py).

The real run clones from a loopback HTTP git server that pushes back the first ref
listing of each repository (so each is cloned in two attempts) into a real SQLite
file. Instants are compared with each other only: ordered, and inside their run.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from clonegate import (
    AnalyzeUseCase,
    Batch,
    Event,
    EventKind,
    MemoryReading,
    RepositoryReport,
    RepositoryStatus,
    report_from_json,
    to_json,
    with_event_hook,
    with_max_concurrent_clones,
    with_memory_budget,
    with_result_store,
    with_retries,
)
from clonegate._domain.timeline import RunClock
from clonegate._usecase.run_log import RunLog
from clonegate.errors import ThrottledError
from clonegate.store import RunEvent, open_store
from clonegate_cli.app import app

from .support.fakes import FakeAnalyzer, FakeVCS, Readings, url
from .support.pushback import PushBack
from .support.repos import FixtureRepo, make_repo
from .support.servers import http_git_server
from .support.timelines import phase_names

MiB, GiB = 1 << 20, 1 << 30
TWO_TESTS = b"def test_one():\n    pass\n\n\ndef test_two():\n    pass\n"
# Every clone asked for too much: the controller shrinks the budget at each chance.
PRESSED = MemoryReading(limit=GiB, available=GiB // 100, pressure=0.5)


class FixedDelay:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    def delay(self, attempt: int, retry_after: float | None, deadline: float | None) -> float:
        return self.seconds


def _at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _assert_ordered_within(phases: list[dict[str, Any]], start: datetime, end: datetime) -> None:
    instants = [_at(p[edge]) for p in phases for edge in ("started", "ended")]
    assert instants == sorted(instants), phases  # each ends before the next begins
    assert start <= instants[0], (start, phases)
    assert instants[-1] <= end, (phases, end)


def test_a_real_run_is_kept_phase_by_phase_and_reported_whole(
    runner: CliRunner, tmpdir_env: Path
) -> None:
    db, written = tmpdir_env.parent / "runs.db", tmpdir_env.parent / "run.json"
    served = tmpdir_env.parent / "served"
    make_repo(served, "tested", files={"tests/test_a.py": TWO_TESTS})
    make_repo(served, "plain")
    pushback = PushBack(failures=1, status=503, retry_after="0")
    with http_git_server(served, wrap=pushback) as server:
        names = ["tested", "plain", "no-such-repo"]
        args = ["analyze", "-j", "2", "--db", str(db), "--format", "json"]
        analyzed = runner.invoke(app, [*args, *(server.url(n) for n in names)])
        # Again, incremental: nothing moved, each HEAD listed and its result reused.
        again = runner.invoke(app, [*args, "--incremental", *(server.url(n) for n in names)])
    assert analyzed.exit_code == 1, analyzed.output  # no-such-repo is not found
    assert again.exit_code == 1, again.output
    printed = json.loads(analyzed.stdout)["repositories"]
    reported = runner.invoke(
        app, ["report", "1", "--db", str(db), "--format", "json", "-o", str(written)]
    )
    assert reported.exit_code == 0, reported.output
    assert reported.stdout == ""
    document = json.loads(written.read_text())
    run = document["run"]
    start, end = _at(run["started_at"]), _at(run["finished_at"])
    assert [r["url"] for r in document["repositories"]] == [server.url(n) for n in names]
    for shown, stored in zip(printed, document["repositories"], strict=True):
        assert stored["phases"] == shown["phases"]  # what analyze printed is what was kept
        assert stored["attempts"] == shown["attempts"]
        _assert_ordered_within(stored["phases"], start, end)
    tested, plain, missing = document["repositories"]
    for cloned in (tested, plain):
        # The first listing pushed back: two attempts, the wait between them without a slot.
        names_of = phase_names(cloned["phases"])
        assert names_of[0] == "waiting#1", names_of
        assert names_of[-1] == "analysis", names_of
        assert names_of.index("clone#1") < names_of.index("retry_wait#1"), names_of
        assert names_of.index("retry_wait#1") < names_of.index("waiting#2"), names_of
        assert names_of.index("waiting#2") < names_of.index("clone#2"), names_of
        (retried,) = cloned["attempts"]
        (wait,) = [p for p in cloned["phases"] if p["name"] == "retry_wait"]
        slept = (_at(wait["ended"]) - _at(wait["started"])).total_seconds()
        # A sleep ends no sooner than asked; ``waited`` is to the millisecond, rounded.
        assert slept >= retried["waited"] - 0.0005
    assert missing["status"] == "failed"
    assert "analysis" not in phase_names(missing["phases"])
    # The tests counted by framework, language and status are the run's own.
    assert document["tests"] == [
        {"framework": "pytest", "language": "python", "status": "active", "tests": 2}
    ]
    assert run["summary"]["tests"] == 2
    # The clone limit the run began with, at its start.
    (limit,) = [e for e in document["events"] if e["kind"] == "clone_limit"]
    assert limit["value"] == 2
    assert start <= _at(limit["at"]) <= end
    assert run["options"]["max_concurrent_clones"] == 2
    assert run["options"]["retries"] == 2  # the default, which retried each listing once
    # The second run only listed each remote's HEAD: that, inside its own run.
    second = json.loads(runner.invoke(app, ["report", "--db", str(db), "--format", "json"]).stdout)
    assert second["run"]["id"] == 2
    start, end = _at(second["run"]["started_at"]), _at(second["run"]["finished_at"])
    assert [r["reused"] for r in second["repositories"]] == [True, True, False]
    for listed in second["repositories"]:
        assert phase_names(listed["phases"]) == ["listing"]
        _assert_ordered_within(listed["phases"], start, end)


def test_the_phases_of_a_retried_clone_are_its_attempts_and_waits(tmp_path: Path) -> None:
    # Virtual time: each clone takes 1 s, the wait after the throttled attempt 5 s.
    vcs = FakeVCS(tmp_path, delay=1.0)
    vcs.flaky[url(0)] = [ThrottledError(url(0), "HTTP 429: too many requests")]
    uc = AnalyzeUseCase(with_retries(1, FixedDelay(5.0)), vcs=vcs, analyzer=FakeAnalyzer())

    async def main() -> RepositoryReport:
        return await uc.execute(url(0))

    done = trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert done.status is RepositoryStatus.OK
    spans = [(p.name, p.attempt, p.ended - p.started) for p in done.phases]
    second = timedelta(seconds=1)
    assert spans == [
        ("waiting", 1, timedelta(0)),
        ("clone", 1, second),
        ("retry_wait", 1, 5 * second),
        ("waiting", 2, timedelta(0)),
        ("clone", 2, second),
        ("analysis", None, spans[-1][2]),  # it waits for an analysis process: any time
    ]
    assert all(a.ended == b.started for a, b in zip(done.phases, done.phases[1:], strict=False))
    assert done.phases[0].started.tzinfo is UTC
    # The JSON document gives them back as they were.
    assert report_from_json(json.loads(json.dumps(to_json(done)))).phases == done.phases


async def test_budget_changes_are_kept_with_the_run(
    tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    said: list[Event] = []
    cloning = trio.Event()

    def hook(event: Event) -> None:
        said.append(event)
        if sum(e.kind is EventKind.CLONING for e in said) == 3:
            cloning.set()

    vcs = FakeVCS(tmp_path, blocking=True)
    vcs.max_memory = 100 * MiB  # what each clone reserves: three fit in any size below
    urls = [url(i) for i in range(3)]
    async with open_store(tmp_path / "runs.db") as store:
        uc = AnalyzeUseCase(
            with_max_concurrent_clones(3),
            with_memory_budget("800M"),
            with_result_store(store),
            with_event_hook(hook),
            vcs=vcs,
            analyzer=FakeAnalyzer(),
            memory_sensor=Readings(PRESSED),
        )
        async with uc.analyze_many(urls) as batch, trio.open_nursery() as nursery:
            nursery.start_soon(_drain, batch)
            await cloning.wait()
            # Ten readings of a memory under pressure, one a second: the controller
            # shrinks at the first, then after each cooldown of three readings.
            for _ in range(10):
                await trio.testing.wait_all_tasks_blocked()
                mock_clock.jump(1.0)
            await trio.testing.wait_all_tasks_blocked()
            for each in urls:
                vcs.release[each].set()
        # The next run of the same use case begins where the controller left the budget.
        async with uc.analyze_many(urls[:1]) as again:
            await _drain(again)
        second, run_id = await store.run_ids()
        found = await store.run_report(run_id)
        next_run = await store.run_report(second)
    assert found is not None
    assert next_run is not None
    assert [(e.kind, e.value, e.detail) for e in next_run.events] == [
        ("clone_limit", 3, ""),
        ("memory_budget", 337, "of 800 MiB, as an earlier run left it"),
    ]
    decisions = [e for e in said if e.kind is EventKind.BUDGET]
    assert [e.detail.split(" MiB")[0] for e in decisions] == [
        "800 -> 600",
        "600 -> 450",
        "450 -> 337",
    ]
    assert [(e.kind, e.value) for e in found.events] == [
        ("clone_limit", 3),
        ("memory_budget", 800),
        ("memory_budget", 600),
        ("memory_budget", 450),
        ("memory_budget", 337),
    ]
    assert [e.detail.split(" ", 1)[0] for e in found.events[2:]] == ["shrink"] * 3
    assert found.events[1].detail == ""  # a budget given, not chosen
    assert batch.summary.memory_budget == 800
    instants = [e.at for e in found.events]
    assert instants == sorted(instants)


async def _drain(batch: Batch) -> None:
    async for _ in batch:
        pass


def test_auto_budget_is_said_at_v_and_in_the_json_summary(
    repo_root: Path, repos: dict[str, FixtureRepo], tmpdir_env: Path
) -> None:
    # A process of its own: logging is configured once per process.
    with http_git_server(repo_root) as server:
        args = ["analyze", "-v", "--memory-budget", "auto", "--format", "json"]
        result = subprocess.run(
            [sys.executable, "-m", "clonegate", *args, server.url("basic")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert result.returncode == 0, result.stderr
    chosen = json.loads(result.stdout)["summary"]["memory_budget"]
    said = re.search(
        r"memory budget: (\d+) MiB \(auto: \d+% of the (\d+) MiB available\)", result.stderr
    )
    assert said is not None, result.stderr
    # What the clones are admitted in: the budget less what idle workers may keep.
    kept = re.search(r"memory budget: (\d+) MiB for clones \((\d+) MiB kept for", result.stderr)
    assert kept is not None, result.stderr
    assert int(said.group(1)) - int(kept.group(2)) == int(kept.group(1)) == chosen > 0
    assert chosen <= int(said.group(2))


class EventsKept:
    """The part of a ReportStore that keeps events: what each run was given."""

    def __init__(self) -> None:
        self.kept: dict[int, list[RunEvent]] = {}

    async def save_events(self, run_id: int, events: Sequence[RunEvent]) -> None:
        await trio.lowlevel.checkpoint()
        self.kept.setdefault(run_id, []).extend(events)


async def test_runs_in_flight_share_the_limits_and_one_clock_reading(
    mock_clock: trio.testing.MockClock,  # trio's clock stands still: instants compare
) -> None:
    walls = iter([1000.0, 2000.0, 3000.0])  # each reading of the wall clock, in turn
    clock = RunClock(trio.current_time, wall=lambda: next(walls))
    store = EventsKept()
    log = RunLog(store, clock)  # type: ignore[arg-type]  # only save_events is asked
    log.open(1, [("clone_limit", 4, "")])
    log.open(2, [("clone_limit", 4, "")])  # overlaps run 1: the same reading
    log.note("memory_budget", 300, "shrink")  # the use case's limit: both runs'
    await log.flush(1)
    log.close(1)
    await log.flush(2)
    log.close(2)
    log.open(3, [])  # nothing in flight: the wall clock is read again
    assert [(e.kind, e.value) for e in store.kept[1]] == [
        ("clone_limit", 4),
        ("memory_budget", 300),
    ]
    assert store.kept[2] == store.kept[1]
    assert clock.now().timestamp() == pytest.approx(2000.0)

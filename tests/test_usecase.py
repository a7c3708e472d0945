"""AnalyzeUseCase with a fake VCS and analyzer that block on events and count what runs."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

import clonegate
from clonegate import (
    AnalysisReport,
    AnalysisSettings,
    AnalyzeUseCase,
    ClonedSource,
    CloneSettings,
    Credential,
    DulwichVCS,
    Event,
    EventKind,
    MemoryReading,
    ReportError,
    RepositoryReport,
    RepositoryStatus,
    TestInventoryAnalyzer,
    UseCaseConfig,
    open_analyzer,
    with_analysis_timeout,
    with_clone_timeout,
    with_clone_weight,
    with_event_hook,
    with_keep_clones,
    with_max_concurrent_clones,
    with_memory_budget,
    with_stuck_threshold,
    with_token,
)
from clonegate._app import compose
from clonegate._domain.repository import Repository
from clonegate._usecase.duplicates import DuplicateIndex
from clonegate.errors import RepositoryNotFoundError

from .support.fakes import FakeAnalyzer, FakeVCS, Readings, collect, url


@pytest.mark.parametrize("limit", [None, 1, 3])
async def test_never_more_clones_than_the_limit(
    limit: int | None, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, delay=1.0)
    options = [] if limit is None else [with_max_concurrent_clones(limit)]
    # Clones are kept: removing them runs in a thread, and the autojump clock would
    # count time passing while a thread works.
    keep = with_keep_clones()
    uc = AnalyzeUseCase(*options, keep, vcs=vcs, analyzer=FakeAnalyzer())
    async with uc.analyze_many([url(i) for i in range(10)]) as batch:
        reports = [r async for r in batch]
        finished = trio.current_time()
    expected = 2 if limit is None else limit
    assert vcs.peak == expected  # reached, never passed
    assert sorted(r.index for r in reports) == list(range(10))
    assert all(r.status is RepositoryStatus.OK for r in reports)
    # Ten one-second clones, `expected` at a time, back to back: no idle slot.
    assert finished == pytest.approx(-(-10 // expected))


async def test_slots_are_granted_in_fifo_order(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    queued: list[str] = []

    def hook(event: Event) -> None:
        if event.kind is EventKind.QUEUED:
            queued.append(event.url)

    uc = AnalyzeUseCase(
        with_max_concurrent_clones(1), with_event_hook(hook), vcs=vcs, analyzer=FakeAnalyzer()
    )
    urls = [url(i) for i in range(6)]
    async with uc.analyze_many(urls) as batch, trio.open_nursery() as nursery:

        async def drain() -> None:
            async for _ in batch:
                pass

        nursery.start_soon(drain)
        for _ in urls:
            await wait_all_tasks_blocked()
            running = [u for u in vcs.calls if not vcs.release[u].is_set()]
            assert running == [vcs.calls[-1]]  # exactly one clone at a time
            vcs.release[vcs.calls[-1]].set()
    assert vcs.calls == queued  # clones started in the order repositories reached the gate
    assert sorted(vcs.calls) == sorted(urls)


async def test_no_slot_is_held_during_analysis(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    analyzer = FakeAnalyzer(blocking=True)
    uc = AnalyzeUseCase(with_max_concurrent_clones(1), vcs=vcs, analyzer=analyzer)
    async with uc.analyze_many([url(0), url(1)]) as batch:
        await wait_all_tasks_blocked()
        # Both cloned, one slot: the first released its slot before being analyzed.
        assert len(vcs.calls) == 2
        assert analyzer.in_flight == 2
        assert uc.clone_gate_statistics().held == 0
        for u in (url(0), url(1)):
            analyzer.release[u].set()
        reports = [r async for r in batch]
    assert [r.status for r in reports] == [RepositoryStatus.OK] * 2


async def test_analyses_run_outside_the_clone_limit_with_no_limit_of_the_use_case(
    tmp_path: Path,
) -> None:
    # One analysis limit, the analyzer's (its worker processes, ADR 0008): the use case
    # adds none, so three analyses of a fake analyzer run at once.
    analyzer = FakeAnalyzer(blocking=True)
    uc = AnalyzeUseCase(with_max_concurrent_clones(1), vcs=FakeVCS(tmp_path), analyzer=analyzer)
    async with uc.analyze_many([url(i) for i in range(3)]) as batch:
        await wait_all_tasks_blocked()
        assert analyzer.in_flight == 3
        for u in list(analyzer.release):
            analyzer.release[u].set()
        reports = [r async for r in batch]
    assert len(reports) == 3


def test_the_use_case_builds_no_adapter_of_its_own(tmp_path: Path) -> None:
    # Its ports are arguments (ADR 0017): none is found in a class attribute.
    with pytest.raises(TypeError, match="vcs"):
        AnalyzeUseCase(with_max_concurrent_clones(1))  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="memory_sensor"):
        AnalyzeUseCase(with_memory_budget("1G"), vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())
    assert not hasattr(AnalyzeUseCase, "wiring")


@pytest.mark.parametrize(
    "name",
    [
        "with_clone_depth",
        "with_work_dir",
        "with_read_timeout",
        "with_connect_timeout",
        "with_ssh_command",
        "with_ca_bundle",
        "with_max_repo_size",
        "with_clone_memory_limit",
        "with_low_speed_limit",
        "with_max_concurrent_analyses",
        "with_analysis_memory_limit",
        "with_analysis_cache",
    ],
)
def test_no_option_configures_an_adapter(name: str) -> None:
    # Those are the adapters' settings now (CHANGELOG: CloneSettings, AnalysisSettings).
    assert not hasattr(clonegate, name)
    assert name not in clonegate.__all__


@pytest.mark.parametrize(
    ("settings", "field", "bad"),
    [
        (CloneSettings, "depth", 0),
        (CloneSettings, "read_timeout", 0),
        (CloneSettings, "connect_timeout", -1),
        (CloneSettings, "max_repo_size", 0),
        (CloneSettings, "max_memory", 0.5),
        (CloneSettings, "low_speed_limit", 0),
        (CloneSettings, "low_speed_time", 0),
        (CloneSettings, "ssh_command", " "),
        (AnalysisSettings, "processes", 0),
        (AnalysisSettings, "max_memory", 0),
    ],
)
def test_settings_refuse_bad_values_when_made(settings: Any, field: str, bad: object) -> None:
    with pytest.raises(ValueError, match=field):
        settings(**{field: bad})


async def test_open_analyzer_builds_every_collaborator_around_one_pool() -> None:
    clone, analysis = CloneSettings(depth=None, read_timeout=7), AnalysisSettings(processes=3)
    async with open_analyzer(with_keep_clones(), clone=clone, analysis=analysis) as uc:
        vcs, analyzer = uc._vcs, uc._analyzer
        assert isinstance(vcs, DulwichVCS)
        assert isinstance(analyzer, TestInventoryAnalyzer)
        # The pool it opened, passed to both: not the run's, found by no lookup.
        assert vcs._pool is analyzer._pool is not None
        # A kept clone gets its files; the rest is the settings as given.
        assert vcs.settings == dataclasses.replace(clone, checkout=True)
        assert analyzer.settings == analysis
        assert uc._controller is None  # no budget, no controller


async def test_deadline_while_queued_never_calls_the_vcs(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)  # the first clone never ends
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(1), with_analysis_timeout(5), vcs=vcs, analyzer=FakeAnalyzer()
    )
    reports = await collect(uc, [url(0), url(1)])
    assert vcs.calls == [url(0)]
    by_index = {r.index: r for r in reports}
    waiting = by_index[1]
    assert waiting.status is RepositoryStatus.TIMEOUT
    assert (waiting.timings.waited, waiting.timings.clone) == (5, 0)
    assert by_index[0].timings.clone == 5
    assert waiting.error is not None
    assert (waiting.error.phase, waiting.error.kind) == ("clone", "timeout")
    assert "while waiting for a clone slot" in waiting.error.message
    cloning = by_index[0]
    assert cloning.status is RepositoryStatus.TIMEOUT
    assert cloning.error is not None
    assert "while cloning" in cloning.error.message
    assert trio.current_time() == 5
    stats = uc.clone_gate_statistics()
    assert (stats.acquired, stats.released, stats.held, stats.failed) == (1, 1, 0, 1)


async def test_clone_timeout_is_a_clone_failure_caused_by_the_timeout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(with_clone_timeout(3), vcs=vcs, analyzer=FakeAnalyzer())
    report = await uc.execute(url(0))
    assert report.status is RepositoryStatus.TIMEOUT
    assert report.error is not None
    assert (report.error.phase, report.error.kind) == ("clone", "timeout")
    assert "the clone took longer than 3 s" in report.error.message
    assert report.timings.clone == 3


@pytest.mark.parametrize(("clone_seconds", "status"), [(2, "ok"), (5, "timeout")])
async def test_clone_timeout_starts_when_the_vcs_is_ready(
    clone_seconds: float,
    status: str,
    tmp_path: Path,
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Ten seconds of set-up (a worker starting on a busy machine), then the clone.
    vcs = FakeVCS(tmp_path, setup=10, delay=clone_seconds)
    uc = AnalyzeUseCase(
        with_clone_timeout(3),
        with_keep_clones(),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    report = await uc.execute(url(0))
    assert report.status == status
    assert report.timings.setup == 10  # reported on its own...
    assert report.timings.clone == min(clone_seconds, 3)  # ...and never counted as the clone


async def test_a_second_on_ready_does_not_move_the_clone_deadline(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, delay=2, readies=2)  # on_ready at 0 and at 2, done at 4
    uc = AnalyzeUseCase(with_clone_timeout(3), vcs=vcs, analyzer=FakeAnalyzer())
    report = await uc.execute(url(0))
    assert report.status is RepositoryStatus.TIMEOUT
    assert (report.timings.setup, report.timings.clone) == (0, 3)


async def test_a_deadline_during_set_up_is_reported_as_set_up(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, setup=10)  # the worker would take 10 s to start
    uc = AnalyzeUseCase(with_analysis_timeout(4), vcs=vcs, analyzer=FakeAnalyzer())
    report = await uc.execute(url(0))
    assert report.status is RepositoryStatus.TIMEOUT
    assert report.error is not None
    assert "while starting the clone" in report.error.message
    assert (report.timings.setup, report.timings.clone) == (4, 0)


async def test_deadline_while_analyzing_closes_the_clone(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    uc = AnalyzeUseCase(with_analysis_timeout(60), vcs=vcs, analyzer=FakeAnalyzer(blocking=True))
    report = await uc.execute(url(0))
    assert report.status is RepositoryStatus.TIMEOUT
    assert report.error is not None
    assert report.error.phase == "analyze"
    assert "while analyzing" in report.error.message
    assert not (tmp_path / "clone1").exists()


async def test_outer_cancellation_stops_everything(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    received = []
    with trio.CancelScope() as scope:
        async with uc.analyze_many([url(i) for i in range(5)]) as batch:
            await wait_all_tasks_blocked()
            assert len(vcs.calls) == 2
            scope.cancel()
            async for report in batch:
                received.append(report)
    assert scope.cancelled_caught
    assert received == []
    assert vcs.in_flight == 0
    stats = uc.clone_gate_statistics()
    assert (stats.held, stats.queued, stats.active) == (0, (), ())
    assert stats.acquired == stats.released == 2


async def test_leaving_the_batch_early_stops_the_rest(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    uc = AnalyzeUseCase(with_max_concurrent_clones(1), vcs=vcs, analyzer=FakeAnalyzer())
    async with uc.analyze_many(url(i) for i in range(1000)) as batch:
        async for _report in batch:
            break
    assert len(vcs.calls) < 10
    assert vcs.in_flight == 0


async def test_a_failing_clone_releases_its_slot_and_the_rest_finish(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    vcs.failures[url(0)] = RepositoryNotFoundError(url(0), "repository not found")
    uc = AnalyzeUseCase(with_max_concurrent_clones(1), vcs=vcs, analyzer=FakeAnalyzer())
    reports = {r.index: r for r in await collect(uc, [url(i) for i in range(4)])}
    failed = reports[0]
    assert failed.status is RepositoryStatus.FAILED
    assert failed.error is not None
    assert (failed.error.phase, failed.error.kind) == ("clone", "not_found")
    assert failed.error.message == f"{url(0)}: repository not found"
    assert all(reports[i].status is RepositoryStatus.OK for i in (1, 2, 3))
    stats = uc.clone_gate_statistics()
    assert (stats.acquired, stats.released, stats.done, stats.failed) == (4, 4, 3, 1)


async def test_a_failing_analysis_fails_only_its_repository(tmp_path: Path) -> None:
    class Exploding(FakeAnalyzer):
        async def analyze(self, source: ClonedSource) -> AnalysisReport:
            if source.url == url(1):
                raise RuntimeError("parser crashed")
            return await super().analyze(source)

    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=Exploding())
    reports = {r.index: r for r in await collect(uc, [url(0), url(1), url(2)])}
    broken = reports[1]
    assert broken.status is RepositoryStatus.FAILED
    assert broken.error is not None
    assert (broken.error.phase, broken.error.kind) == ("analyze", "analysis_error")
    assert "RuntimeError: parser crashed" in broken.error.message
    assert reports[0].status is reports[2].status is RepositoryStatus.OK
    assert list(tmp_path.iterdir()) == []  # every clone removed, the failed one too


async def test_duplicates_are_cloned_once_and_reported_for_every_line(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    uc = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    urls = [
        "https://Git.Example/org/repo0.git",
        "HTTPS://git.example/org/repo0/",
        "https://git.example/org/repo0",
        "https://git.example/org/repo1",
    ]
    async with uc.analyze_many(urls) as batch:
        reports = {r.index: r async for r in batch}
        summary = batch.summary
    assert len(vcs.calls) == 2
    first = reports[0]
    assert first.inventory is not None
    assert first.duplicate_of is None
    for i in (1, 2):
        assert reports[i].duplicate_of == 0
        assert reports[i].status is RepositoryStatus.OK
        # The details stay with the first report: memory stays flat in the number of URLs.
        assert reports[i].analysis is None
        assert reports[i].inventory is None
    assert reports[1].url == "https://git.example/org/repo0/"
    # Tests are summed over distinct repositories: 2 repositories x 2 tests.
    assert (summary.repositories, summary.ok, summary.duplicates, summary.tests) == (4, 4, 2, 4)


async def test_invalid_urls_and_impossible_weights_fail_without_cloning(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(10),
        with_clone_weight(lambda u: 11 if "heavy" in u else 1),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    reports = {
        r.index: r for r in await collect(uc, ["ftp://x/y", "https://x/heavy.git", url(0), ""])
    }
    assert vcs.calls == [url(0)]
    for i, kind, words in (
        (0, "invalid_url", "unsupported scheme"),
        (1, "invalid_weight", "exceeds the clone limit 10"),
        (3, "invalid_url", "empty"),
    ):
        error = reports[i].error
        assert error is not None
        assert (error.phase, error.kind) == ("clone", kind)
        assert words in error.message


async def test_weights_budget_the_gate(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, delay=1)
    sizes = {url(0): 600, url(1): 600, url(2): 900, url(3): 100}
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(1024),
        with_clone_weight(sizes.__getitem__),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    await collect(uc, list(sizes))
    # FIFO by weight: 600 + 600 > 1024, so the second 600 waits for the first, and the
    # 100 waits behind them although it would fit (no barging); then 900 + 100 fit.
    assert vcs.started == {url(0): 0, url(1): 1, url(2): 2, url(3): 2}
    assert vcs.peak == 2


async def test_a_token_reaches_the_vcs_only_for_its_own_host(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    uc = AnalyzeUseCase(
        with_token("s3cr3t", "git.example"),
        with_token("0ther", "git.example:8443"),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    urls = [
        "https://git.example/org/a.git",  # its host: the token
        "https://GIT.example:443/org/b.git",  # the same origin, spelled otherwise
        "https://git.example:8443/org/c.git",  # another port: that port's token
        "https://user:pw@git.example/org/d.git",  # user-info in the URL wins
        "http://git.example/org/e.git",  # no credential over plain http
        "git://git.example/org/f.git",
        "https://other.example/org/g.git",  # a host the user did not name
        "https://git.example.evil/org/h.git",
    ]
    reports = await collect(uc, urls)
    given = dict(zip(vcs.calls, vcs.credentials, strict=True))
    secrets = {url: c.password if c else None for url, c in given.items()}
    assert secrets == dict(zip(urls, ["s3cr3t", "s3cr3t", "0ther", *[None] * 5], strict=True))
    assert {r.index: r.url for r in reports}[3] == "https://***@git.example/org/d.git"
    for text in (repr(uc.config), repr(reports), repr(vcs.credentials)):
        assert "s3cr3t" not in text
        assert "pw@" not in text


async def test_events_statistics_and_stuck_warning(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[tuple[EventKind, int]] = []
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(1),
        with_stuck_threshold(30),
        with_event_hook(lambda e: events.append((e.kind, e.index))),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    async with uc.analyze_many([url(0), url(1)]) as batch:
        await trio.sleep(45)
        stats = uc.clone_gate_statistics()
        assert [(e.index, e.seconds) for e in stats.active] == [(0, 45)]
        assert [(e.index, e.seconds) for e in stats.queued] == [(1, 45)]
        assert stats.acquired == stats.released + len(stats.active)
        assert (EventKind.STUCK, 0) in events
        assert "has run for more than 30 s" in caplog.text
        vcs.release[url(0)].set()
        vcs.release[url(1)].set()
        reports = [r async for r in batch]
    assert len(reports) == 2
    first = [kind for kind, index in events if index == 0]
    assert first == [
        EventKind.QUEUED,
        EventKind.CLONING,
        EventKind.STUCK,
        EventKind.CLONED,
        EventKind.ANALYZING,
        EventKind.DONE,
    ]
    stats = uc.clone_gate_statistics()
    assert (stats.acquired, stats.released, stats.done) == (2, 2, 2)


async def test_a_session_warns_of_a_clone_stuck_past_the_threshold(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    # How a cluster worker runs its jobs: execute() calls inside one session().
    events: list[tuple[EventKind, int]] = []
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(
        with_stuck_threshold(30),
        with_event_hook(lambda e: events.append((e.kind, e.index))),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    reports: list[RepositoryReport] = []

    async def job(index: int) -> None:
        reports.append(await uc.execute(url(index), index=index))

    async with uc.session(), trio.open_nursery() as nursery:
        nursery.start_soon(job, 7)
        await trio.sleep(29)
        assert (EventKind.STUCK, 7) not in events
        await trio.sleep(2)  # the watchdog looks once a second
        assert [e.index for e in uc.clone_gate_statistics().active] == [7]
        assert (EventKind.STUCK, 7) in events
        assert "has run for more than 30 s" in caplog.text
        vcs.release[url(7)].set()
    assert [r.status for r in reports] == [RepositoryStatus.OK]
    assert [kind for kind, index in events if index == 7] == [
        EventKind.QUEUED,
        EventKind.CLONING,
        EventKind.STUCK,
        EventKind.CLONED,
        EventKind.ANALYZING,
        EventKind.DONE,
    ]


async def test_a_session_runs_the_budget_controller_while_it_lasts(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    gib = 1 << 30
    pressed = MemoryReading(limit=4 * gib, available=3 * gib, pressure=0.30)
    calm = MemoryReading(limit=4 * gib, available=3 * gib, pressure=0.0)
    sensor = Readings(pressed)
    budget: list[Event] = []
    uc = AnalyzeUseCase(
        with_memory_budget("400M"),
        with_event_hook(lambda e: budget.append(e) if e.kind is EventKind.BUDGET else None),
        vcs=FakeVCS(tmp_path),
        analyzer=FakeAnalyzer(),
        memory_sensor=sensor,
    )
    async with uc.session():
        await trio.sleep(1.5)  # one reading a second; then three readings of cooldown
        assert [(e.status, e.detail.split(":")[0]) for e in budget] == [
            ("shrink", "400 -> 300 MiB")
        ]
        assert uc.clone_gate_statistics().memory_size == 300
    reads = sensor.reads
    await trio.sleep(60)
    assert sensor.reads == reads  # the controller ended with the block
    # The next session's controller grows the gate back up to the budget configured,
    # not to the size the last one left, and no further.
    sensor.reading = calm
    async with uc.session():
        await trio.sleep(60)
    assert [e.status for e in budget] == ["shrink", "grow", "grow"]
    assert budget[-1].detail.startswith("350 -> 400 MiB")
    assert uc.clone_gate_statistics().memory_size == 400


async def test_an_exception_in_a_session_comes_out_as_itself(tmp_path: Path) -> None:
    # The watchdog's and the worker pool's nurseries must not wrap the caller's error.
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())

    async def fail_inside() -> None:
        async with uc.session():
            report = await uc.execute(url(1), index=1)
            raise KeyError(report.status.value)

    with pytest.raises(KeyError) as caught:
        await fail_inside()
    assert caught.value.args == ("ok",)


async def test_a_session_cancelled_from_outside_ends_quietly(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    with trio.move_on_after(5) as scope:
        async with uc.session():
            await uc.execute(url(2), index=2)  # blocks until cancelled
    assert scope.cancelled_caught
    assert uc.clone_gate_statistics().active == ()


def _hook(event: Event) -> None:
    pass


@pytest.mark.parametrize(
    ("option", "bad", "good", "field"),
    [
        (with_max_concurrent_clones, 0, 5, "max_concurrent_clones"),
        (with_max_concurrent_clones, -1, 5, "max_concurrent_clones"),
        (with_max_concurrent_clones, True, 5, "max_concurrent_clones"),
        (with_max_concurrent_clones, "2", 5, "max_concurrent_clones"),
        (with_analysis_timeout, 0, 7.5, "analysis_timeout"),
        (with_analysis_timeout, -5, 7.5, "analysis_timeout"),
        (with_clone_timeout, 0, 4, "clone_timeout"),
        (with_stuck_threshold, 0, 12, "stuck_threshold"),
        (with_clone_weight, 3, len, "clone_weight"),
        (with_event_hook, None, _hook, "event_hook"),
    ],
)
def test_options_refuse_bad_values_and_apply_good_ones(
    option: Callable[[object], Callable[[UseCaseConfig], UseCaseConfig]],
    bad: object,
    good: object,
    field: str,
) -> None:
    with pytest.raises(ValueError, match=r"must|callable|function"):
        option(bad)
    default = UseCaseConfig()
    assert getattr(default, field) != good
    assert getattr(option(good)(default), field) == good


def test_defaults() -> None:
    uc = compose(pool=None)  # no option at all: every value below is the default
    config, vcs, analyzer = uc.config, uc._vcs, uc._analyzer
    assert isinstance(vcs, DulwichVCS)
    assert isinstance(analyzer, TestInventoryAnalyzer)
    assert config.max_concurrent_clones == 2  # seed 004's default
    assert config.analysis_timeout == 15 * 60
    assert config.clone_timeout is None  # only the repository timeout applies
    assert vcs.depth == 1
    assert (vcs.settings.work_dir, vcs.settings.keep_in, config.keep_clones) == (None, None, False)
    assert config.credentials == ()
    assert analyzer.processes is None  # one analysis process per CPU
    assert (vcs.settings.read_timeout, vcs.settings.connect_timeout) == (120, 30)
    assert config.clone_weight("https://x/y.git") == 1
    assert uc.clone_gate_statistics().size == 2


def test_options_override_the_defaults() -> None:
    uc = compose(
        with_keep_clones(), clone=CloneSettings(keep_in=Path("/tmp"), depth=None), pool=None
    )
    vcs = uc._vcs
    assert isinstance(vcs, DulwichVCS)
    assert (vcs.settings.keep_in, vcs.settings.checkout, uc.config.keep_clones) == (
        Path("/tmp"),
        True,
        True,
    )
    assert vcs.depth is None


def test_logging_is_quiet_by_default() -> None:
    assert logging.getLogger("clonegate").level == logging.NOTSET


async def test_one_repository_breaking_a_contract_fails_only_itself(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Rude(FakeVCS):
        async def clone(
            self,
            url: str,
            destination: Path | None = None,
            *,
            credential: Credential | None = None,
            on_ready: Callable[[], object] | None = None,
            on_memory: Callable[[int], Awaitable[object]] | None = None,
            on_progress: Callable[[int], object] | None = None,
            keep_worker: bool = False,
        ) -> ClonedSource:
            if url == url_of(1):
                raise KeyError("not a CloneError")
            return await super().clone(url, destination, credential=credential, on_ready=on_ready)

    def url_of(i: int) -> str:
        return url(i)

    def weigh(u: str) -> int:
        if u == url(2):
            raise ZeroDivisionError("bad weight")
        return 1

    def hook(event: Event) -> None:
        if event.kind is EventKind.CLONED:
            raise RuntimeError("progress display bug")

    uc = AnalyzeUseCase(
        with_clone_weight(weigh), with_event_hook(hook), vcs=Rude(tmp_path), analyzer=FakeAnalyzer()
    )
    reports = {r.index: r for r in await collect(uc, [url(i) for i in range(4)])}
    assert reports[0].status is reports[3].status is RepositoryStatus.OK
    assert reports[1].error is not None
    assert (reports[1].error.phase, reports[1].error.kind) == ("clone", "clone_error")
    assert reports[2].error is not None
    assert reports[2].error.kind == "invalid_weight"
    assert "ZeroDivisionError" in reports[2].error.message
    assert "the event hook failed" in caplog.text
    assert list(tmp_path.iterdir()) == []  # no clone left behind by the hook's failure


async def test_a_duplicate_of_a_failed_repository_carries_its_error(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    vcs.failures[url(0)] = RepositoryNotFoundError(url(0), "repository not found")
    uc = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    # Line 1 names repository 0 while it is in flight. More repositories than the
    # batch keeps in flight (at most 1024) come next, so the last line, repository 0
    # again, is read only once one has finished: repository 0, the only one let go.
    others = [url(i) for i in range(2, 1100)]
    async with uc.analyze_many(iter([url(0), url(0), *others, url(0)])) as batch:
        await wait_all_tasks_blocked()
        vcs.release[url(0)].set()
        await wait_all_tasks_blocked()
        for other in others:
            vcs.release[other].set()
        reports = {r.index: r async for r in batch}
    first, waiting, after = reports[0], reports[1], reports[len(reports) - 1]
    assert first.error is not None
    assert first.error.kind == "not_found"
    for duplicate in (waiting, after):
        assert duplicate.duplicate_of == 0
        assert duplicate.status is RepositoryStatus.FAILED
        assert duplicate.error == first.error


async def test_waiting_duplicates_do_not_starve_other_repositories(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(with_max_concurrent_clones(2), vcs=vcs, analyzer=FakeAnalyzer())
    urls = [url(0)] * 20 + [url(1), url(2)]
    async with uc.analyze_many(urls) as batch:
        await wait_all_tasks_blocked()
        assert sorted(vcs.calls) == [url(0), url(1)]  # both slots busy despite the duplicates
        for u in (url(0), url(1), url(2)):
            vcs.release[u].set()
        reports = [r async for r in batch]
    assert len(reports) == 22
    assert sum(r.duplicate_of == 0 for r in reports) == 19


async def test_execute_is_a_checkpoint_even_for_an_invalid_url(tmp_path: Path) -> None:
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())
    with trio.CancelScope() as scope:
        scope.cancel()
        await uc.execute("ftp://example.com/x")
    assert scope.cancelled_caught


async def test_an_error_in_the_callers_loop_comes_out_unwrapped(tmp_path: Path) -> None:
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())

    async def consume_into_a_closed_pipe() -> None:
        async with uc.analyze_many([url(0), url(1)]) as batch:
            async for _ in batch:
                raise BrokenPipeError

    with pytest.raises(BrokenPipeError):
        await consume_into_a_closed_pipe()


def test_the_duplicate_index_remembers_first_lines_and_who_waits() -> None:
    index = DuplicateIndex()
    first, same, other = (
        Repository.of(u).digest
        for u in ("https://git.example/org/a.git", "HTTPS://Git.Example/org/a/", url(9))
    )
    assert first == same != other
    assert Repository.of("not a url").digest == b""  # never a duplicate of anything
    assert index.first_of(first) is None
    index.start(first, 0)
    assert index.first_of(same) == (0, None)  # in flight
    index.wait_for(0, 3, "https://git.example/org/a/")
    index.start(other, 1)
    failed = (RepositoryStatus.FAILED, ReportError("clone", "not_found", "gone"))
    assert index.finish(first, 0, failed) == [(3, "https://git.example/org/a/", None)]
    assert index.first_of(first) == (0, failed)
    assert index.finish(other, 1, (RepositoryStatus.OK, None)) == []
    assert index.finish(b"", 2, (RepositoryStatus.OK, None)) == []

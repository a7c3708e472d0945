"""The analysis's own time limit, and waits for an analysis process that count against
no repository (issue 38): WorkClock, and the use case with analyzers that share CPUs."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from clonegate import (
    AnalysisError,
    AnalysisReport,
    AnalysisSettings,
    AnalyzeUseCase,
    ClonedSource,
    Event,
    EventKind,
    Option,
    RepositoryReport,
    RepositoryStatus,
    TestInventoryAnalyzer,
    UseCaseConfig,
    with_analysis_time_limit,
    with_analysis_timeout,
    with_event_hook,
    with_global_limiter,
    with_keep_clones,
    with_max_concurrent_clones,
    with_repository_timeout,
)
from clonegate._app import compose
from clonegate._domain.work_clock import WorkClock, holding_slot, waiting_for_slot

from .support.fakes import FakeAnalyzer, FakeVCS, collect, url


async def test_a_limit_expires_after_its_seconds(autojump_clock: trio.testing.MockClock) -> None:
    clock = WorkClock()
    with clock.limit(10) as scope:
        await trio.sleep(60)
    assert scope.cancelled_caught
    assert trio.current_time() == 10


async def test_a_limit_stops_while_all_the_work_waits(
    autojump_clock: trio.testing.MockClock,
) -> None:
    clock = WorkClock()
    with clock.limit(10) as scope:
        await trio.sleep(4)
        with clock.waiting():
            await trio.sleep(100)  # a wait for a slot: not the repository's time
        await trio.sleep(60)
    assert scope.cancelled_caught
    assert trio.current_time() == 110  # 4 s before the wait, 6 s after it


async def test_a_wait_beside_work_counts(autojump_clock: trio.testing.MockClock) -> None:
    clock = WorkClock()

    async def waits() -> None:
        with clock.waiting():
            await trio.sleep_forever()

    with clock.limit(10) as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(waits)
            with clock.holding():  # another part works: the repository's own pace
                await trio.sleep(60)
    assert scope.cancelled_caught
    assert trio.current_time() == 10


async def test_a_limit_made_while_stopped_starts_when_the_work_does(
    autojump_clock: trio.testing.MockClock,
) -> None:
    clock = WorkClock()
    with clock.waiting(), clock.limit(5) as scope:
        await trio.sleep(50)
    assert not scope.cancelled_caught
    with clock.limit(5) as scope:
        await trio.sleep(50)
    assert scope.cancelled_caught
    assert trio.current_time() == 55


async def test_a_wait_cancelled_leaves_the_limits_running(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Ctrl-C (or a part that failed) cancels a wait for a slot: the repository's
    # limits must not stay stopped for good.
    clock = WorkClock()
    with clock.limit(10) as scope:
        with trio.move_on_after(100):
            with clock.waiting():
                await trio.sleep_forever()
        assert not clock.stopped
        await trio.sleep(60)
    assert scope.cancelled_caught
    assert trio.current_time() == 110


async def test_marks_outside_any_clock_do_nothing() -> None:
    with waiting_for_slot(), holding_slot():
        await trio.lowlevel.checkpoint()


class SharedCpus(FakeAnalyzer):
    """Analyses that wait for one of ``cpus`` processes, as the default analyzer's do,
    and mark the wait; a ``hostile`` repository's analysis never ends."""

    def __init__(self, cpus: int, hostile: set[str]) -> None:
        super().__init__()
        self.cpus = trio.CapacityLimiter(cpus)
        self.hostile = hostile
        self.holding: list[str] = []

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        with waiting_for_slot():
            await self.cpus.acquire()
        try:
            with holding_slot():
                self.holding.append(source.url)
                if source.url in self.hostile:
                    await trio.sleep_forever()
                return await super().analyze(source)
        finally:
            self.cpus.release()


async def _plain_last(
    uc: AnalyzeUseCase, vcs: FakeVCS, analyzer: SharedCpus, plain: str
) -> dict[str, RepositoryReport]:
    """Every hostile repository cloned and holding or queued for a CPU, then the plain one."""
    urls = [*sorted(analyzer.hostile), plain]
    reports: list[RepositoryReport] = []

    async def run() -> None:
        reports.extend(await collect(uc, urls))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        await wait_all_tasks_blocked()
        for hostile in analyzer.hostile:
            vcs.release[hostile].set()
        await wait_all_tasks_blocked()
        assert len(analyzer.holding) == analyzer.cpus.total_tokens  # every CPU held
        assert set(analyzer.holding) <= analyzer.hostile
        vcs.release[plain].set()
    return {r.url: r for r in reports}


async def test_a_plain_repository_beside_two_hostile_ones_finishes_ok(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # Issue 38's case: -j 2 --timeout 45, two analyses that never end on two CPUs.
    hostile, plain = {url(1), url(2)}, url(3)
    events: list[Event] = []
    vcs, analyzer = FakeVCS(tmp_path, blocking=True), SharedCpus(2, hostile)
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(3),
        with_repository_timeout(45),
        with_event_hook(events.append),
        with_keep_clones(),  # removing a clone runs in a thread: the mock clock would jump
        vcs=vcs,
        analyzer=analyzer,
    )
    reports = await _plain_last(uc, vcs, analyzer, plain)
    done = {e.url: (at, e.status) for at, e in enumerate(events) if e.kind is EventKind.DONE}
    analyzing = {e.url: at for at, e in enumerate(events) if e.kind is EventKind.ANALYZING}
    # The hostile ones end at their own deadline; only then does the plain one, which
    # was analyzing (queued for a CPU) before, get a CPU, having waited 45 s that
    # were not its own.
    assert [done[name][1] for name in sorted(hostile)] == ["timeout", "timeout"]
    assert analyzing[plain] < min(done[name][0] for name in hostile) < done[plain][0]
    assert done[plain][1] == "ok"
    assert reports[plain].status is RepositoryStatus.OK
    for name in hostile:
        error = reports[name].error
        assert error is not None
        assert (error.phase, error.kind) == ("analyze", "timeout")
        assert "45 s repository timeout (while analyzing)" in error.message


async def test_the_analysis_time_limit_frees_the_cpus_for_every_queued_repository(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # Four hostile analyses on two CPUs: two of them and the plain repository wait
    # 30 s and 60 s for a CPU, longer than the 45 s repository timeout.
    hostile, plain = {url(i) for i in range(1, 5)}, url(5)
    vcs, analyzer = FakeVCS(tmp_path, blocking=True), SharedCpus(2, hostile)
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(5),
        with_analysis_timeout(45),  # the repository's deadline, by its Go name
        with_analysis_time_limit(30),
        with_keep_clones(),
        vcs=vcs,
        analyzer=analyzer,
    )
    reports = await _plain_last(uc, vcs, analyzer, plain)
    assert reports[plain].status is RepositoryStatus.OK
    assert trio.current_time() == 60
    for name in hostile:
        report = reports[name]
        assert report.status is RepositoryStatus.TIMEOUT
        assert report.error is not None
        assert (report.error.phase, report.error.kind) == ("analyze", "timeout")
        reason = "the analysis ran for longer than its 30 s time limit"
        assert report.error.message == f"{name}: {reason}"


async def test_an_analyzer_that_marks_nothing_is_timed_throughout(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    uc = AnalyzeUseCase(
        with_analysis_time_limit(30), vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer(blocking=True)
    )
    report = await uc.execute(url(0))
    assert report.status is RepositoryStatus.TIMEOUT
    assert report.error is not None
    assert (report.error.phase, report.error.kind) == ("analyze", "timeout")
    assert report.timings.analysis == 30


class Failing(FakeAnalyzer):
    def __init__(self, exc: Exception) -> None:
        super().__init__()
        self.exc = exc

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        await trio.lowlevel.checkpoint()
        raise self.exc


async def test_what_a_repository_did_to_its_analysis_is_its_report_and_no_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="clonegate")
    failure = AnalysisError("out_of_memory", "the analysis needed more than its 8 MiB memory cap")
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=Failing(failure))
    report = await uc.execute(url(0))
    assert report.status is RepositoryStatus.FAILED
    assert report.error is not None
    assert (report.error.phase, report.error.kind) == ("analyze", "out_of_memory")
    assert report.error.message == f"{url(0)}: the analysis needed more than its 8 MiB memory cap"
    assert caplog.records == []


@pytest.mark.parametrize("verbose", [False, True])
async def test_a_bug_in_an_analyzer_is_one_line_with_its_traceback_only_when_verbose(
    verbose: bool, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO if verbose else logging.WARNING, logger="clonegate")
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=Failing(KeyError("files")))
    report = await uc.execute(url(0))
    assert report.error is not None
    assert report.error.kind == "analysis_error"
    (record,) = caplog.records
    assert record.levelno == logging.WARNING
    assert record.getMessage() == f"analysis failed: {url(0)}: KeyError: 'files'"
    assert bool(record.exc_info) is verbose


@pytest.mark.parametrize(
    ("option", "bad", "good", "field"),
    [
        (with_repository_timeout, 0, 7.5, "repository_timeout"),
        (with_analysis_timeout, -5, 7.5, "repository_timeout"),  # Go's name, same meaning
        (with_analysis_time_limit, 0, 9.0, "analysis_time_limit"),
    ],
)
def test_the_limits_refuse_bad_values_and_apply_good_ones(
    option: Callable[[Any], Option], bad: object, good: object, field: str
) -> None:
    with pytest.raises(ValueError, match="must"):
        option(bad)
    config = option(good)(UseCaseConfig())
    assert getattr(config, field) == good
    assert config.analysis_timeout == config.repository_timeout  # the field's old name


def test_the_defaults_bound_an_analysis_well_under_its_repository() -> None:
    uc = compose(pool=None)
    config = uc.config
    assert (config.repository_timeout, config.analysis_time_limit) == (15 * 60, 2 * 60)
    assert isinstance(uc._analyzer, TestInventoryAnalyzer)
    assert uc._analyzer.settings.max_memory == 1 << 30


def test_the_memory_cap_configures_the_default_analyzer_only(tmp_path: Path) -> None:
    uc = compose(analysis=AnalysisSettings(max_memory=64 << 20), pool=None)
    assert isinstance(uc._analyzer, TestInventoryAnalyzer)
    assert uc._analyzer._max_memory == 64 << 20
    # The time limit is the use case's own: it applies to any analyzer.
    AnalyzeUseCase(with_analysis_time_limit(5), vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())


def test_the_command_line_defaults_are_the_librarys() -> None:
    # Read from the library (ADR 0017); tests/test_cli_settings.py checks every option.
    import dataclasses

    from clonegate import parse_size
    from clonegate_cli._clone_options import CloneFlags

    cli = {f.name: f.default for f in dataclasses.fields(CloneFlags)}
    config = UseCaseConfig()
    assert cli["timeout"] == config.repository_timeout
    assert cli["analysis_timeout"] == config.analysis_time_limit
    assert parse_size(str(cli["analysis_memory"])) == AnalysisSettings().max_memory


class _Granting:
    """A shared limit (another machine's clones ahead, an outage ridden out) that grants
    once ``grant`` is set."""

    def __init__(self) -> None:
        self.grant = trio.Event()
        self.waiting = trio.Event()

    @asynccontextmanager
    async def hold(self, n: int = 1) -> AsyncIterator[None]:
        self.waiting.set()
        await self.grant.wait()
        yield


async def test_a_wait_for_a_shared_limit_is_no_repositorys_time(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # Issue 39: a job that waited past --timeout for the cluster limit was reported
    # `timeout` (while waiting for a clone slot), an infrastructure wait written as the
    # repository's result. The wait stops the repository's clock, as an analysis
    # process's does.
    limit = _Granting()
    uc = AnalyzeUseCase(
        with_repository_timeout(10),
        with_global_limiter(limit),
        vcs=FakeVCS(tmp_path),
        analyzer=FakeAnalyzer(),
    )
    async with trio.open_nursery() as nursery:
        reports: list[RepositoryReport] = []

        async def run() -> None:
            reports.append(await uc.execute(url(0)))

        nursery.start_soon(run)
        await limit.waiting.wait()
        await trio.sleep(3600)  # an hour of someone else's clones, past the 10 s
        assert reports == []
        limit.grant.set()
    assert [r.status for r in reports] == [RepositoryStatus.OK]

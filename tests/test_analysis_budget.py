"""Analysis jobs inside the memory budget (issue 46, ADR 0014): each job holds a share of
the budget while it runs, learned from the jobs' measured peaks, and gives it back on
every way out: its end, its failure, its cancellation, its worker's death."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import (
    AnalysisError,
    AnalysisReport,
    AnalyzeUseCase,
    ClonedSource,
    CloneSettings,
    DulwichVCS,
    MemoryReading,
    TestInventoryAnalyzer,
    with_max_concurrent_clones,
    with_memory_budget,
)
from clonegate._adapters.workers import default_worker_limiter, open_worker_pool
from clonegate._domain.job_memory import counted_in, held_for_job
from clonegate._usecase.admission import MemoryAdmission, MemoryLease
from clonegate._usecase.analysis_memory import ANALYSIS_OPENING, AnalysisMemory
from clonegate._usecase.estimates import MemoryEstimates
from clonegate._usecase.gate import CloneGateStatistics

from .support.fakes import FakeAnalyzer, FakeVCS, Readings, url
from .support.repos import make_test_suite_repo
from .support.servers import GitDaemon, git_daemon
from .support.worker_gate import WorkerGate

MiB = 1 << 20


def _budget(ceiling: int) -> tuple[MemoryAdmission, AnalysisMemory]:
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=ceiling, opening=8))
    return admission, AnalysisMemory(admission)


async def test_a_job_holds_its_share_while_it_runs_and_the_next_learns_its_peak() -> None:
    admission, analyses = _budget(500)
    with counted_in(analyses):
        async with held_for_job() as job:
            figures = admission.figures()
            assert (figures.held, figures.analyses) == (ANALYSIS_OPENING, ANALYSIS_OPENING)
            job.measured(80 * MiB)  # what the worker pool measured of the job
        assert (admission.figures().held, admission.figures().analyses) == (0, 0)
        async with held_for_job():
            # The 90th percentile of the peaks seen (80 MiB), times the margin.
            assert admission.figures().analyses == 100
    assert admission.figures().held == 0
    # Outside a budget, a job holds nothing anywhere (and is still a checkpoint).
    with trio.testing.assert_checkpoints():
        async with held_for_job():
            pass


async def test_a_failed_job_gives_its_share_back_and_teaches_nothing() -> None:
    admission, analyses = _budget(500)
    with counted_in(analyses), pytest.raises(MemoryError):
        async with held_for_job():
            raise MemoryError  # a worker past its cap: no peak measured
    assert admission.figures().held == 0
    assert analyses.estimate() == ANALYSIS_OPENING


async def test_an_analysis_waits_ahead_of_clones_not_admitted_and_for_running_ones() -> None:
    """The budget is full of a clone's walk; an analysis job waits for it, counted in the
    controller's floor, ahead of a clone that would fit but was not admitted yet: it
    waits only for what runs, which ends without it."""
    admission, analyses = _budget(100)
    walk = await admission.admit("h", "")
    await admission.need(walk, 90 * MiB)
    order: list[str] = []

    async def analysis() -> None:
        lease = await analyses.hold()
        order.append("analysis")
        analyses.release(lease, 10 * MiB)

    async def clone() -> None:
        lease = await admission.admit("h", "")  # 8 MiB: would fit beside the walk
        order.append("clone")
        admission.release(lease)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(analysis)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(clone)
        await trio.testing.wait_all_tasks_blocked()
        assert order == []
        assert admission.heaviest() == 90  # the walk; the analysis waits for 24
        assert ANALYSIS_OPENING in admission._growing.values()
        admission.release(walk)
    assert order == ["analysis", "clone"]
    assert admission.figures().held == 0


async def test_a_cancelled_wait_holds_nothing_and_lets_the_next_in() -> None:
    admission, analyses = _budget(100)
    walk = await admission.admit("h", "")
    await admission.need(walk, 90 * MiB)
    with counted_in(analyses), trio.move_on_after(0) as waited:
        async with held_for_job():
            pytest.fail("held a share that was not free")
    assert waited.cancelled_caught
    assert not admission._growing
    assert admission.figures().held == 90
    admission.release(walk)
    lease = await admission.admit("h", "")
    assert isinstance(lease, MemoryLease)
    assert admission.figures().held == 8


class HoldingAnalyzer(FakeAnalyzer):
    """Analyzes as the real analyzer's jobs hold memory: one job, of ``peak`` bytes."""

    def __init__(self, peak: int) -> None:
        super().__init__()
        self.job_peak = peak
        self.held: list[int] = []  # memory_analyses, seen inside each job
        self.stats: Callable[[], CloneGateStatistics] | None = None

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        async with held_for_job() as job:
            assert self.stats is not None
            self.held.append(self.stats().memory_analyses)
            job.measured(self.job_peak)
        return await super().analyze(source)


async def test_the_use_case_counts_its_analyses_in_its_budget(tmp_path: Path) -> None:
    analyzer = HoldingAnalyzer(40 * MiB)
    uc = AnalyzeUseCase(
        with_memory_budget("500M"),
        with_max_concurrent_clones(1),
        vcs=FakeVCS(tmp_path),
        analyzer=analyzer,
        memory_sensor=Readings(MemoryReading(limit=1 << 40, available=1 << 39)),
    )
    analyzer.stats = uc.clone_gate_statistics
    # One after another: what each job measured is known to the next.
    reports = [await uc.execute(url(i)) for i in range(3)]
    assert [r.status for r in reports] == ["ok"] * 3
    # The first job held the opening share; each next one what the jobs measured
    # (40 MiB, times the margin); nothing is held once they ended.
    assert analyzer.held == [ANALYSIS_OPENING, 50, 50]
    stats = uc.clone_gate_statistics()
    assert (stats.memory_held, stats.memory_analyses) == (0, 0)


# The analyzer's real jobs -------------------------------------------------------------


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitDaemon]:
    root = tmp_path_factory.mktemp("suite")
    make_test_suite_repo(root, "suite", test_files=300, other_files=5)  # two parts
    with git_daemon(root) as daemon:
        yield daemon


class Recorded(AnalysisMemory):
    """The budget's share, with what each job held and the peak it gave back."""

    def __init__(self, admission: MemoryAdmission) -> None:
        super().__init__(admission)
        self.held: list[int] = []
        self.peaks: list[int | None] = []

    async def hold(self) -> MemoryLease:
        lease = await super().hold()
        self.held.append(lease.memory)
        return lease

    def release(self, held: object, peak: int | None) -> None:
        self.peaks.append(peak)
        super().release(held, peak)


async def _clone(daemon: GitDaemon, work: Path) -> ClonedSource:
    return await DulwichVCS(CloneSettings(work_dir=work)).clone(daemon.url("suite"))


async def test_each_real_job_holds_and_gives_back_with_its_measured_peak(
    suite: GitDaemon, tmp_path: Path
) -> None:
    default_worker_limiter().total_tokens = 2
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=500, opening=8))
    analyses = Recorded(admission)
    source = await _clone(suite, tmp_path)
    try:
        with counted_in(analyses):
            report = await TestInventoryAnalyzer().analyze(source)
    finally:
        await source.aclose()
    assert report.inventory.test_files == 300
    # A listing, then two parts side by side: each held a share and gave it back
    # with the peak its worker measured.
    assert len(analyses.held) == len(analyses.peaks) == 3
    assert analyses.held[0] == ANALYSIS_OPENING
    assert all(peak is not None and peak > 0 for peak in analyses.peaks)
    assert admission.figures().held == 0


@pytest.mark.parametrize("how", ["worker killed", "cancelled"])
async def test_a_dead_or_cancelled_job_gives_its_share_back(
    suite: GitDaemon, tmp_path: Path, how: str
) -> None:
    default_worker_limiter().total_tokens = 2
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=500, opening=8))
    analyses = Recorded(admission)
    source = await _clone(suite, tmp_path)
    gate = WorkerGate()
    failed: list[BaseException] = []
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(gate.serve)
            async with open_worker_pool(init=gate.init) as pool:
                with trio.CancelScope() as scope:

                    async def stop_when_both_parts_run() -> None:
                        pids = await gate.wait_checked_in(2)
                        # Both parts hold their share (learned from the listing's
                        # peak), in their workers.
                        assert len(analyses.held) == 3
                        assert admission.figures().analyses == sum(analyses.held[1:]) > 0
                        if how == "cancelled":
                            scope.cancel()
                        else:
                            os.kill(pids[0], signal.SIGKILL)

                    nursery.start_soon(stop_when_both_parts_run)
                    try:
                        with counted_in(analyses):
                            await TestInventoryAnalyzer(pool=pool).analyze(source)
                    except AnalysisError as exc:
                        failed.append(exc)
                # Both parts and the listing gave their share back, none with a peak
                # but the listing's.
                assert admission.figures().held == 0
                assert len(analyses.held) == len(analyses.peaks) == 3
                assert analyses.peaks[1:] == [None, None]
            nursery.cancel_scope.cancel()
    finally:
        await source.aclose()
    assert (len(failed), scope.cancelled_caught) == (
        (0, True) if how == "cancelled" else (1, False)
    )

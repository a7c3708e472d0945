"""The memory budget (issue 15, ADR 0014): estimates that learn, the pressure controller on
synthetic readings, and the gate's accounting through the use case with a fake VCS."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from clonegate import (
    AnalyzeUseCase,
    Batch,
    ClonedSource,
    CloneSettings,
    Credential,
    DulwichVCS,
    Event,
    EventKind,
    MemoryReading,
    RemoteHead,
    WeightedSemaphore,
    with_event_hook,
    with_max_concurrent_clones,
    with_memory_budget,
    with_result_store,
)
from clonegate._adapters.clones import discard
from clonegate._usecase.admission import MemoryAdmission
from clonegate._usecase.estimates import MemoryEstimates
from clonegate._usecase.gate import CloneGate
from clonegate._usecase.pressure import PressureController
from clonegate.errors import TooLargeError
from clonegate.store import open_store
from clonegate.workers import open_worker_pool
from clonegate_cli.app import app

from .support.fakes import FakeAnalyzer, Readings
from .support.servers import GitDaemon

MiB = 1 << 20
GiB = 1 << 30
WHEN = datetime(2024, 1, 1, tzinfo=UTC)


CALM = MemoryReading(limit=4 * GiB, available=3 * GiB, pressure=0.0)
PRESSED = MemoryReading(limit=4 * GiB, available=3 * GiB, pressure=0.30)
NEARLY_FULL = MemoryReading(limit=4 * GiB, available=100 * MiB, pressure=None)
IN_BETWEEN = MemoryReading(limit=4 * GiB, available=400 * MiB, pressure=0.05)


# Estimates ---------------------------------------------------------------------------


def test_estimates_start_at_the_cap_and_learn_per_host() -> None:
    book = MemoryEstimates(initial=1024, ceiling=2000)
    assert book.estimate("a.example") == 1024  # nothing seen: the hard cap
    book.record("a.example", 100 * MiB)
    assert book.estimate("a.example") == 125  # the only peak, with a 25% margin
    assert book.estimate("b.example") == 125  # a new host: every host's peaks
    book.record("b.example", 400 * MiB)
    assert book.estimate("a.example") == 125  # a's own peaks, not b's
    assert book.estimate("b.example") == 500
    assert book.estimate() == 500  # the 90th percentile of (100, 400) is 400


def test_estimates_take_an_upper_quantile_of_a_window_and_stay_under_the_ceiling() -> None:
    book = MemoryEstimates(initial=4096, ceiling=300, window=10)
    assert book.estimate("h") == 300  # the cap, clamped: every clone must fit the budget
    for peak in range(1, 21):  # 1..20 MiB; the window keeps 11..20
        book.record("h", peak * MiB)
    assert book.estimate("h") == 24  # rank ceil(0.9 * 10) = 9th of 11..20 is 19; x1.25
    book.record("h", 1000 * MiB)
    assert book.estimate("h") == 25  # one outlier in ten is above the 90th percentile
    book.exceeded("h", 1000 * MiB)  # but a clone that ran out of memory sets a floor
    assert book.estimate("h") == 300
    assert book.estimate("other") == 300  # two of the last ten peaks are 1000 MiB now


def test_a_peak_measured_in_an_earlier_run_comes_first() -> None:
    book = MemoryEstimates(initial=1024, ceiling=2000)
    assert book.estimate("h", known=40 * MiB) == 50  # no waiting for this run's first
    book.record("h", 400 * MiB)
    assert book.estimate("h", known=40 * MiB) == 50  # the repository's own figure
    assert book.estimate("h", known=4 * GiB) == 1024  # never above the cap
    assert MemoryEstimates(initial=4096, ceiling=300).estimate(known=GiB) == 300  # the budget
    book.exceeded("h", 300 * MiB)
    assert book.estimate("h", known=40 * MiB) == 375  # a host that ran out: its floor


def test_estimates_refuse_nonsense() -> None:
    with pytest.raises(ValueError, match="quantile"):
        MemoryEstimates(initial=1, ceiling=1, quantile=0.0)
    with pytest.raises(ValueError, match="margin"):
        MemoryEstimates(initial=1, ceiling=1, margin=0.5)


# The controller -----------------------------------------------------------------------


def controller(
    size: int = 1000, floor: int = 100, **kwargs: object
) -> tuple[PressureController, WeightedSemaphore, list[str]]:
    semaphore = WeightedSemaphore(size)
    log: list[str] = []
    made = PressureController(
        semaphore,
        size,
        Readings(CALM),
        lambda: floor,
        on_decision=lambda d: log.append(f"{d.action} {d.previous}->{d.size}"),
        **kwargs,  # type: ignore[arg-type]
    )
    return made, semaphore, log


def test_pressure_shrinks_multiplicatively_down_to_the_floor_with_cooldowns() -> None:
    made, semaphore, log = controller(cooldown=2)
    sizes = []
    for _ in range(30):
        made.observe(PRESSED)
        sizes.append(semaphore.size)
    assert sizes[:6] == [750, 750, 750, 562, 562, 562]  # one change, then two quiet readings
    assert semaphore.size == 100  # the floor: the heaviest clone can still run
    assert log[:2] == ["shrink 1000->750", "shrink 750->562"]
    assert min(sizes) == 100


def test_a_nearly_full_cgroup_is_pressure_even_without_psi() -> None:
    made, _, _ = controller()
    decision = made.observe(NEARLY_FULL)
    assert decision is not None
    assert decision.action == "shrink"
    assert "100 MiB available of 4096 MiB" in decision.reason


def test_calm_grows_additively_never_above_the_budget() -> None:
    made, semaphore, log = controller(cooldown=0, step=100)
    semaphore.size = 250
    for _ in range(20):
        made.observe(CALM)
    assert log[:3] == ["grow 250->350", "grow 350->450", "grow 450->550"]
    assert semaphore.size == 1000
    assert made.observe(CALM) is None


def test_between_pressure_and_calm_nothing_changes() -> None:
    made, semaphore, log = controller(cooldown=0)
    semaphore.size = 500
    for _ in range(10):
        assert made.observe(IN_BETWEEN) is None
    assert semaphore.size == 500
    assert log == []


def test_under_its_own_feedback_the_size_cycles_within_the_stated_bounds() -> None:
    """A plant that stalls whenever more than 600 MiB are admitted: after settling, the
    size stays between decrease x 600 and 600 + step, as the docstring says."""
    made, semaphore, _ = controller(cooldown=1, step=50)
    seen = []
    for tick in range(400):
        made.observe(PRESSED if semaphore.size > 600 else CALM)
        if tick >= 50:
            seen.append(semaphore.size)
    assert max(seen) <= 650
    assert min(seen) >= int(0.75 * 600)
    assert len(set(seen)) > 1  # it does probe upwards again


def test_shrinking_takes_nothing_back_from_holders() -> None:
    made, semaphore, _ = controller()
    semaphore.acquire_nowait(900)
    made.observe(PRESSED)
    assert semaphore.size == 750
    assert semaphore.held == 900  # running clones keep what they hold
    assert not semaphore.try_acquire(1)
    semaphore.release(900)


async def test_the_controller_reads_once_per_interval(
    autojump_clock: trio.testing.MockClock,
) -> None:
    sensor = Readings(PRESSED)
    semaphore = WeightedSemaphore(1000)
    made = PressureController(semaphore, 1000, sensor, lambda: 1, interval=0.5, cooldown=0)
    with trio.move_on_after(5.25):
        await made.run()
    assert sensor.reads == 10
    expected = 1000
    for _ in range(10):  # each reading shrinks it once (no cooldown), rounding down
        expected = int(expected * 0.75)
    assert semaphore.size == expected


# Through the use case -----------------------------------------------------------------


class PeakVCS:
    """A clone per URL that waits for the test's go-ahead, then reports ``peaks[url]``
    (bytes) as its peak memory; a peak above ``cap`` fails ``too_large`` like the worker."""

    # The VCS port's figures (ADR 0017): a shallow clone, the default cap, no forecasts.
    depth: int | None = 1
    max_memory = 1 << 30
    opening_memory: int | None = None
    reports_progress = False
    idle_memory = 0  # keeps no worker between clones

    def __init__(self, tmp: Path, peaks: dict[str, int], cap: int) -> None:
        self.tmp, self.peaks, self.cap = tmp, peaks, cap
        self.go: dict[str, trio.Event] = {u: trio.Event() for u in peaks}
        self.entered: dict[str, trio.Event] = {u: trio.Event() for u in peaks}
        self.running: set[str] = set()

    async def clone(
        self,
        url: str,
        destination: Path | None = None,
        *,
        credential: object = None,
        on_ready: Callable[[], object] | None = None,
        on_memory: Callable[[int], Awaitable[object]] | None = None,
        on_progress: Callable[[int], object] | None = None,
        keep_worker: bool = False,
    ) -> ClonedSource:
        self.running.add(url)
        self.entered[url].set()
        try:
            await self.go[url].wait()
        finally:
            self.running.discard(url)
        if self.peaks[url] > self.cap:
            error = TooLargeError(url, "the clone needed more than its memory limit")
            error.peak_memory = self.cap
            raise error
        path = self.tmp / url.rsplit("/", 1)[1]
        path.mkdir()
        return ClonedSource(
            url,
            path,
            "main",
            "a" * 40,
            WHEN,
            1,
            False,
            path,
            peak_memory=self.peaks[url],
            remove=discard,
        )

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        raise NotImplementedError(f"{type(self).__name__} lists no remote HEAD")


async def test_the_budget_admits_by_learned_estimates_and_never_overcommits(
    tmp_path: Path,
) -> None:
    urls = [f"https://h.example/r{i}.git" for i in range(6)]
    peaks = dict.fromkeys(urls, 100 * MiB)
    peaks[urls[3]] = 2 * GiB  # fails too_large at the cap, and raises the estimate
    vcs = PeakVCS(tmp_path, peaks, cap=512 * MiB)
    budget_events: list[Event] = []
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(4),
        with_memory_budget("300M"),
        with_event_hook(lambda e: budget_events.append(e) if e.kind is EventKind.BUDGET else None),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
        memory_sensor=Readings(MemoryReading(limit=GiB, available=GiB // 2, pressure=0.0)),
    )
    concurrent: list[frozenset[str]] = []

    async def settle() -> frozenset[str]:
        await trio.testing.wait_all_tasks_blocked()
        stats = uc.clone_gate_statistics()
        assert stats.memory_budget == 300
        assert stats.memory_held == sum(e.memory for e in stats.active) <= 300
        assert len(stats.active) <= 4
        return frozenset(vcs.running)

    async with uc.analyze_many(urls) as batch, trio.open_nursery() as nursery:
        reports = []

        async def drain() -> None:
            async for report in batch:
                reports.append(report)

        nursery.start_soon(drain)
        # Nothing learned yet: a clone reserves its cap (clamped to the budget): alone.
        concurrent.append(await settle())
        assert concurrent[-1] == {urls[0]}
        assert uc.clone_gate_statistics().active[0].memory == 300
        vcs.go[urls[0]].set()
        # 100 MiB seen: 125 MiB each, two fit in 300.
        concurrent.append(await settle())
        assert concurrent[-1] == {urls[1], urls[2]}
        vcs.go[urls[1]].set()
        vcs.go[urls[2]].set()
        concurrent.append(await settle())
        assert concurrent[-1] == {urls[3], urls[4]}
        vcs.go[urls[3]].set()  # fails at the cap: the host's estimate goes up to 300
        vcs.go[urls[4]].set()
        concurrent.append(await settle())
        assert concurrent[-1] == {urls[5]}
        assert uc.clone_gate_statistics().active[0].memory == 300
        vcs.go[urls[5]].set()
    by_url = {r.url: r for r in reports}
    error = by_url[urls[3]].error
    assert error is not None
    assert error.kind == "too_large"
    assert [r.status for u, r in sorted(by_url.items()) if u != urls[3]] == ["ok"] * 5
    assert budget_events == []  # calm readings, at the budget already: no resize


async def test_a_run_with_a_store_starts_from_the_peaks_of_the_last(tmp_path: Path) -> None:
    # ADR 0014: without history the first clone runs alone (its cap is the only
    # figure known to be enough); a nightly re-run knows each repository's peak.
    urls = [f"https://h.example/r{i}.git" for i in range(4)]
    peaks = dict.fromkeys(urls, 100 * MiB)
    starts: list[frozenset[str]] = []
    reserved: list[list[int]] = []
    async with open_store(tmp_path / "runs.db") as store:
        for run in ("first", "second"):
            (tmp_path / run).mkdir()
            vcs = PeakVCS(tmp_path / run, peaks, cap=512 * MiB)
            uc = AnalyzeUseCase(
                with_max_concurrent_clones(4),
                with_memory_budget("300M"),
                with_result_store(store),
                vcs=vcs,
                analyzer=FakeAnalyzer(),
                memory_sensor=Readings(CALM),
            )
            async with uc.analyze_many(urls) as batch, trio.open_nursery() as nursery:
                nursery.start_soon(_drain, batch)
                # The store answers from a thread: wait for the clones themselves
                # (bounded: a broken feature must fail here, not hang).
                with trio.fail_after(30):
                    await vcs.entered[urls[0]].wait()
                    if run == "second":
                        await vcs.entered[urls[1]].wait()
                stats = uc.clone_gate_statistics()
                starts.append(frozenset(vcs.running))
                # What is held shows what else could start: nothing fits beside these.
                reserved.append([e.memory for e in stats.active])
                assert stats.memory_held == sum(e.memory for e in stats.active) <= 300
                for go in vcs.go.values():
                    go.set()
            reports = await store.reports((await store.runs(1))[0].id)
            assert [r.clone_memory for r in reports] == [100 * MiB] * 4
    # Nothing known: the cap (clamped to the budget), alone. Then 125 MiB each from
    # the start: two fit, a third does not.
    assert starts == [{urls[0]}, {urls[0], urls[1]}]
    assert reserved == [[300], [125, 125]]


async def test_a_stuck_or_broken_history_costs_only_the_better_estimate(
    autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    # Every admission waits behind the lookup at the head: it must end, whatever
    # the store (the user's own, over a network) does.
    async def stuck(key: str) -> int | None:
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def broken(key: str) -> int | None:
        raise RuntimeError("the store's disk is gone")

    for history in (stuck, broken):
        gate = CloneGate(2, MemoryEstimates(initial=100, ceiling=300), history=history)
        async with gate.slot(0, "u", 1, "h", "git://h/r"):
            assert gate.statistics().active[0].memory == 100  # the cap, as with no store
    assert trio.current_time() == MemoryAdmission.HISTORY_SECONDS  # the stuck one, given up
    assert [r.getMessage().split(": ")[-1] for r in caplog.records] == [
        "no stored clone memory for git://h/r within 2 s",
        "the store's disk is gone",
    ]


@pytest.mark.parametrize(
    ("available", "processes", "budget"),
    [
        (200, 2, 150),  # small: 3/4, as before (all but 80 MiB would be 120)
        (315, 2, 236),  # the delta-heavy history's cgroup of 2.2x one clone: unchanged
        # All but what runs outside the budget: the parent and the zygote (52 MiB),
        # and each idle analysis worker (14): 80 MiB with two analysis processes.
        (600, 2, 520),
        (600, 8, 450),  # 164 MiB outside: 3/4 is more
        # the data file's cgroup of 2.2x one clone: 785 before; 963, less 64 MiB kept
        # for -j 2's idle workers, holds its two walks of 444 MiB
        (1047, 2, 963),
        (1047, 4, 939),
        (16384, 2, 15073),  # large: at most 92%
    ],
)
def test_auto_leaves_what_runs_outside_the_budget(
    available: int, processes: int, budget: int
) -> None:
    sensor = Readings(MemoryReading(limit=2 * available * MiB, available=available * MiB))
    analyzer = FakeAnalyzer()
    analyzer.processes = processes
    uc = AnalyzeUseCase(
        with_memory_budget("auto"),
        vcs=PeakVCS(Path(), {}, 0),
        analyzer=analyzer,
        memory_sensor=sensor,
    )
    assert uc.clone_gate_statistics().memory_budget == budget


async def _drain(batch: Batch) -> None:
    async for _ in batch:
        pass


def test_budget_option_values() -> None:
    with pytest.raises(ValueError, match="at least 1 MiB"):
        with_memory_budget(1000)
    with pytest.raises(ValueError, match="not a size"):
        with_memory_budget("lots")
    sensor = Readings(MemoryReading(limit=8 * GiB, available=4 * GiB))
    vcs, analyzer = PeakVCS(Path(), {}, 0), FakeAnalyzer()
    uc = AnalyzeUseCase(
        with_memory_budget("auto"), vcs=vcs, analyzer=analyzer, memory_sensor=sensor
    )
    assert uc.clone_gate_statistics().memory_budget == 3768  # 92% of what is available
    uc = AnalyzeUseCase(
        with_memory_budget("1.5G"), vcs=vcs, analyzer=analyzer, memory_sensor=sensor
    )
    assert uc.clone_gate_statistics().memory_budget == 1536
    assert AnalyzeUseCase(vcs=vcs, analyzer=analyzer).clone_gate_statistics().memory_size is None


# Real clones ----------------------------------------------------------------------------


async def test_a_real_clone_reports_its_own_peak_memory(daemon: GitDaemon, tmp_path: Path) -> None:
    """The peak the budget learns from is the clone's own: above the zygote's pages
    the worker shares, far below the worker's whole resident size."""
    async with open_worker_pool() as pool:
        source = await DulwichVCS(CloneSettings(work_dir=tmp_path), pool=pool).clone(
            daemon.url("basic")
        )
        await source.aclose()
        # The clone's worker serves the next clone: alive, idle, its high-water mark
        # that of the clone (reset when the job began).
        (worker,) = pool.statistics().workers_running
        whole = _high_water_mark(worker)
    assert source.peak_memory is not None
    assert 0 < source.peak_memory < whole


def _high_water_mark(pid: int) -> int:
    """Process ``pid``'s peak resident size in bytes (``VmHWM``), shared pages included."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


def test_the_command_line_runs_within_a_budget(
    runner: CliRunner, daemon: GitDaemon, tmpdir_env: Path
) -> None:
    urls = [daemon.url("basic"), daemon.url("trunk")]
    for budget in ("64M", "auto"):
        result = runner.invoke(app, ["analyze", "--memory-budget", budget, *urls])
        assert result.exit_code == 0, result.output
        assert [json.loads(line)["status"] for line in result.stdout.splitlines()] == ["ok"] * 2
    result = runner.invoke(app, ["analyze", "--memory-budget", "plenty", *urls])
    assert result.exit_code == 2
    assert "--memory-budget: not a size" in result.output

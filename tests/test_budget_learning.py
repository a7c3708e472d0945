"""A clone's measured peak corrects the next forecasts of its host and shape within the
run (ADR 0014, issue 46)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import (
    AnalyzeUseCase,
    ClonedSource,
    Credential,
    Event,
    EventKind,
    MemoryReading,
    RemoteHead,
    with_event_hook,
    with_max_concurrent_clones,
    with_memory_budget,
)
from clonegate._adapters.clones import discard
from clonegate._usecase.admission import MemoryAdmission
from clonegate._usecase.estimates import MemoryEstimates

from .support.fakes import FakeAnalyzer

MiB = 1 << 20
WHEN = datetime(2024, 1, 1, tzinfo=UTC)


def test_a_forecast_is_corrected_by_its_host_and_shape_only() -> None:
    estimates = MemoryEstimates(initial=1024, ceiling=1024, opening=8)
    assert estimates.corrected("h", 100 * MiB, first=True) == 100 * MiB  # nothing measured yet
    estimates.measured("h", 100 * MiB, 40 * MiB, first=True, exceeded=False)
    # The ratio (0.4) with the margin (1.25): half the forecast.
    assert estimates.corrected("h", 100 * MiB, first=True) == 50 * MiB
    assert estimates.corrected("h", 120 * MiB, first=True) == 60 * MiB  # the same power of two
    assert estimates.corrected("h", 20 * MiB, first=True) == 20 * MiB  # another shape
    assert estimates.corrected("other", 100 * MiB, first=True) == 100 * MiB  # another host
    assert estimates.corrected("h", 100 * MiB, first=False) == 100 * MiB  # a later forecast
    # The largest ratio of the shape counts; never more than the forecast...
    estimates.measured("h", 100 * MiB, 90 * MiB, first=True, exceeded=False)
    assert estimates.corrected("h", 100 * MiB, first=True) == 100 * MiB
    # ...unless a clone used more than it forecast: then more, with the margin.
    estimates.measured("h", 100 * MiB, 110 * MiB, first=True, exceeded=False)
    assert 137 * MiB < estimates.corrected("h", 100 * MiB, first=True) < 138 * MiB  # 1.1 x 1.25
    # A clone that ran out of memory: every correction of its host is dropped.
    estimates.measured("h", 20 * MiB, 2 * MiB, first=True, exceeded=False)
    estimates.measured("h", 100 * MiB, 100 * MiB, first=True, exceeded=True)
    assert estimates.corrected("h", 20 * MiB, first=True) == 20 * MiB


def test_a_first_forecast_is_bounded_by_the_repository_s_stored_figure() -> None:
    estimates = MemoryEstimates(initial=1024, ceiling=1024, opening=8)
    # A bound made before anything was counted: the repository's measured clone
    # (an earlier run's, with the margin) says better; a later figure is believed.
    assert estimates.corrected("h", 120 * MiB, first=True, known=16 * MiB) == 20 * MiB
    assert estimates.corrected("h", 120 * MiB, first=False, known=16 * MiB) == 120 * MiB
    assert estimates.corrected("h", 10 * MiB, first=True, known=16 * MiB) == 10 * MiB


class OverForecastingVCS:
    """Each clone forecasts ``forecast`` bytes, then runs ``seconds`` using ``peak``."""

    depth: int | None = 1
    max_memory = 1 << 30
    opening_memory = 8 * MiB
    reports_progress = False
    idle_memory = 0  # keeps no worker between clones

    def __init__(self, tmp: Path, forecast: int, peak: int, seconds: float) -> None:
        self.tmp, self.forecast, self.peak, self.seconds = tmp, forecast, peak, seconds
        self.running = self.most_at_once = 0

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
        assert on_memory is not None
        await on_memory(self.forecast)
        self.running += 1
        self.most_at_once = max(self.most_at_once, self.running)
        try:
            await trio.sleep(self.seconds)
        finally:
            self.running -= 1
        path = self.tmp / url.rsplit("/", 1)[1]
        path.mkdir()
        return ClonedSource(
            url, path, "main", "a" * 40, WHEN, 1, False, path, peak_memory=self.peak, remove=discard
        )

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        raise NotImplementedError(f"{type(self).__name__} lists no remote HEAD")


class Calm:
    def read(self) -> MemoryReading:
        return MemoryReading(limit=1 << 40, available=1 << 39, pressure=0.0)


@pytest.mark.parametrize(
    ("urls", "most_at_once"),
    [
        ([f"https://h.example/r{i}.git" for i in range(4)], 2),
        ([f"https://h{i}.example/r{i}.git" for i in range(3)], 1),
    ],
    ids=["one host: corrected", "another host: not corrected"],
)
async def test_the_next_clones_of_a_host_reserve_what_the_first_measured(
    urls: list[str], most_at_once: int, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Clones each forecast 100 MiB and use 40, in a 120 MiB budget. Of one host: the
    first alone (nothing measured yet), then, corrected to 50 MiB, two at once (before
    issue 46 every forecast was believed whole: one at a time, to the end). Each of
    another host: no clone of its own measured, so each is believed whole."""
    vcs = OverForecastingVCS(tmp_path, 100 * MiB, 40 * MiB, seconds=10.0)
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(len(urls)),
        with_memory_budget("120M"),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
        memory_sensor=Calm(),
    )
    async with uc.analyze_many(urls) as batch:
        reports = [r async for r in batch]
    assert [r.status for r in reports] == ["ok"] * len(urls)
    assert vcs.most_at_once == most_at_once


async def test_a_host_s_measured_peak_is_not_reserved_through_the_next_downloads(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    """Issue 46: six clones of one host each forecast 50 MiB and use 50, 10 s each, in
    a 105 MiB budget: two fit at once. Before, once a clone had ended, the next were
    admitted with its peak times the margin (63 MiB) and held it from their start, so
    63 + 50 kept the clones after the first pair alone (the last ended at 50 s). Now
    each is admitted with the opening figure and reserves its forecast when it asks:
    three pairs, the last ending at 30 s (virtual seconds: a MockClock)."""
    urls = [f"https://h.example/r{i}.git" for i in range(6)]
    vcs = OverForecastingVCS(tmp_path, 50 * MiB, 50 * MiB, seconds=10.0)
    start = trio.current_time()
    cloned: list[float] = []  # when each clone ended (virtual seconds)

    def heard(event: Event) -> None:
        if event.kind is EventKind.CLONED:
            cloned.append(trio.current_time() - start)

    uc = AnalyzeUseCase(
        with_max_concurrent_clones(2),
        with_memory_budget("105M"),
        with_event_hook(heard),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
        memory_sensor=Calm(),
    )
    async with uc.analyze_many(urls) as batch:
        reports = [r async for r in batch]
    assert [r.status for r in reports] == ["ok"] * 6
    assert cloned == pytest.approx([10.0, 10.0, 20.0, 20.0, 30.0, 30.0])


async def test_a_first_pass_that_counts_less_than_its_bound_lets_a_waiting_bound_in() -> None:
    """The long history's case (issue 46): a pack without deltas reserves the bound of
    a whole indexing before its first pass, and what its first pass counted (a fifth
    of it) corrects the bounds of its host and shape at once: the next clone, waiting
    with its own bound, runs beside it instead of after it."""
    admission = MemoryAdmission(MemoryEstimates(initial=110, ceiling=110, opening=8))
    first = await admission.admit("h", "a")
    second = await admission.admit("h", "b")
    assert (first.memory, second.memory) == (8, 8)
    await admission.need(first, 100 * MiB)  # its bound: all but 2 MiB free
    async with trio.open_nursery() as nursery:
        nursery.start_soon(admission.need, second, 100 * MiB)
        await trio.testing.wait_all_tasks_blocked()
        assert second.memory == 8  # it waits, holding its opening figure
        await admission.need(first, 20 * MiB)  # counted: 20 MiB, 80 go back
        await trio.testing.wait_all_tasks_blocked()
        # Its whole bound would not fit beside the first (82 MiB free, 92 more wanted):
        # corrected by the first's count, 100 x 20/100 x 1.25 = 25 MiB, it does.
        assert second.memory == 25
        assert admission.figures().held == 20 + 25
    await admission.need(second, 20 * MiB)
    admission.release(first)
    admission.release(second)
    assert admission.figures().held == 0

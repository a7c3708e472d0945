"""The memory budget in phases (issue 15, ADR 0014): a clone reserves its opening figure,
then asks for what its pack needs before it needs it. The gate's leases step by step,
the clone timeout that stops while a clone waits for memory, the pack's forecast, and
the question a worker's job asks its parent."""

from __future__ import annotations

import math
import os
import signal
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio
import trio.lowlevel
import trio.testing

from clonegate import (
    AnalyzeUseCase,
    ClonedSource,
    Credential,
    DulwichVCS,
    MemoryReading,
    RemoteHead,
    WeightedSemaphore,
    with_clone_timeout,
    with_max_concurrent_clones,
    with_memory_budget,
)
from clonegate._adapters.clones import discard
from clonegate._adapters.git import pack_forecast
from clonegate._adapters.workers import WorkerDied, open_worker_pool, wire
from clonegate._adapters.workers.zygote import ask_parent
from clonegate._usecase.estimates import MemoryEstimates
from clonegate._usecase.gate import CloneGate, MemoryLease
from clonegate._usecase.pressure import PressureController

from .support import worker_jobs
from .support.fakes import FakeAnalyzer

MiB = 1 << 20
WHEN = datetime(2024, 1, 1, tzinfo=UTC)


# The gate's leases ---------------------------------------------------------------------


class Clone:
    """A task that holds a slot and asks for memory when the test says so."""

    def __init__(self, gate: CloneGate, name: str) -> None:
        self.gate, self.name = gate, name
        self.asks: trio.MemorySendChannel[int]
        self._asks: trio.MemoryReceiveChannel[int]
        self.asks, self._asks = trio.open_memory_channel[int](1)
        self.lease: MemoryLease | None = None

    async def run(self) -> None:
        async with self.gate.slot(0, self.name, 1, "h") as lease:
            self.lease = lease
            async for mib in self._asks:
                await self.gate.need(lease, mib * MiB)

    def memory(self) -> int | None:
        return self.lease.memory if self.lease is not None else None


async def settle(gate: CloneGate) -> dict[str, int]:
    """What each entry holds once everything is blocked; the accounting checked."""
    await trio.testing.wait_all_tasks_blocked()
    stats = gate.statistics()
    entries = (*stats.active, *stats.queued)
    assert stats.memory_size is not None
    assert stats.memory_held == sum(e.memory for e in entries) <= stats.memory_size
    return {e.url: e.memory for e in stats.active}


def gate_of(budget: int, slots: int = 4) -> CloneGate:
    return CloneGate(slots, MemoryEstimates(initial=budget, ceiling=budget, opening=8))


async def test_clones_that_grow_at_once_wait_holding_nothing_in_order_ahead_of_admissions() -> None:
    gate = gate_of(100)
    a, b, c, d = (Clone(gate, name) for name in "abcd")
    async with trio.open_nursery() as nursery:
        for clone in (a, b, c):
            nursery.start_soon(clone.run)
        # Nothing learned: each reserves the VCS's opening figure, not the budget.
        assert await settle(gate) == {"a": 8, "b": 8, "c": 8}
        await a.asks.send(20)
        await b.asks.send(20)
        assert await settle(gate) == {"a": 20, "b": 20, "c": 8}
        # 70 more are not free: a, the first to wait, keeps its 20 and waits.
        await a.asks.send(90)
        assert await settle(gate) == {"a": 20, "b": 20, "c": 8}
        assert gate.heaviest() == 90  # the controller may not shrink below it
        # A clone not admitted yet waits behind it, though 52 MiB are free.
        nursery.start_soon(d.run)
        assert await settle(gate) == {"a": 20, "b": 20, "c": 8}
        assert [(e.url, e.memory) for e in gate.statistics().queued] == [("d", 0)]
        # b wants 10 more, which are free, but a waits first: b gives its 20 back
        # (had both kept what they held, each could wait for the other's), and a,
        # at the head, now fits.
        await b.asks.send(30)
        assert await settle(gate) == {"a": 90, "b": 0, "c": 8}
        c.asks.close()  # 10 free: b still waits, and d behind it
        assert await settle(gate) == {"a": 90, "b": 0}
        a.asks.close()  # a ends: b, then d
        assert await settle(gate) == {"b": 30, "d": 8}
        await d.asks.send(4)  # less than it holds: the rest goes back at once
        assert await settle(gate) == {"b": 30, "d": 4}
        b.asks.close()
        d.asks.close()
    assert gate.statistics().memory_held == 0


async def test_clones_waiting_for_a_clone_token_hold_no_memory_that_running_ones_need() -> None:
    gate = gate_of(40, slots=2)
    clones = [Clone(gate, name) for name in "abcde"]
    a, b = clones[:2]
    async with trio.open_nursery() as nursery:
        for clone in clones:  # one at a time: in this order
            nursery.start_soon(clone.run)
            await trio.testing.wait_all_tasks_blocked()
        # Were the three queued to hold their 8 MiB before a token (24 of 40), the two
        # running could never grow to 30: they hold the tokens the others wait for.
        assert await settle(gate) == {"a": 8, "b": 8}
        assert [e.memory for e in gate.statistics().queued] == [0, 0, 0]
        await a.asks.send(30)
        await b.asks.send(30)
        assert await settle(gate) == {"a": 30, "b": 8}
        a.asks.close()
        assert await settle(gate) == {"b": 30, "c": 8}
        for clone in clones[1:]:
            clone.asks.close()
    assert gate.statistics().memory_held == 0


async def test_clones_waiting_for_a_shared_limit_hold_no_memory_either() -> None:
    # One clone per host at a time: b waits for a's host permit. Had b taken its
    # 8 MiB first, a could never grow to the whole budget, and b waits for a.
    gate = CloneGate(
        2,
        MemoryEstimates(initial=40, ceiling=40, opening=8),
        host_limiter=lambda host: WeightedSemaphore(1),
    )
    a, b = Clone(gate, "a"), Clone(gate, "b")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.run)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(b.run)
        assert await settle(gate) == {"a": 8}
        assert [(e.url, e.memory) for e in gate.statistics().queued] == [("b", 0)]
        await a.asks.send(40)
        assert await settle(gate) == {"a": 40}
        a.asks.close()
        assert await settle(gate) == {"b": 8}
        b.asks.close()
    assert gate.statistics().memory_held == 0


async def test_a_clone_cancelled_while_it_waits_for_memory_holds_nothing() -> None:
    gate = gate_of(100)
    a, b = Clone(gate, "a"), Clone(gate, "b")
    async with trio.open_nursery() as nursery:
        nursery.start_soon(a.run)
        await a.asks.send(60)
        scope = trio.CancelScope()
        nursery.start_soon(_run_in, scope, b)
        await settle(gate)
        await b.asks.send(60)
        assert await settle(gate) == {"a": 60, "b": 8}  # the first to wait keeps its 8
        scope.cancel()
        assert await settle(gate) == {"a": 60}
        assert gate.heaviest() == 60
        await a.asks.send(100)  # free again: taken at once
        assert await settle(gate) == {"a": 100}
        a.asks.close()
    assert gate.statistics().memory_held == 0


async def _run_in(scope: trio.CancelScope, clone: Clone) -> None:
    with scope:
        await clone.run()


async def test_a_need_past_the_budget_takes_the_budget_and_without_one_nothing() -> None:
    gate = gate_of(50)
    async with gate.slot(0, "a", 1, "h") as lease:
        await gate.need(lease, 10 << 30)
        assert lease.memory == 50
    plain = CloneGate(2)
    async with plain.slot(0, "a", 1, "h") as lease:
        with trio.testing.assert_checkpoints():
            await plain.need(lease, 10 << 30)
        assert lease.memory == 0


def test_a_clone_waiting_for_more_than_the_size_gets_it_on_any_reading() -> None:
    between = MemoryReading(limit=1000 * MiB, available=500 * MiB, pressure=0.05)
    semaphore = WeightedSemaphore(100)
    floor = [10]
    controller = PressureController(semaphore, 100, Calm(), lambda: floor[0], cooldown=0)
    semaphore.size = 50
    assert controller.observe(between) is None  # neither pressure nor calm: it holds
    floor[0] = 80  # a clone now waits for 80 MiB: held, it would wait for calm
    decision = controller.observe(between)
    assert decision is not None
    assert (decision.action, decision.previous, decision.size) == ("grow", 50, 80)
    assert "what the heaviest waiting clone needs" in decision.reason
    assert semaphore.size == 80
    # Calm: at least the floor at once, not one step at a time.
    semaphore.size = 20
    calm = MemoryReading(limit=1000 * MiB, available=900 * MiB, pressure=0.0)
    decision = controller.observe(calm)
    assert decision is not None
    assert (decision.action, decision.size) == ("grow", 80)


def test_the_opening_figure_is_what_a_forecasting_clone_is_admitted_with() -> None:
    """Issue 46: a host's measured peaks (or a stored one) reserved at admission were
    held through each download, and in a cgroup where two clones fit kept the next
    one out; they now correct the forecasts instead. A host's floor (a clone ran out
    of memory) still applies."""
    estimates = MemoryEstimates(initial=1024, ceiling=300, opening=8)
    assert estimates.estimate("h") == 8
    estimates.record("h", 40 * MiB)
    assert estimates.estimate("h") == 8
    assert estimates.estimate("h", known=100 * MiB) == 8
    estimates.exceeded("h", 80 * MiB)
    assert estimates.estimate("h") == 100  # the floor: 80 MiB with the margin
    without = MemoryEstimates(initial=1024, ceiling=300)  # a VCS that does not forecast
    assert without.estimate("h") == 300
    without.record("h", 40 * MiB)
    assert without.estimate("h") == 50  # learned: the quantile with its margin


# The clone timeout stops while a clone waits for memory --------------------------------


class ForecastingVCS:
    """Each clone asks for ``need`` bytes once it is ready, then takes ``seconds``."""

    # The VCS port's figures (ADR 0017): a shallow clone, the default cap, forecasts.
    depth: int | None = 1
    max_memory = 1 << 30

    opening_memory = 8 * MiB
    reports_progress = False
    idle_memory = 0  # keeps no worker between clones

    def __init__(self, tmp: Path, need: int, seconds: dict[str, float]) -> None:
        self.tmp, self.need, self.seconds = tmp, need, seconds

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
        assert on_ready is not None
        assert on_memory is not None
        on_ready()
        await on_memory(self.need)
        await trio.sleep(self.seconds[url])
        path = self.tmp / url.rsplit("/", 1)[1]
        path.mkdir()
        return ClonedSource(url, path, "main", "a" * 40, WHEN, 1, False, path, remove=discard)

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        raise NotImplementedError(f"{type(self).__name__} lists no remote HEAD")


class Calm:
    def read(self) -> MemoryReading:
        return MemoryReading(limit=1 << 40, available=1 << 39, pressure=0.0)


async def test_the_clone_timeout_stops_while_a_clone_waits_for_memory(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    urls = [f"https://h.example/r{i}.git" for i in range(3)]
    # Each needs the whole budget: one at a time, each waiting 50 s or more for it,
    # under a clone timeout of 60 s. The last takes 61 s once it has its memory.
    vcs = ForecastingVCS(tmp_path, 100 * MiB, dict(zip(urls, [50.0, 50.0, 61.0], strict=True)))
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(3),
        with_memory_budget("100M"),
        with_clone_timeout(60),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
        memory_sensor=Calm(),
    )
    async with uc.analyze_many(urls) as batch:
        reports = {r.url: r async for r in batch}
    assert [reports[u].status for u in urls] == ["ok", "ok", "timeout"]
    error = reports[urls[2]].error
    assert error is not None
    assert "longer than 60 s" in error.message


def test_dulwich_forecasts_its_memory() -> None:
    assert DulwichVCS().opening_memory == pack_forecast.FIRST_PASS_BASE


# A job's question to its parent --------------------------------------------------------


async def test_a_job_asks_its_parent_and_goes_on_with_the_answers() -> None:
    asked: list[object] = []

    async def answer(question: object) -> object:
        asked.append(question)
        await trio.lowlevel.checkpoint()
        return f"answer to {question}"

    async with open_worker_pool() as pool:
        value, _peak = await pool.run(worker_jobs.ask_twice, on_question=answer)
        assert value == ["answer to 1", "answer to 2"]
        assert asked == [1, 2]
        # No one to answer: None, and the job goes on.
        value, _peak = await pool.run(worker_jobs.ask_twice)
        assert value == [None, None]


async def test_a_worker_that_dies_while_its_question_waits_stops_the_wait() -> None:
    async def kill_then_wait_forever(pid: object) -> object:
        assert isinstance(pid, int)
        os.kill(pid, signal.SIGKILL)
        await trio.sleep_forever()  # as a clone waiting for memory that never comes

    async with open_worker_pool() as pool:
        with pytest.raises(WorkerDied):
            await pool.run(worker_jobs.ask_my_pid, on_question=kill_then_wait_forever)


def test_outside_a_worker_a_question_gets_none() -> None:
    assert ask_parent("anything") is None


def test_a_question_is_read_with_the_reply_s_rules() -> None:
    loaded = wire.load_reply(wire.dump(wire.Question(5)))
    assert loaded == wire.Question(5)
    with pytest.raises(Exception, match="refused"):
        wire.load_reply(wire.dump(wire.Question(math.floor)))

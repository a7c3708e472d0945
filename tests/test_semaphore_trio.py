"""trio's own test_sync.py tests for Semaphore, CapacityLimiter and generic locks, adapted."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

import pytest
import trio
import trio.testing
from trio.testing import assert_checkpoints, wait_all_tasks_blocked

from clonegate import WeightedSemaphore


async def test_semaphore_checkpoints_and_hand_off() -> None:
    sem = WeightedSemaphore(1)
    assert "size=1" in repr(sem)
    sem.acquire_nowait()
    assert sem.available == 0
    sem.release()
    with assert_checkpoints():
        await sem.acquire()
    with pytest.raises(trio.WouldBlock):
        sem.acquire_nowait()
    sem.release()
    with assert_checkpoints():
        async with sem:
            assert sem.available == 0
    assert sem.available == 1
    sem.acquire_nowait()

    record = []

    async def do_acquire() -> None:
        record.append("started")
        await sem.acquire()
        record.append("finished")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(do_acquire)
        await wait_all_tasks_blocked()
        assert record == ["started"]
        sem.release()
        # Hand-off: the token went straight to the waiter, not back to the pool.
        assert sem.held == 1
        assert sem.available == 0
        with pytest.raises(trio.WouldBlock):
            sem.acquire_nowait()
    assert record == ["started", "finished"]


def _plain(sem: WeightedSemaphore) -> AbstractAsyncContextManager[None]:
    return sem


def _heavy(sem: WeightedSemaphore) -> AbstractAsyncContextManager[None]:
    return sem.hold(sem.size)


LOCKISH = [
    pytest.param(lambda: _plain(WeightedSemaphore(1)), id="size-1"),
    pytest.param(lambda: _heavy(WeightedSemaphore(3)), id="hold-whole-size-3"),
]


@pytest.mark.parametrize("lock_factory", LOCKISH)
async def test_generic_lock_exclusion(
    lock_factory: Callable[[], AbstractAsyncContextManager[None]],
) -> None:
    loops, workers = 10, 5
    inside = False
    acquires = 0
    lock_like = lock_factory()

    async def worker() -> None:
        nonlocal inside, acquires
        for _ in range(loops):
            async with lock_like:
                acquires += 1
                assert not inside
                inside = True
                await trio.lowlevel.checkpoint()
                await trio.lowlevel.checkpoint()
                assert inside
                inside = False

    async with trio.open_nursery() as nursery:
        for _ in range(workers):
            nursery.start_soon(worker)
    assert not inside
    assert acquires == loops * workers


@pytest.mark.parametrize("lock_factory", LOCKISH)
async def test_generic_lock_fifo_fairness(
    lock_factory: Callable[[], AbstractAsyncContextManager[None]],
) -> None:
    initial_order: list[int] = []
    record: list[int] = []
    loops = 5
    lock_like = lock_factory()

    async def loopy(name: int) -> None:
        initial_order.append(name)
        for _ in range(loops):
            async with lock_like:
                record.append(name)

    async with trio.open_nursery() as nursery:
        for name in (1, 2, 3):
            nursery.start_soon(loopy, name)
    # The first round follows scheduling order; FIFO repeats it in every round after.
    for i in range(loops):
        assert record[3 * i : 3 * (i + 1)] == initial_order


async def test_generic_lock_acquire_nowait_blocks_acquire() -> None:
    sem = WeightedSemaphore(1)
    record = []

    async def taker() -> None:
        record.append("started")
        async with sem:
            pass
        record.append("finished")

    async with trio.open_nursery() as nursery:
        sem.acquire_nowait()
        nursery.start_soon(taker)
        await wait_all_tasks_blocked()
        assert record == ["started"]
        sem.release()
    assert record == ["started", "finished"]


async def test_cancelled_holder_and_waiter_leave_no_bookkeeping() -> None:
    # trio issue 548 (CapacityLimiter leaked cancelled borrowers): cancel a holder and
    # a waiter; nothing of either may remain.
    sem = WeightedSemaphore(1)
    inside = trio.Event()

    async def hold_forever() -> None:
        async with sem:
            inside.set()
            await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(hold_forever)
        await inside.wait()
        nursery.start_soon(sem.acquire, 1)
        await wait_all_tasks_blocked()
        assert sem.statistics().tasks_waiting == 1
        nursery.cancel_scope.cancel()
    assert sem.statistics() == type(sem.statistics())(
        size=1, held=0, available=1, tasks_waiting=0, weight_waiting=0
    )
    assert not sem._queue
    assert not sem._oversized


async def test_zero_size() -> None:
    # Adapted from test_CapacityLimiter_zero_limit_tokens: everyone waits for a resize.
    sem = WeightedSemaphore(0)
    assert not sem.try_acquire(1)
    with pytest.raises(trio.WouldBlock):
        sem.acquire_nowait(1)
    assert sem.try_acquire(0)
    got: list[int] = []

    async def taker(i: int) -> None:
        await sem.acquire(1)
        got.append(i)

    async with trio.open_nursery() as nursery:
        for i in range(3):
            nursery.start_soon(taker, i)
        await wait_all_tasks_blocked()
        assert got == []
        assert sem.statistics().tasks_waiting == 3  # set aside: heavier than size 0
        sem.size = 2  # two fit now, granted together
        await wait_all_tasks_blocked()
        assert len(got) == 2
        sem.size = 0  # shrink to zero while two tokens are held
        assert (sem.held, sem.available) == (2, 0)
        sem.release(2)
        await wait_all_tasks_blocked()
        assert len(got) == 2  # still nobody admitted at size 0
        sem.size = 1
    assert sorted(got) == [0, 1, 2]
    assert sem.held == 1


async def test_change_size() -> None:
    # Adapted from test_CapacityLimiter_change_total_tokens.
    sem = WeightedSemaphore(2)
    with pytest.raises(TypeError):
        sem.size = 1.0  # type: ignore[assignment]
    with pytest.raises(ValueError, match=">= 0"):
        sem.size = -1
    assert sem.size == 2
    order: list[int] = []

    async def take(i: int) -> None:
        await sem.acquire(1)
        order.append(i)

    async with trio.open_nursery() as nursery:
        for i in range(5):
            nursery.start_soon(take, i)
            await wait_all_tasks_blocked()
        assert sorted(order) == [0, 1]
        assert sem.statistics().tasks_waiting == 3
        sem.size += 2
        await wait_all_tasks_blocked()
        assert sorted(order) == [0, 1, 2, 3]
        assert sem.statistics().tasks_waiting == 1
        sem.size -= 3
        assert sem.held == 4
        assert sem.size == 1
        assert sem.available == 0
        sem.release(3)  # held 1 == size 1: still nobody admitted
        assert sem.statistics().tasks_waiting == 1
        sem.release(1)
        await wait_all_tasks_blocked()
        assert sorted(order) == [0, 1, 2, 3, 4]
    assert sem.held == 1

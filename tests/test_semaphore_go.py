"""golang.org/x/sync/semaphore's semaphore_test.go and Example_workerPool, ported to trio.

Go's tests synchronize with sleeps and goroutine yields; here time is trio's MockClock
(autojump) and "is it blocked yet" is ``wait_all_tasks_blocked``.
"""

from __future__ import annotations

import random

import pytest
import trio
import trio.testing

from clonegate import WeightedSemaphore


async def _hammer(sem: WeightedSemaphore, n: int, loops: int, rng: random.Random) -> None:
    for _ in range(loops):
        await sem.acquire(n)
        assert sem.held <= sem.size
        await trio.sleep(rng.random() / 1000)
        sem.release(n)


async def test_weighted(autojump_clock: trio.testing.MockClock) -> None:
    # TestWeighted: n tasks of weights 0..n-1 hammer a semaphore of size n.
    n = 4
    sem = WeightedSemaphore(n)
    rng = random.Random(1)
    async with trio.open_nursery() as nursery:
        for i in range(n):
            nursery.start_soon(_hammer, sem, i, 10_000 // n, rng)
    assert sem.held == 0
    assert sem.statistics().tasks_waiting == 0


def test_weighted_over_release() -> None:
    # TestWeightedPanic: Go panics; we raise and leave the count alone.
    sem = WeightedSemaphore(1)
    with pytest.raises(ValueError, match="released more than held"):
        sem.release(1)
    assert sem.held == 0
    assert sem.try_acquire(1)


async def test_weighted_try_acquire() -> None:
    sem = WeightedSemaphore(2)
    tries = []
    await sem.acquire(1)
    tries.append(sem.try_acquire(1))
    tries.append(sem.try_acquire(1))
    sem.release(2)
    tries.append(sem.try_acquire(1))
    await sem.acquire(1)
    tries.append(sem.try_acquire(1))
    assert tries == [True, False, True, False]


async def test_weighted_acquire(autojump_clock: trio.testing.MockClock) -> None:
    sem = WeightedSemaphore(2)

    async def acquire_within_10ms(n: int) -> bool:
        with trio.move_on_after(0.010):
            await sem.acquire(n)
            return True
        return False

    tries = []
    await sem.acquire(1)
    tries.append(await acquire_within_10ms(1))
    tries.append(await acquire_within_10ms(1))
    sem.release(2)
    tries.append(await acquire_within_10ms(1))
    await sem.acquire(1)
    tries.append(await acquire_within_10ms(1))
    assert tries == [True, False, True, False]
    assert sem.held == 2


async def test_weighted_doesnt_block_if_too_big(autojump_clock: trio.testing.MockClock) -> None:
    n = 2
    sem = WeightedSemaphore(n)
    done = 0

    async def small() -> None:
        nonlocal done
        await sem.acquire(1)
        await trio.sleep(0.001)
        sem.release(1)
        done += 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sem.acquire, n + 1)
        await trio.testing.wait_all_tasks_blocked()
        with trio.fail_after(1):
            async with trio.open_nursery() as smalls:
                for _ in range(n * 3):
                    smalls.start_soon(small)
        nursery.cancel_scope.cancel()
    assert done == n * 3
    assert sem.held == 0


async def test_large_acquire_doesnt_starve(autojump_clock: trio.testing.MockClock) -> None:
    # n workers each hold one token and keep releasing and re-acquiring it. With
    # barging, a worker would always take its token back and acquire(n) would never
    # succeed; fail_after turns that starvation into a failure instead of a hang.
    n = 4
    sem = WeightedSemaphore(n)
    running = True

    async def worker() -> None:
        try:
            while running:
                await trio.sleep(0.001)
                sem.release(1)
                await sem.acquire(1)
        finally:
            sem.release(1)

    async with trio.open_nursery() as nursery:
        for _ in range(n):
            await sem.acquire(1)
            nursery.start_soon(worker)
        with trio.fail_after(1):
            await sem.acquire(n)
        running = False
        sem.release(n)
    assert sem.held == 0


async def test_alloc_cancel_doesnt_starve(autojump_clock: trio.testing.MockClock) -> None:
    # Go issue 37852: a heavy waiter at the head gives up; the light waiter queued
    # behind it must be granted at that moment, not at the next release.
    sem = WeightedSemaphore(10)
    await sem.acquire(1)  # a reader holds one token
    granted_at: list[float] = []

    async def writer() -> None:
        with trio.move_on_after(0.3):
            await sem.acquire(10)
            raise AssertionError("the writer cannot get 10 tokens while a reader holds one")

    async def reader() -> None:
        await sem.acquire(1)
        granted_at.append(trio.current_time())
        sem.release(1)

    start = trio.current_time()
    with trio.fail_after(10):  # without the wake-up the reader would sleep forever
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer)
            await trio.testing.wait_all_tasks_blocked()
            nursery.start_soon(reader)
            await trio.testing.wait_all_tasks_blocked()
            assert granted_at == []  # queued behind the writer: FIFO, no barging
    assert granted_at == [start + 0.3]


async def test_weighted_acquire_canceled() -> None:
    # Go issue 63615.
    sem = WeightedSemaphore(2)
    await sem.acquire(1)
    scope = trio.CancelScope()

    async def cancel_then_release() -> None:
        await trio.testing.wait_all_tasks_blocked()
        scope.cancel()
        sem.release(1)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(cancel_then_release)
        # The cancellation happens before the tokens are free, so acquire must fail.
        with scope:
            await sem.acquire(2)
        assert scope.cancelled_caught
    # Both tokens are back: nothing leaked to the cancelled waiter.
    assert sem.try_acquire(2)
    sem.release(2)
    # And a cancelled scope wins even when acquiring would not block.
    with trio.CancelScope() as cancelled:
        cancelled.cancel()
        await sem.acquire(1)
    assert cancelled.cancelled_caught
    assert sem.held == 0


def _collatz_steps(n: int) -> int:
    steps = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


async def test_example_worker_pool() -> None:
    # Example_workerPool: at most max_workers tasks at once; acquiring the whole
    # semaphore at the end waits for the last of them.
    max_workers = 2
    sem = WeightedSemaphore(max_workers)
    out = [0] * 32
    running = peak = 0

    async def work(i: int) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        try:
            await trio.lowlevel.checkpoint()
            out[i] = _collatz_steps(i + 1)
        finally:
            running -= 1
            sem.release(1)

    async with trio.open_nursery() as nursery:
        for i in range(len(out)):
            await sem.acquire(1)
            nursery.start_soon(work, i)
        await sem.acquire(max_workers)
        assert out[:10] == [0, 1, 7, 2, 5, 8, 16, 3, 19, 6]
        assert out == [_collatz_steps(i + 1) for i in range(len(out))]
        sem.release(max_workers)
    assert peak == max_workers

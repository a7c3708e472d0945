"""WeightedSemaphore semantics beyond Go's tests: validation, checkpoints, heavy requests,
resizing, cancellation and KeyboardInterrupt protection."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Awaitable, Callable
from types import FrameType
from typing import Any

import pytest
import trio
import trio.testing
from trio.testing import assert_checkpoints, assert_no_checkpoints, wait_all_tasks_blocked

import clonegate._domain.semaphore as semaphore_module
from clonegate import WeightedSemaphore, WeightedSemaphoreStatistics


def _state(sem: WeightedSemaphore) -> WeightedSemaphoreStatistics:
    return sem.statistics()


def _taker(sem: WeightedSemaphore, order: list[str]) -> Callable[[str, int], Awaitable[None]]:
    """A task body that acquires ``n`` tokens, then records ``name``: grants in order."""

    async def take(name: str, n: int) -> None:
        await sem.acquire(n)
        order.append(name)

    return take


@pytest.mark.parametrize("bad", [1.0, "1", None, True, False])
def test_size_must_be_an_int(bad: Any) -> None:
    with pytest.raises(TypeError, match="size must be an int"):
        WeightedSemaphore(bad)


def test_size_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="size must be >= 0"):
        WeightedSemaphore(-1)
    assert WeightedSemaphore(0).size == 0


@pytest.mark.parametrize("bad", [1.5, "2", None, True])
async def test_weights_must_be_ints(bad: Any) -> None:
    sem = WeightedSemaphore(3)
    before = _state(sem)
    for call in (sem.try_acquire, sem.acquire_nowait, sem.release, sem.hold):
        with pytest.raises(TypeError, match="n must be an int"):
            call(bad)
    with pytest.raises(TypeError, match="n must be an int"):
        await sem.acquire(bad)
    assert _state(sem) == before


async def test_negative_weights_are_rejected_before_anything_changes() -> None:
    sem = WeightedSemaphore(3)
    await sem.acquire(2)
    before = _state(sem)
    for call in (sem.try_acquire, sem.acquire_nowait, sem.release, sem.hold):
        with pytest.raises(ValueError, match="n must be >= 0"):
            call(-1)
    with pytest.raises(ValueError, match="n must be >= 0"):
        await sem.acquire(-1)
    assert _state(sem) == before


async def test_over_release_changes_nothing() -> None:
    sem = WeightedSemaphore(5)
    await sem.acquire(2)
    with pytest.raises(ValueError, match=r"released more than held: release\(3\) with 2 held"):
        sem.release(3)
    assert sem.held == 2
    sem.release(2)
    assert sem.held == 0


async def test_any_task_may_release() -> None:
    sem = WeightedSemaphore(1)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sem.acquire, 1)
    assert sem.held == 1
    sem.release()  # not the task that acquired
    assert sem.held == 0


def test_statistics_are_frozen_and_exact() -> None:
    sem = WeightedSemaphore(4)
    assert sem.try_acquire(3)
    stats = sem.statistics()
    assert stats == WeightedSemaphoreStatistics(
        size=4, held=3, available=1, tasks_waiting=0, weight_waiting=0
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        stats.held = 0  # type: ignore[misc]


async def test_acquire_is_a_checkpoint_on_every_path() -> None:
    sem = WeightedSemaphore(1)
    with assert_checkpoints():
        await sem.acquire(1)  # fast path
    with assert_checkpoints():
        await sem.acquire(0)  # zero weight, fast path

    async def slow_path() -> None:
        with assert_checkpoints():
            await sem.acquire(1)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(slow_path)
        await wait_all_tasks_blocked()
        sem.release(1)
    assert sem.held == 1


async def test_acquire_in_cancelled_scope_raises_even_with_free_tokens() -> None:
    sem = WeightedSemaphore(3)
    with trio.CancelScope() as scope:
        scope.cancel()
        await sem.acquire(1)
    assert scope.cancelled_caught
    assert sem.held == 0
    with trio.CancelScope() as scope:
        scope.cancel()
        async with sem.hold(0):
            raise AssertionError("not reached")
    assert scope.cancelled_caught


async def test_sync_methods_are_never_checkpoints() -> None:
    sem = WeightedSemaphore(2)
    with assert_no_checkpoints():
        assert sem.try_acquire(1)
        sem.acquire_nowait(1)
        with pytest.raises(trio.WouldBlock):
            sem.acquire_nowait(1)
        sem.release(2)
        sem.statistics()
        sem.size = 3
    hold = sem.hold(2)
    await hold.__aenter__()
    with assert_no_checkpoints():
        await hold.__aexit__(None, None, None)
    await sem.__aenter__()
    with assert_no_checkpoints():
        await sem.__aexit__(None, None, None)
    assert sem.held == 0


async def test_no_barging_past_the_queue() -> None:
    sem = WeightedSemaphore(3)
    await sem.acquire(2)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sem.acquire, 2)  # waits: only 1 free
        await wait_all_tasks_blocked()
        # One token is free, but somebody is queued: newcomers wait their turn.
        assert sem.available == 1
        assert not sem.try_acquire(1)
        assert not sem.try_acquire(0)
        with pytest.raises(trio.WouldBlock):
            sem.acquire_nowait(1)
        sem.release(2)
    assert sem.held == 2


async def test_head_of_line_blocking_is_fifo() -> None:
    sem = WeightedSemaphore(4)
    await sem.acquire(4)
    order: list[str] = []
    take = _taker(sem, order)

    async with trio.open_nursery() as nursery:
        for name, n in [("heavy", 3), ("light", 1)]:
            nursery.start_soon(take, name, n)
            await wait_all_tasks_blocked()
        sem.release(2)  # 2 free: "light" would fit, but "heavy" is ahead and does not
        await wait_all_tasks_blocked()
        assert order == []
        sem.release(1)  # 3 free: heavy fits, then nothing is left for light
        await wait_all_tasks_blocked()
        assert order == ["heavy"]
        sem.release(1)
    assert order == ["heavy", "light"]


async def test_zero_weight_waits_its_turn() -> None:
    sem = WeightedSemaphore(1)
    await sem.acquire(1)
    order: list[str] = []
    take = _taker(sem, order)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take, "one", 1)
        await wait_all_tasks_blocked()
        nursery.start_soon(take, "zero", 0)
        await wait_all_tasks_blocked()
        assert order == []  # zero weight, but queued behind "one"
        sem.release(1)
    assert sorted(order) == ["one", "zero"]
    assert sem.held == 1


async def test_tokens_are_assigned_on_wake_up() -> None:
    sem = WeightedSemaphore(1)
    await sem.acquire(1)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(sem.acquire, 1)
        await wait_all_tasks_blocked()
        sem.release(1)
        # The waiter has not run yet, but the token is already its own.
        assert sem.held == 1
        assert not sem.try_acquire(1)


async def test_granted_then_cancelled_keeps_its_tokens() -> None:
    # Go has a race here (granted, then ctx done: it gives the tokens back and fails).
    # In trio, a task rescheduled with its grant cannot also be cancelled out of the
    # same wait: acquire returns normally and the cancellation lands at the next
    # checkpoint, while the task holds the tokens and can release them in a finally.
    sem = WeightedSemaphore(1)
    await sem.acquire(1)
    returned = False
    scope = trio.CancelScope()

    async def waiter() -> None:
        nonlocal returned
        with scope:
            await sem.acquire(1)
            returned = True
            try:
                await trio.lowlevel.checkpoint()
            finally:
                sem.release(1)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiter)
        await wait_all_tasks_blocked()
        sem.release(1)  # grants the waiter...
        scope.cancel()  # ...which is cancelled before it runs
    assert returned
    assert scope.cancelled_caught
    assert sem.held == 0


async def test_cancelled_head_wakes_the_waiters_behind_it() -> None:
    sem = WeightedSemaphore(5)
    await sem.acquire(2)
    heavy_scope = trio.CancelScope()
    order: list[str] = []

    async def heavy() -> None:
        with heavy_scope:
            await sem.acquire(5)

    async def light(name: str) -> None:
        await sem.acquire(1)
        order.append(name)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(heavy)
        await wait_all_tasks_blocked()
        nursery.start_soon(light, "a")
        await wait_all_tasks_blocked()
        nursery.start_soon(light, "b")
        await wait_all_tasks_blocked()
        assert order == []
        heavy_scope.cancel()
        await wait_all_tasks_blocked()
        # Nobody released anything: the cancellation itself granted them.
        assert sorted(order) == ["a", "b"]
    assert sem.held == 4
    assert sem.statistics().weight_waiting == 0


async def test_cancelling_a_middle_waiter_wakes_nobody() -> None:
    sem = WeightedSemaphore(3)
    await sem.acquire(2)
    scope = trio.CancelScope()
    order: list[str] = []

    async def take(name: str, n: int, cancel_scope: trio.CancelScope | None = None) -> None:
        with cancel_scope or trio.CancelScope():
            await sem.acquire(n)
            order.append(name)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take, "head", 2)
        await wait_all_tasks_blocked()
        nursery.start_soon(take, "middle", 1, scope)
        await wait_all_tasks_blocked()
        nursery.start_soon(take, "tail", 1)
        await wait_all_tasks_blocked()
        scope.cancel()
        await wait_all_tasks_blocked()
        assert order == []  # the head still blocks the tail
        assert sem.statistics().tasks_waiting == 2
        sem.release(1)  # 2 free: the head fits, then nothing is left for the tail
        await wait_all_tasks_blocked()
        assert order == ["head"]
        sem.release(1)
    assert order == ["head", "tail"]


async def test_deadline_while_queued(autojump_clock: trio.testing.MockClock) -> None:
    sem = WeightedSemaphore(1)
    await sem.acquire(1)
    with trio.move_on_after(5) as scope:
        await sem.acquire(1)
    assert scope.cancelled_caught
    assert trio.current_time() == 5
    assert sem.statistics().tasks_waiting == 0
    assert sem.held == 1


async def test_too_heavy_never_blocks_others_and_waits_for_cancel() -> None:
    sem = WeightedSemaphore(2)
    assert not sem.try_acquire(3)
    got: list[str] = []
    scope = trio.CancelScope()

    async def too_heavy() -> None:
        with scope:
            await sem.acquire(3)
            got.append("heavy")

    async def light() -> None:
        async with sem:
            got.append("light")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(too_heavy)
        await wait_all_tasks_blocked()
        stats = sem.statistics()
        assert (stats.tasks_waiting, stats.weight_waiting) == (1, 3)
        # Not queued: the fast path still works and nobody waits behind it.
        assert sem.try_acquire(2)
        sem.release(2)
        nursery.start_soon(light)
        await wait_all_tasks_blocked()
        assert got == ["light"]
        scope.cancel()
    assert scope.cancelled_caught
    assert sem.statistics() == WeightedSemaphoreStatistics(2, 0, 2, 0, 0)


async def test_growth_lets_a_set_aside_request_in_at_its_place_of_arrival() -> None:
    sem = WeightedSemaphore(2)
    await sem.acquire(1)
    order: list[str] = []
    take = _taker(sem, order)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take, "heavy", 3)  # too heavy for size 2: set aside
        await wait_all_tasks_blocked()
        nursery.start_soon(take, "two", 2)  # queued: only 1 free
        await wait_all_tasks_blocked()
        sem.size = 3  # 2 free; "heavy" fits the size now and came first, so it is the head
        await wait_all_tasks_blocked()
        assert order == []
        sem.release(1)  # 3 free: heavy, then nothing left for "two"
        await wait_all_tasks_blocked()
        assert order == ["heavy"]
        sem.release(3)
    assert order == ["heavy", "two"]
    assert sem.held == 2


async def test_shrinking_sets_aside_waiters_heavier_than_the_new_size() -> None:
    sem = WeightedSemaphore(5)
    await sem.acquire(2)
    order: list[str] = []
    take = _taker(sem, order)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take, "four", 4)  # head: needs 4, 3 free
        await wait_all_tasks_blocked()
        nursery.start_soon(take, "one", 1)
        await wait_all_tasks_blocked()
        assert order == []
        # "four" can never fit size 3; left at the head it would block "one" for good.
        sem.size = 3
        await wait_all_tasks_blocked()
        assert order == ["one"]
        sem.size = 4  # "four" fits the size again and queues; 1 free, so it waits
        await wait_all_tasks_blocked()
        assert order == ["one"]
        sem.release(3)
    assert order == ["one", "four"]


async def test_a_shrink_and_grow_keep_the_order_of_arrival() -> None:
    sem = WeightedSemaphore(5)
    await sem.acquire(4)
    order: list[str] = []
    take = _taker(sem, order)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take, "A4", 4)
        await wait_all_tasks_blocked()
        nursery.start_soon(take, "B1", 1)
        await wait_all_tasks_blocked()
        sem.size = 3  # A4 steps aside, but 0 are free: B1 still waits
        sem.size = 5  # A4 is back, ahead of B1 where it arrived
        await wait_all_tasks_blocked()
        assert order == []
        sem.release(3)  # 4 free: A4 first, then nothing left for B1
        await wait_all_tasks_blocked()
        assert order == ["A4"]
        sem.release(1)
    assert order == ["A4", "B1"]


async def test_shrinking_below_held_admits_nobody_until_released() -> None:
    sem = WeightedSemaphore(4)
    await sem.acquire(4)
    got = trio.Event()

    async def take() -> None:
        await sem.acquire(1)
        got.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(take)
        await wait_all_tasks_blocked()
        sem.size = 2
        assert (sem.held, sem.available) == (4, 0)
        sem.release(2)  # held 2 == size 2: still full
        await wait_all_tasks_blocked()
        assert not got.is_set()
        sem.release(1)
        await got.wait()
    assert sem.held == 2


def test_public_methods_run_with_keyboard_interrupt_protection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every public entry point validates its argument first; record whether that
    # happens inside a KI-protected frame.
    seen: list[bool] = []
    real_checked = semaphore_module._checked

    def spying_checked(value: object, name: str) -> int:
        seen.append(trio.lowlevel.currently_ki_protected())
        return real_checked(value, name)

    monkeypatch.setattr(semaphore_module, "_checked", spying_checked)

    async def main() -> None:
        sem = WeightedSemaphore(2)
        sem.try_acquire(1)
        sem.acquire_nowait(1)
        sem.release(2)
        await sem.acquire(1)
        sem.size = 3
        async with sem:
            pass
        sem.release(1)

    trio.run(main)
    assert len(seen) == 9
    assert all(seen[1:]), seen  # [0] is the constructor, which needs no protection


def test_hold_is_protected_from_keyboard_interrupt_between_acquire_and_the_body() -> None:
    # A KeyboardInterrupt landing after acquire() returned but before __aenter__ did
    # would leak the tokens. Check the protection in __aenter__'s and __aexit__'s own
    # frames, as each of them returns.
    names = {
        semaphore_module._Hold.__aenter__.__code__: "enter",
        semaphore_module._Hold.__aexit__.__code__: "exit",
    }
    seen: dict[str, bool] = {}

    def on_return(frame: FrameType, event: str, arg: object) -> Any:
        if event == "return":
            seen[names[frame.f_code]] = trio.lowlevel.currently_ki_protected()
        return on_return

    def tracer(frame: FrameType, event: str, arg: object) -> Any:
        return on_return if frame.f_code in names else None

    async def main() -> None:
        sem = WeightedSemaphore(2)
        sys.settrace(tracer)
        try:
            async with sem.hold(2):
                pass
        finally:
            sys.settrace(None)

    trio.run(main)
    assert seen == {"enter": True, "exit": True}

"""The adaptive per-host limit (issue 43): AIMD on a WeightedSemaphore's size. Additive
increase after busy successes, one multiplicative decrease per generation of permits on
429, 503 with Retry-After or a burst of resets, between 1 and the ceiling; waiters keep
their FIFO order through every resize. MockClock; the simulated host at the end
records what it saw."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing
from trio.testing import assert_checkpoints, assert_no_checkpoints, wait_all_tasks_blocked

from clonegate._domain.adaptive import AdaptiveLimit, Permit, Signal
from clonegate._domain.limits import Limiter
from clonegate._domain.semaphore import WeightedSemaphore
from clonegate._usecase.gate import CloneGate


def _run(main: Callable[[], Awaitable[None]]) -> None:
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def _reports(limit: AdaptiveLimit, signals: list[Signal]) -> None:
    """Clones that run at once, then end with these signals, in this order."""
    permits: list[Permit] = []
    async with trio.open_nursery() as nursery:
        done = trio.Event()

        async def clone() -> None:
            async with limit.hold() as permit:
                permits.append(permit)
                await done.wait()

        for _ in signals:
            nursery.start_soon(clone)
        await wait_all_tasks_blocked()
        for permit, signal in zip(permits, signals, strict=True):
            permit.report(signal)
        done.set()


@pytest.mark.parametrize("signal", [Signal.THROTTLED, Signal.UNAVAILABLE_RETRY_AFTER])
def test_a_throttling_signal_multiplies_the_limit_down(signal: Signal) -> None:
    async def main() -> None:
        limit = AdaptiveLimit(8)
        await _reports(limit, [signal])
        stats = limit.statistics()
        assert (stats.limit, stats.size, limit.semaphore.size) == (6.0, 6, 6)
        assert [(c.size, c.signal) for c in stats.timeline] == [(8, Signal.OTHER), (6, signal)]

    _run(main)


def test_clones_admitted_under_the_old_limit_decrease_it_once() -> None:
    async def main() -> None:
        limit = AdaptiveLimit(8)
        await _reports(limit, [Signal.THROTTLED] * 5)  # five 429s of one wave
        stats = limit.statistics()
        assert (stats.size, stats.generation, stats.ignored_signals) == (6, 1, 4)
        await _reports(limit, [Signal.THROTTLED] * 2)  # a wave admitted after it
        assert limit.statistics().size == 4  # 6 * 0.75 = 4.5

    _run(main)


def test_never_below_one() -> None:
    async def main() -> None:
        limit = AdaptiveLimit(2)
        for _ in range(5):
            await _reports(limit, [Signal.THROTTLED])
        assert (limit.limit, limit.semaphore.size) == (1.0, 1)

    _run(main)


def test_busy_successes_add_a_step_per_round_up_to_the_ceiling() -> None:
    async def main() -> None:
        assert AdaptiveLimit(5).increase == 0.5  # half a clone per round by default
        limit = AdaptiveLimit(5, initial=2, increase=1.0)
        await _reports(limit, [Signal.SUCCESS, Signal.SUCCESS])  # 2 + 1/2 + 1/2.5
        assert (limit.semaphore.size, round(limit.limit, 3)) == (2, 2.9)
        await _reports(limit, [Signal.SUCCESS])  # alone: 1 < 2.9 / 2, not busy
        assert limit.semaphore.size == 2
        await _reports(limit, [Signal.OTHER, Signal.SUCCESS])  # the second was busy
        assert limit.semaphore.size == 3
        for _ in range(30):
            await _reports(limit, [Signal.SUCCESS] * limit.semaphore.size)
        stats = limit.statistics()
        assert (stats.limit, stats.size, stats.increases) == (5.0, 5, 3)

    _run(main)


def test_a_limit_nobody_uses_does_not_grow() -> None:
    async def main() -> None:
        limit = AdaptiveLimit(8, initial=4)
        for _ in range(20):
            await _reports(limit, [Signal.SUCCESS])  # one clone at a time: 1 < 4 / 2
        assert limit.limit == 4.0

    _run(main)


def test_resets_count_only_in_a_burst() -> None:
    async def main() -> None:
        limit = AdaptiveLimit(8, reset_burst=3)
        # Two resets, a success between the next two: never three in a row.
        await _reports(limit, [Signal.RESET, Signal.RESET, Signal.SUCCESS, Signal.RESET])
        await _reports(limit, [Signal.RESET, Signal.OTHER])
        assert limit.statistics().decreases == 0
        await _reports(limit, [Signal.RESET])  # the third in a row ("other" is no news)
        assert (limit.statistics().decreases, limit.semaphore.size) == (1, 6)

    _run(main)


def test_a_permit_given_back_without_a_report_changes_nothing() -> None:
    async def main() -> None:
        limit = AdaptiveLimit(4)
        with pytest.raises(RuntimeError):
            async with limit.hold():
                raise RuntimeError("a clone that failed otherwise")
        async with limit.hold() as permit:
            permit.report(Signal.THROTTLED)
            permit.report(Signal.THROTTLED)  # a second report is ignored
        stats = limit.statistics()
        assert (stats.held, stats.generation, stats.size) == (0, 1, 3)

    _run(main)


def test_growth_grants_the_waiters_in_the_order_they_came() -> None:
    order: list[str] = []

    async def main() -> None:
        limit = AdaptiveLimit(3, initial=1, increase=1.0)
        release = trio.Event()

        async def clone(name: str) -> None:
            async with limit.hold():
                order.append(name)
                await release.wait()

        async with trio.open_nursery() as nursery:
            async with limit.hold() as first:
                for name in "abc":
                    nursery.start_soon(clone, name)
                    await wait_all_tasks_blocked()
                first.report(Signal.SUCCESS)  # 1 + 1/1: size 2, one more admitted
                await wait_all_tasks_blocked()
                assert order == ["a"]
            await wait_all_tasks_blocked()  # first's token went to b
            assert order == ["a", "b"]
            release.set()

    _run(main)
    assert order == ["a", "b", "c"]


def test_a_shrink_takes_nothing_back() -> None:
    async def main() -> None:
        semaphore = WeightedSemaphore(1)
        limit = AdaptiveLimit(4, semaphore=semaphore)  # resizes the semaphore it is given
        assert semaphore.size == 4
        release = trio.Event()
        permits: list[Permit] = []

        async def clone() -> None:
            async with limit.hold() as permit:
                permits.append(permit)
                await release.wait()

        async with trio.open_nursery() as nursery:
            for _ in range(4):
                nursery.start_soon(clone)
            await wait_all_tasks_blocked()
            permits[0].report(Signal.THROTTLED)
            nursery.start_soon(clone)
            await wait_all_tasks_blocked()
            assert (len(permits), semaphore.held, semaphore.size) == (4, 4, 3)
            release.set()
        assert len(permits) == 5

    _run(main)


def test_hold_is_a_checkpoint_and_cancelled_while_waiting_holds_nothing() -> None:
    async def main() -> None:
        limit = AdaptiveLimit(1)
        with assert_checkpoints():
            async with limit.hold() as permit:
                with assert_no_checkpoints():
                    permit.report(Signal.SUCCESS)
                    limit.statistics()
        async with limit.hold():
            with trio.move_on_after(5.0) as scope:
                async with limit.hold():
                    pass  # never reached: the one token is held
            assert scope.cancelled_caught
        assert limit.statistics().held == 0

    _run(main)


def test_arguments_are_checked() -> None:
    for bad in (
        {"ceiling": 0},
        {"ceiling": 2, "initial": 3},
        {"ceiling": 2, "decrease": 1.0},
        {"ceiling": 2, "reset_burst": 0},
        {"ceiling": 2, "increase": 0},
        {"ceiling": True},
    ):
        with pytest.raises(ValueError, match="must be"):
            AdaptiveLimit(**bad)


def test_against_a_host_that_throttles_beyond_k_the_limit_settles_at_k() -> None:
    """200 clones at a ceiling of 8 against a host that answers 429 to a clone that
    would be its fourth at once (K = 3): after the first decreases, the host never
    sees more than K + 1 clones arrive at once, the limit moves between K and K + 1,
    and a throttled attempt is the exception."""
    k = 3
    seen: list[int] = []  # the host's concurrency at each clone's arrival
    throttled: list[float] = []
    sizes: list[int] = []

    async def main() -> None:
        limit = AdaptiveLimit(8)
        running = 0

        async def clone(left: list[int]) -> None:
            nonlocal running
            while left:
                left.pop()
                while True:
                    async with limit.hold() as permit:
                        running += 1
                        seen.append(running)
                        if running > k:
                            running -= 1
                            permit.report(Signal.THROTTLED)
                            throttled.append(trio.current_time())
                        else:
                            await trio.sleep(1.0)
                            running -= 1
                            permit.report(Signal.SUCCESS)
                            break
                    await trio.sleep(1.0)  # Retry-After: 1, out of the limit

        work = list(range(200))
        async with trio.open_nursery() as nursery:
            for _ in range(8):
                nursery.start_soon(clone, work)
        sizes.extend(change.size for change in limit.statistics().timeline)

    _run(main)
    assert sizes[:4] == [8, 6, 4, 3]  # the first wave of 429s
    assert set(sizes[8:]) == {k, k + 1}
    assert max(seen[40:]) == k + 1
    assert len(throttled) <= 200 // 5


def test_it_is_a_limiter_the_gate_holds_per_host_as_it_is() -> None:
    """The port the gate already takes (ADR 0015's ``Limiter``): one adaptive limit
    per host through ``host_limiter``, no change to the gate."""
    limits: dict[str, AdaptiveLimit] = {}

    def per_host(host: str) -> Limiter:
        return limits.setdefault(host, AdaptiveLimit(2))

    async def main() -> None:
        gate = CloneGate(8, host_limiter=per_host)
        release = trio.Event()

        async def clone(index: int, host: str) -> None:
            async with gate.slot(index, f"https://{host}/r{index}", 1, host=host):
                await release.wait()

        async with trio.open_nursery() as nursery:
            for index, host in enumerate(["a.test"] * 3 + ["b.test"] * 2):
                nursery.start_soon(clone, index, host)
            await wait_all_tasks_blocked()
            held = {host: limit.statistics().held for host, limit in limits.items()}
            assert held == {"a.test": 2, "b.test": 2}
            assert limits["a.test"].semaphore.statistics().tasks_waiting == 1
            release.set()

    _run(main)


def test_entering_and_leaving_hold_are_protected_from_keyboard_interrupt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A Ctrl-C between acquiring the tokens and the body (or between the report and
    # the release) would leak them; record the protection where hold does its work.
    seen: list[bool] = []
    note_start, observe = AdaptiveLimit._note_start, AdaptiveLimit._observe

    def spy_start(self: AdaptiveLimit) -> None:
        seen.append(trio.lowlevel.currently_ki_protected())
        note_start(self)

    def spy_observe(self: AdaptiveLimit, permit: Permit, signal: Signal) -> None:
        seen.append(trio.lowlevel.currently_ki_protected())
        observe(self, permit, signal)

    monkeypatch.setattr(AdaptiveLimit, "_note_start", spy_start)
    monkeypatch.setattr(AdaptiveLimit, "_observe", spy_observe)

    async def main() -> None:
        async with AdaptiveLimit(1).hold():
            assert not trio.lowlevel.currently_ki_protected()  # the body is the caller's

    _run(main)
    assert seen == [True, True]


def test_scattered_resets_leave_the_limit_alone_a_wall_of_them_does_not() -> None:
    """The benchmark's 5% of resets (every 20th repository's first attempt) against a
    host with room for all: no decrease. A host that resets every connection beyond
    K = 2 (git-xargs #139) brings the limit down to K."""

    def run(resets: Callable[[int, int], bool]) -> AdaptiveLimit:
        limit = AdaptiveLimit(8)

        async def main() -> None:
            running = 0

            async def clone(left: list[int]) -> None:
                nonlocal running
                while left:
                    repository = left.pop()
                    while True:
                        async with limit.hold() as permit:
                            running += 1
                            reset = resets(repository, running)  # at its arrival
                            if not reset:
                                await trio.sleep(1.0)
                            running -= 1
                            permit.report(Signal.RESET if reset else Signal.SUCCESS)
                        if not reset:
                            break
                        await trio.sleep(1.0)  # its backoff, out of the limit

            work = list(range(200))
            async with trio.open_nursery() as nursery:
                for _ in range(8):
                    nursery.start_soon(clone, work)

        _run(main)
        return limit

    seen: set[int] = set()

    def every_20th_once(repository: int, running: int) -> bool:
        first = repository not in seen
        seen.add(repository)
        return first and repository % 20 == 0

    scattered = run(every_20th_once)
    assert (scattered.statistics().decreases, scattered.semaphore.size) == (0, 8)
    wall = run(lambda repository, running: running > 2)
    assert wall.semaphore.size <= 3
    assert wall.statistics().decreases >= 1

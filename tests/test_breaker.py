"""The per-host breaker (issue 43): closed, open after N connection failures in a row,
one probe after a cool-down (doubled after each failed probe), closed by a probe that
connects, the host given up after too many failed probes or when the run says so.
MockClock; the simulated host records every connection attempt it saw."""

from __future__ import annotations

import pickle
from collections.abc import Awaitable, Callable

import pytest
import trio
import trio.testing
from trio.testing import assert_checkpoints, assert_no_checkpoints, wait_all_tasks_blocked

from clonegate._domain.breaker import Attempt, Breaker, BreakerState, HostUnavailableError


def _run(main: Callable[[], Awaitable[None]]) -> None:
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))


async def _fail(breaker: Breaker, times: int) -> None:
    for _ in range(times):
        async with breaker.attempt() as attempt:
            attempt.failed("Connection refused")


async def _probe_until_given_up(breaker: Breaker, probes: list[float], reason: str) -> None:
    """Probe as soon as allowed, failing each time, recording when each probe went."""
    while True:
        async with breaker.attempt() as attempt:
            probes.append(trio.current_time())
            attempt.failed(reason)


def test_failures_in_a_row_open_it_and_a_connection_counts_them_again() -> None:
    async def main() -> None:
        breaker = Breaker("git.example", threshold=3)
        await _fail(breaker, 2)
        async with breaker.attempt() as attempt:
            attempt.connected()  # a 404 or a 429 too: the host is up
        await _fail(breaker, 2)
        assert breaker.state is BreakerState.CLOSED
        await _fail(breaker, 1)
        stats = breaker.statistics()
        assert (stats.state, stats.failures, stats.opened) == (BreakerState.OPEN, 5, 1)
        assert stats.reopen_at == trio.current_time() + breaker.cool_down

    _run(main)


def test_when_open_one_probe_goes_after_the_cool_down_and_the_rest_wait_for_it() -> None:
    events: list[tuple[str, float, bool]] = []

    async def main() -> None:
        breaker = Breaker("git.example", threshold=1, cool_down=5.0)
        await _fail(breaker, 1)
        probe_may_end = trio.Event()

        async def repository(name: str) -> None:
            async with breaker.attempt() as attempt:
                events.append((name, trio.current_time(), attempt.probe))
                if attempt.probe:
                    await probe_may_end.wait()
                attempt.connected()

        async with trio.open_nursery() as nursery:
            for name in "abc":
                nursery.start_soon(repository, name)
                await wait_all_tasks_blocked()  # in line in this order
            await trio.sleep(5.0)
            await wait_all_tasks_blocked()
            assert breaker.state is BreakerState.HALF_OPEN
            assert [e[0] for e in events] == ["a"]  # the probe alone
            assert breaker.statistics().tasks_waiting == 2
            await trio.sleep(7.0)  # the probe takes its time; nobody else goes
            assert len(events) == 1
            probe_may_end.set()
        assert breaker.statistics().state is BreakerState.CLOSED

    _run(main)
    # Closed, it lets every waiter go at once (in no particular order).
    assert sorted(events) == [("a", 5.0, True), ("b", 12.0, False), ("c", 12.0, False)]


def test_a_failed_probe_doubles_the_cool_down_and_too_many_give_the_host_up() -> None:
    probes: list[float] = []

    async def main() -> None:
        breaker = Breaker("git.example", threshold=1, cool_down=2.0, probes=3)
        await _fail(breaker, 1)
        with pytest.raises(HostUnavailableError) as raised:
            await _probe_until_given_up(breaker, probes, "Name or service not known")
        assert raised.value.failures == 4  # the opening failure and three probes
        assert raised.value.kind == "host_unavailable"
        assert "Name or service not known" in str(raised.value)
        assert breaker.state is BreakerState.GIVEN_UP

    _run(main)
    assert probes == [2.0, 6.0, 14.0]  # cool-downs of 2, 4, 8


def test_the_cool_down_stops_doubling_at_its_longest() -> None:
    probes: list[float] = []

    async def main() -> None:
        breaker = Breaker("h", threshold=1, cool_down=4.0, longest_cool_down=5.0, probes=4)
        await _fail(breaker, 1)
        with pytest.raises(HostUnavailableError):
            await _probe_until_given_up(breaker, probes, "refused")

    _run(main)
    assert probes == [4.0, 9.0, 14.0, 19.0]


def test_give_up_ends_every_wait_with_host_unavailable() -> None:
    outcomes: list[str] = []

    async def main() -> None:
        breaker = Breaker("git.example", threshold=2, cool_down=60.0)
        await _fail(breaker, 2)

        async def repository() -> None:
            try:
                async with breaker.attempt():
                    outcomes.append("tried")
            except HostUnavailableError as exc:
                outcomes.append(f"{exc.kind} after {exc.failures}")

        async with trio.open_nursery() as nursery:
            for _ in range(3):
                nursery.start_soon(repository)
            await wait_all_tasks_blocked()
            with assert_no_checkpoints():
                breaker.give_up()
        await repository()  # and any later attempt

    _run(main)
    assert outcomes == ["host_unavailable after 2"] * 4


def test_given_up_is_for_good_whatever_the_probe_out_then_reports() -> None:
    async def main() -> None:
        for report in ("failed", "connected"):
            breaker = Breaker("git.example", threshold=1, cool_down=1.0)
            await _fail(breaker, 1)
            await trio.sleep(1.0)
            async with breaker.attempt() as probe:
                assert probe.probe
                breaker.give_up()
                if report == "failed":
                    probe.failed("refused")
                else:
                    probe.connected()
            assert breaker.state is BreakerState.GIVEN_UP
            with pytest.raises(HostUnavailableError):
                await breaker.attempt().__aenter__()

    _run(main)


def test_a_closed_breaker_is_not_given_up() -> None:
    async def main() -> None:
        breaker = Breaker("git.example")
        breaker.give_up()
        async with breaker.attempt() as attempt:
            assert not attempt.probe

    _run(main)


def test_a_cancelled_probe_hands_the_probe_to_the_next_waiter_at_once() -> None:
    probes: list[tuple[str, float]] = []

    async def main() -> None:
        breaker = Breaker("git.example", threshold=1, cool_down=5.0)
        await _fail(breaker, 1)
        scopes: dict[str, trio.CancelScope] = {}

        async def repository(name: str) -> None:
            with trio.CancelScope() as scopes[name]:
                async with breaker.attempt() as attempt:
                    if attempt.probe:
                        probes.append((name, trio.current_time()))
                    await trio.sleep_forever()

        async with trio.open_nursery() as nursery:
            for name in "ab":
                nursery.start_soon(repository, name)
                await wait_all_tasks_blocked()
            await trio.sleep(6.0)
            assert probes == [("a", 5.0)]
            scopes["a"].cancel()  # the probe's repository hit its deadline
            await wait_all_tasks_blocked()
            assert probes == [("a", 5.0), ("b", 6.0)]
            scopes["b"].cancel()

    _run(main)


def test_a_waiter_cancelled_leaves_nothing_behind() -> None:
    async def main() -> None:
        breaker = Breaker("git.example", threshold=1, cool_down=30.0)
        await _fail(breaker, 1)
        with trio.move_on_after(10.0) as scope:
            async with breaker.attempt():
                pass
        assert scope.cancelled_caught
        stats = breaker.statistics()
        assert (stats.tasks_waiting, stats.state, stats.failures) == (0, BreakerState.OPEN, 1)

    _run(main)


def test_failures_of_attempts_from_before_it_opened_change_nothing() -> None:
    async def main() -> None:
        breaker = Breaker("git.example", threshold=2, cool_down=5.0)
        old: list[Attempt] = []
        finish = trio.Event()

        async def in_flight() -> None:
            async with breaker.attempt() as attempt:
                old.append(attempt)
                await finish.wait()

        async with trio.open_nursery() as nursery:
            for _ in range(5):
                nursery.start_soon(in_flight)
            await wait_all_tasks_blocked()
            old[0].failed("refused")
            old[1].failed("refused")  # opens it
            opened_until = breaker.statistics().reopen_at
            assert opened_until == 5.0
            old[2].failed("refused")  # late news of the same outage
            assert breaker.statistics().reopen_at == opened_until
            assert breaker.statistics().failures == 3  # counted, though
            old[3].connected()  # but a connection is news: the host is back
            assert breaker.state is BreakerState.CLOSED
            old[4].failed("refused")  # older than the outage: not a new one beginning
            assert breaker.statistics().failures_in_a_row == 0
            finish.set()

    _run(main)


def test_attempt_is_a_checkpoint_on_every_path() -> None:
    async def main() -> None:
        breaker = Breaker("git.example", threshold=1)
        with assert_checkpoints():
            async with breaker.attempt() as attempt:
                with assert_no_checkpoints():
                    attempt.failed("refused")
                    breaker.statistics()
        breaker.give_up()
        with assert_checkpoints(), pytest.raises(HostUnavailableError):
            async with breaker.attempt():
                pass
        with trio.CancelScope() as scope:
            scope.cancel()
            async with Breaker("other").attempt():
                pytest.fail("a cancelled scope entered the attempt")
        assert scope.cancelled_caught

    _run(main)


def test_the_error_survives_a_process_boundary() -> None:
    error = HostUnavailableError("git.example", 7, "Connection refused")
    again = pickle.loads(pickle.dumps(error))
    assert (again.host, again.failures, again.reason, str(again)) == (
        error.host,
        error.failures,
        error.reason,
        str(error),
    )


def test_a_host_down_for_a_while_costs_a_few_attempts_not_one_per_repository() -> None:
    """Twenty repositories of a host that refuses connections until t = 20: the host
    sees the failures that open the breaker and one probe per cool-down, then every
    repository connects once it is back. Nothing is lost."""
    seen: list[tuple[float, bool]] = []  # (when, connected) for each connection attempt
    done: list[int] = []

    async def main() -> None:
        breaker = Breaker("git.example", threshold=3, cool_down=2.0, probes=5)

        async def repository(n: int) -> None:
            while True:
                async with breaker.attempt() as attempt:
                    now = trio.current_time()
                    seen.append((now, now >= 20.0))
                    if now >= 20.0:
                        attempt.connected()
                        done.append(n)
                        return
                    attempt.failed("Connection refused")
                await trio.sleep(1.0)  # the repository's own backoff

        async with trio.open_nursery() as nursery:
            for n in range(20):
                nursery.start_soon(repository, n)

    _run(main)
    assert sorted(done) == list(range(20))
    refused = [when for when, connected in seen if not connected]
    # 20 in flight when it opened, then probes at 2, 2+4, 6+8; the one at 14+16 connects.
    assert refused == [0.0] * 20 + [2.0, 6.0, 14.0]
    assert len(seen) == len(refused) + 20


def test_entering_and_leaving_an_attempt_are_protected_from_keyboard_interrupt(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A Ctrl-C between claiming the probe and the body would leave the breaker
    # half-open with no probe out; record the protection where attempt does its work.
    seen: list[bool] = []
    abandon = Attempt._abandon

    def spy_abandon(self: Attempt) -> None:
        seen.append(trio.lowlevel.currently_ki_protected())
        abandon(self)

    monkeypatch.setattr(Attempt, "_abandon", spy_abandon)

    async def main() -> None:
        breaker = Breaker("git.example", threshold=1, cool_down=1.0)
        await _fail(breaker, 1)
        await trio.sleep(1.0)
        async with breaker.attempt() as probe:
            seen.append(trio.lowlevel.currently_ki_protected())
            assert probe.probe

    _run(main)
    assert seen == [True, False, True]  # _fail's exit, the body (the caller's), the exit

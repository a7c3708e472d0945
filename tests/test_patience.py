"""Patience: retries through an outage with capped exponential backoff and jitter, logged
once per outage, up to a bound (ADR 0015, "Workers ride out Redis"). Virtual time:
trio's MockClock jumps over every wait, so the times below are the policy's own."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from clonegate.cluster import Patience
from clonegate.errors import LimiterUnavailableError


class Server:
    """A request that fails (an outage) until trio time ``back``, recording when each
    attempt came."""

    def __init__(self, back: float = float("inf")) -> None:
        self.back = back
        self.attempts: list[float] = []

    async def request(self) -> str:
        await trio.lowlevel.checkpoint()
        self.attempts.append(trio.current_time())
        if trio.current_time() < self.back:
            raise LimiterUnavailableError("Redis: Connection refused")
        return "answer"


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "clonegate"]


@pytest.fixture
def clock() -> trio.testing.MockClock:
    return trio.testing.MockClock(autojump_threshold=0)


def test_an_outage_is_two_lines_whoever_retries_through_it(
    clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    patience = Patience(60)
    server = Server(back=20.0)
    answers: list[str] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            for _ in range(3):  # a worker's read, renewal and heartbeat, at once

                async def one() -> None:
                    answers.append(await patience.call(server.request))

                nursery.start_soon(one)

    trio.run(main, clock=clock)
    assert answers == ["answer"] * 3
    assert len(server.attempts) > 6  # each caller retried, several times
    lines = _lines(caplog)
    assert len(lines) == 2, lines
    assert lines[0] == "Redis: Connection refused; retrying for up to 60 s"
    # Back at 20 s, seen by the first attempt after: at most one capped wait later.
    assert lines[1].startswith("Redis back after ")
    assert 20 <= float(lines[1].split()[3]) <= 25, lines[1]
    assert (patience.outages, patience.down) == (1, False)


def test_each_outage_is_told_apart(
    clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    patience = Patience(60)

    async def main() -> None:
        for start in (0.0, 100.0):
            await trio.sleep_until(start)
            assert await patience.call(Server(back=start + 5).request) == "answer"
            assert await patience.call(_answer) == "answer"  # up: nothing to say

    trio.run(main, clock=clock)
    assert patience.outages == 2
    assert [line.split(" after")[0] for line in _lines(caplog)] == [
        "Redis: Connection refused; retrying for up to 60 s",
        "Redis back",
        "Redis: Connection refused; retrying for up to 60 s",
        "Redis back",
    ]


async def _answer() -> str:
    await trio.lowlevel.checkpoint()
    return "answer"


def test_the_backoff_doubles_to_its_cap_and_the_jitter_only_shortens_it(
    clock: trio.testing.MockClock,
) -> None:
    patience = Patience(120, first=0.1, cap=5.0)
    server = Server(back=100.0)
    trio.run(patience.call, server.request, clock=clock)
    gaps = [b - a for a, b in zip(server.attempts, server.attempts[1:], strict=False)]
    for i, gap in enumerate(gaps):
        bound = min(0.1 * 2**i, 5.0)
        assert bound / 2 - 1e-9 <= gap <= bound + 1e-9, (i, gap)
    assert max(gaps) > 2.5  # it reached the cap's range
    # Bounded: about 100 s / at most 5 s between attempts, never a busy loop.
    assert 20 <= len(server.attempts) <= 60


def test_it_gives_up_once_the_outage_outlasts_the_patience(
    clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    patience = Patience(30)
    server = Server()

    async def main() -> float:
        with pytest.raises(LimiterUnavailableError) as raised:
            await patience.call(server.request)
        assert str(raised.value) == (
            "Redis: Connection refused (unavailable for 30 s: no more patience, 30 s)"
        )
        return trio.current_time()

    assert trio.run(main, clock=clock) == 30.0  # the last wait is cut to the patience
    assert len(_lines(caplog)) == 1  # the start; no end: it did not come back


def test_no_patience_is_one_attempt(clock: trio.testing.MockClock) -> None:
    server = Server()
    with pytest.raises(LimiterUnavailableError, match="no more patience"):
        trio.run(Patience(0).call, server.request, clock=clock)
    assert server.attempts == [0.0]


def test_a_refusal_is_not_retried(clock: trio.testing.MockClock) -> None:
    attempts = 0

    async def refused() -> None:
        nonlocal attempts
        attempts += 1
        await trio.lowlevel.checkpoint()
        error = LimiterUnavailableError("Redis: NOPERM this user has no permissions")
        error.retryable = False
        raise error

    with pytest.raises(LimiterUnavailableError, match="NOPERM"):
        trio.run(Patience(60).call, refused, clock=clock)
    assert attempts == 1


def test_patience_is_seconds_at_least_zero() -> None:
    for wrong in (-1, True, "300"):
        with pytest.raises(ValueError, match="patience must be"):
            Patience(wrong)  # type: ignore[arg-type]


def test_a_caller_gives_up_at_its_own_patience_though_others_succeed(
    clock: trio.testing.MockClock,
) -> None:
    # Issue 39's review: with the queue on one cluster node and the limit on another
    # that is gone, the queue's successes every few seconds ended the shared outage,
    # and the limit's caller never ran out of patience (it gave up at 70 s of 10).
    patience = Patience(10)
    gone, up = Server(), Server(back=0.0)
    gave_up: list[float] = []

    async def failing() -> None:
        with pytest.raises(LimiterUnavailableError, match="no more patience"):
            await patience.call(gone.request)
        gave_up.append(trio.current_time())

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(failing)
            with trio.move_on_after(300):  # virtual seconds: before, it never gave up
                while not gave_up:
                    await patience.call(up.request)
                    await trio.sleep(3)
            nursery.cancel_scope.cancel()

    trio.run(main, clock=clock)
    assert gave_up
    assert gave_up[0] <= 10 + 5  # its patience, and one capped wait at most

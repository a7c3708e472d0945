"""Backoff (issue 43): full jitter from a base to a cap, a server's Retry-After or
RateLimit-Reset honoured when longer, every wait cut to the repository's deadline.
Pure arithmetic: a seeded RNG, explicit clocks; no waiting."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime
from email.utils import format_datetime

import pytest
import trio
import trio.testing
from trio.testing import assert_no_checkpoints

from clonegate._domain.backoff import Backoff, parse_reset, parse_retry_after

WALL = 1_800_000_000.0  # a Unix time in 2027: the answer's arrival


class Draws(random.Random):
    """A random source that records each uniform draw's bounds and returns its top."""

    def __init__(self) -> None:
        super().__init__(0)
        self.bounds: list[tuple[float, float]] = []

    def uniform(self, a: float, b: float) -> float:
        self.bounds.append((a, b))
        return b


def test_the_window_doubles_from_the_base_up_to_the_cap() -> None:
    backoff = Backoff(base=0.5, cap=5.0)
    assert [backoff.window(n) for n in range(1, 7)] == [0.5, 1.0, 2.0, 4.0, 5.0, 5.0]
    assert backoff.window(10_000) == 5.0  # no overflow however many attempts


def test_full_jitter_draws_between_zero_and_the_window() -> None:
    draws = Draws()
    backoff = Backoff(base=1.0, cap=8.0, rng=draws)
    assert [backoff.delay(n, wall_now=WALL) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 8, 8]
    assert draws.bounds == [(0.0, 1.0), (0.0, 2.0), (0.0, 4.0), (0.0, 8.0), (0.0, 8.0)]


def test_a_seeded_source_gives_the_same_delays_and_they_spread() -> None:
    first, again = (Backoff(rng=random.Random(7)) for _ in range(2))
    assert [first.delay(3, wall_now=WALL) for _ in range(5)] == [
        again.delay(3, wall_now=WALL) for _ in range(5)
    ]
    backoff = Backoff(base=1.0, cap=4.0, rng=random.Random(1))
    delays = [backoff.delay(3, wall_now=WALL) for _ in range(200)]
    assert all(0.0 <= d <= 4.0 for d in delays)
    # Full jitter, not "half" or "equal" jitter: draws reach into the window's low end.
    assert min(delays) < 0.5
    assert max(delays) > 3.5


@pytest.mark.parametrize(
    ("retry_after", "expected"),
    [
        ("7", 7.0),
        (" 7 ", 7.0),
        ("1.5", 1.5),
        (12, 12.0),
        (format_datetime(datetime.fromtimestamp(WALL + 90, UTC), usegmt=True), 90.0),
        (format_datetime(datetime.fromtimestamp(WALL - 90, UTC), usegmt=True), 0.0),
    ],
)
def test_retry_after_is_seconds_or_an_http_date(retry_after: str | int, expected: float) -> None:
    assert parse_retry_after(retry_after, wall_now=WALL) == pytest.approx(expected)


@pytest.mark.parametrize(
    "retry_after",
    [
        "",
        "-3",
        "soon",
        "7 seconds",
        "1e3",
        "inf",
        "nan",
        "9" * 80,
        float("nan"),
        -1.0,
        True,
        "Mon, 32 Foo 2027 99:99:99 GMT",
        "Wed, 21 Oct 2015 07:28:00",
    ],
)
def test_an_unreadable_retry_after_is_no_hint(retry_after: object) -> None:
    assert parse_retry_after(retry_after, wall_now=WALL) is None  # type: ignore[arg-type]
    backoff = Backoff(base=1.0, cap=1.0, rng=Draws())
    assert backoff.delay(1, retry_after=retry_after, wall_now=WALL) == 1.0  # type: ignore[arg-type]


def test_a_reset_is_seconds_below_a_unix_time_and_a_unix_time_above() -> None:
    assert parse_reset("42", wall_now=WALL) == 42.0  # RateLimit-Reset: delta seconds
    assert parse_reset(str(int(WALL) + 42), wall_now=WALL) == 42.0  # X-RateLimit-Reset
    assert parse_reset(WALL - 5, wall_now=WALL) == 0.0  # already reset
    for unreadable in ("soon", "-1", "1e9", "9" * 80, None):
        assert parse_reset(unreadable, wall_now=WALL) is None


def test_the_servers_hint_wins_when_longer_and_only_then() -> None:
    backoff = Backoff(base=1.0, cap=8.0, rng=Draws())  # draws the window's top
    assert backoff.delay(1, retry_after="30", wall_now=WALL) == 30.0
    assert backoff.delay(4, retry_after="3", wall_now=WALL) == 8.0
    # The longest of the hints: Retry-After and a reset disagree.
    assert backoff.delay(1, retry_after="5", reset_at=str(int(WALL) + 20), wall_now=WALL) == 20.0
    plan = backoff.plan(1, retry_after="30", wall_now=WALL)
    assert (plan.drawn, plan.asked, plan.past_deadline) == (1.0, 30.0, False)


def test_a_hostile_hint_is_bounded() -> None:
    backoff = Backoff(base=1.0, cap=8.0, longest_hint=600.0, rng=Draws())
    assert backoff.delay(1, retry_after="999999999999", wall_now=WALL) == 600.0
    far = format_datetime(datetime(9999, 12, 31, tzinfo=UTC), usegmt=True)
    assert backoff.delay(1, retry_after=far, wall_now=WALL) == 600.0


def test_the_deadline_bounds_every_wait_and_says_when_it_cut_one() -> None:
    backoff = Backoff(base=1.0, cap=8.0, rng=Draws())
    plan = backoff.plan(4, deadline=105.0, now=100.0, wall_now=WALL)
    assert (plan.seconds, plan.past_deadline) == (5.0, True)
    plan = backoff.plan(1, retry_after="60", deadline=200.0, now=100.0, wall_now=WALL)
    assert (plan.seconds, plan.past_deadline) == (60.0, False)
    plan = backoff.plan(1, retry_after="60", deadline=130.0, now=100.0, wall_now=WALL)
    # Retrying at the deadline would come before the server allowed: give up instead.
    assert (plan.seconds, plan.asked, plan.past_deadline) == (30.0, 60.0, True)
    assert backoff.delay(1, deadline=90.0, now=100.0, wall_now=WALL) == 0.0  # already past
    # The retry loop's protocol, positionally: delay(attempt, retry_after, deadline).
    assert backoff.delay(1, "60", 130.0, now=100.0, wall_now=WALL) == 30.0


def test_the_deadline_is_trio_time_and_planning_is_no_checkpoint() -> None:
    clock = trio.testing.MockClock()
    seen: list[float] = []

    async def main() -> None:
        clock.jump(50.0)
        backoff = Backoff(base=1.0, cap=8.0, rng=Draws())
        with assert_no_checkpoints():
            seen.append(backoff.delay(4, deadline=trio.current_time() + 3.0))

    trio.run(main, clock=clock)
    assert seen == [3.0]


def test_arguments_are_checked() -> None:
    for bad in ({"base": 0}, {"base": -1}, {"cap": math.inf}, {"base": 2.0, "cap": 1.0}):
        with pytest.raises(ValueError, match="must be"):
            Backoff(**bad)
    with pytest.raises(TypeError):
        Backoff(base=True)
    backoff = Backoff()
    with pytest.raises(ValueError, match="attempt must be >= 1"):
        backoff.delay(0)
    with pytest.raises(TypeError):
        backoff.delay(1.0)  # type: ignore[arg-type]

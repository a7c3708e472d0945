"""The per-host rate (issue 43): "N/s|min|h" parsed, a token bucket that starts spaced,
bursts at most its size after an idle spell, and hands tokens out first come, first
served. MockClock: every time below is the bucket's own schedule, not a measurement."""

from __future__ import annotations

import pytest
import trio
import trio.testing
from hypothesis import given, settings
from hypothesis import strategies as st
from trio.testing import assert_checkpoints, wait_all_tasks_blocked

from clonegate._domain.rate import Rate, TokenBucket


def _run(main: object) -> None:
    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "rate"),
    [("30/min", Rate(30, 60.0)), ("5/s", Rate(5, 1.0)), (" 2/h ", Rate(2, 3600.0))],
)
def test_a_rate_is_n_per_second_minute_or_hour(text: str, rate: Rate) -> None:
    assert Rate.parse(text) == rate
    assert str(Rate.parse(text)) == text.strip()


@pytest.mark.parametrize("text", ["", "30", "30/m", "0/min", "-1/s", "1.5/s", "30 / min", "x/s"])
def test_anything_else_is_refused_saying_what_a_rate_is(text: str) -> None:
    with pytest.raises(ValueError, match=r"N/s, N/min or N/h"):
        Rate.parse(text)


def test_the_interval_is_the_period_over_the_count() -> None:
    assert Rate.parse("30/min").interval == 2.0
    with pytest.raises(ValueError, match="at least 1 request"):
        Rate(0, 60.0)
    with pytest.raises(ValueError, match="at least 1 token"):
        TokenBucket(Rate(1, 1.0), size=0)


async def _take_times(bucket: TokenBucket, count: int) -> list[float]:
    times = []
    for _ in range(count):
        await bucket.take()
        times.append(trio.current_time())
    return times


@pytest.mark.parametrize("size", [1, 4])
def test_it_starts_spaced_whatever_its_size(size: int) -> None:
    seen: list[float] = []

    async def main() -> None:
        seen.extend(await _take_times(TokenBucket(Rate.parse("30/min"), size=size), 4))

    _run(main)
    assert seen == [0.0, 2.0, 4.0, 6.0]


def test_after_an_idle_spell_it_bursts_its_size_and_no_more() -> None:
    seen: list[float] = []

    async def main() -> None:
        bucket = TokenBucket(Rate.parse("60/min"), size=3)
        await bucket.take()
        await trio.sleep(100.0)  # idle: the bucket fills, up to 3
        seen.extend(t - 100.0 for t in await _take_times(bucket, 5))

    _run(main)
    assert seen == [0.0, 0.0, 0.0, 1.0, 2.0]


def test_tokens_go_out_in_the_order_the_takers_came() -> None:
    order: list[tuple[str, float]] = []

    async def main() -> None:
        bucket = TokenBucket(Rate.parse("1/s"))

        async def taker(name: str) -> None:
            await bucket.take()
            order.append((name, trio.current_time()))

        async with trio.open_nursery() as nursery:
            for name in "abcde":
                nursery.start_soon(taker, name)
                await wait_all_tasks_blocked()  # each in the queue before the next
            assert bucket.statistics().tasks_waiting == 4  # "a" took at once

    _run(main)
    assert order == [("a", 0.0), ("b", 1.0), ("c", 2.0), ("d", 3.0), ("e", 4.0)]


def test_a_taker_cancelled_while_waiting_takes_nothing_and_the_next_gets_its_turn() -> None:
    order: list[tuple[str, float]] = []

    async def main() -> None:
        bucket = TokenBucket(Rate.parse("1/s"))
        await bucket.take()  # the token of time 0
        scopes: dict[str, trio.CancelScope] = {}

        async def taker(name: str) -> None:
            with trio.CancelScope() as scopes[name]:
                await bucket.take()
                order.append((name, trio.current_time()))

        async with trio.open_nursery() as nursery:
            for name in "abc":
                nursery.start_soon(taker, name)
                await wait_all_tasks_blocked()
            scopes["a"].cancel()  # the head, waiting for the token of time 1
            scopes["b"].cancel()  # in the line behind it
            await wait_all_tasks_blocked()
            assert bucket.statistics().tasks_waiting == 1
        assert bucket.statistics().taken == 2

    _run(main)
    assert order == [("c", 1.0)]


def test_take_is_a_checkpoint_on_every_path() -> None:
    async def main() -> None:
        bucket = TokenBucket(Rate.parse("1/s"))
        with assert_checkpoints():
            await bucket.take()  # a token there: still a checkpoint
        with trio.CancelScope() as scope:
            scope.cancel()
            await bucket.take()  # cancelled before: raises though a token comes soon
        assert scope.cancelled_caught
        stats = bucket.statistics()
        assert (stats.taken, stats.next_token_at) == (1, 1.0)
        with assert_checkpoints():
            await bucket.take()  # waits for it
        assert trio.current_time() == 1.0
        assert bucket.statistics().waited == 1.0

    _run(main)


@settings(max_examples=60, deadline=None)
@given(
    size=st.integers(1, 4),
    count=st.integers(1, 5),
    gaps=st.lists(st.integers(1, 3000), min_size=1, max_size=12),
)
def test_no_window_ever_sees_more_than_the_size_plus_the_rate(
    size: int, count: int, gaps: list[int]
) -> None:
    """Whatever the arrivals: tokens go out in order of arrival, never before their
    taker came, and any two grants i < j are at least (j - i - (size - 1)) intervals
    apart (no burst beyond the size); the first two at least one interval apart."""
    rate = Rate(count, 1.0)
    arrivals = [sum(gaps[: i + 1]) / 1000 for i in range(len(gaps))]  # distinct, ms apart
    grants: list[tuple[int, float]] = []

    async def main() -> None:
        bucket = TokenBucket(rate, size=size)

        async def taker(index: int, at: float) -> None:
            await trio.sleep_until(at)
            await bucket.take()
            grants.append((index, trio.current_time()))

        async with trio.open_nursery() as nursery:
            for index, at in enumerate(arrivals):
                nursery.start_soon(taker, index, at)

    _run(main)
    assert [index for index, _ in grants] == list(range(len(arrivals)))
    times = [when for _, when in grants]
    assert all(when >= at for when, at in zip(times, arrivals, strict=True))
    eps = 1e-9
    for i in range(len(times)):
        for j in range(i + 1, len(times)):
            assert times[j] - times[i] >= (j - i - (size - 1)) * rate.interval - eps
    if len(times) > 1:
        assert times[1] - times[0] >= rate.interval - eps  # it starts with one token

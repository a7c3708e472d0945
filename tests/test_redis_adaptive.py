"""The shared adaptive host limit on a real redis-server (issue 43, ADR 0019): AIMD on a
RedisSemaphore's stored limit, one view of the host for every client."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest
import trio

from clonegate._adapters.redis.adaptive import PENDING_BOUND
from clonegate._domain.adaptive import AdaptiveLimit, Signal
from clonegate.cluster import (
    Patience,
    RedisAdaptiveLimit,
    RedisSemaphore,
    RedisTokenBucket,
    open_redis,
)

from .support.redis_cluster import redis_cluster
from .support.redis_server import RedisServer

SAFETY_NET = 60  # seconds: a bound for a hang, never the assertion


@asynccontextmanager
async def clients(
    url: str, name: str, ceilings: tuple[int, ...], **opened: float
) -> AsyncIterator[list[RedisAdaptiveLimit]]:
    """One adaptive limit per ceiling, each on a client of its own (another worker)."""
    async with AsyncExitStack() as stack:
        limits = []
        for ceiling in ceilings:
            redis = await stack.enter_async_context(open_redis(url, **opened))
            patience = Patience(1.0, cap=0.2)
            semaphore = RedisSemaphore(redis, name, ceiling, lease=20, patience=patience)
            await stack.enter_async_context(semaphore)
            limits.append(RedisAdaptiveLimit(semaphore))
        with trio.fail_after(SAFETY_NET):
            yield limits


async def test_two_limiters_see_the_same_decrease_once_per_generation(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with clients(redis_service.url, name, (8, 8)) as (first, second):
        async with first.hold() as a, second.hold() as b:  # both granted under 8
            a.report(Signal.THROTTLED)
            await first.flush()
            decreased = await second.statistics()
            assert (decreased.size, decreased.generation, decreased.limit) == (6, 1, 6.0)
            assert (await second.semaphore.statistics()).limit == 6  # its permits follow
            b.report(Signal.THROTTLED)  # granted before the decrease: the same news
            await second.flush()
            assert (await first.statistics()).size == 6
        async with second.hold() as c:  # granted after it: new news
            c.report(Signal.UNAVAILABLE_RETRY_AFTER)
            await second.flush()
        stats = await first.statistics()
        assert (stats.size, stats.limit, stats.generation) == (4, 4.5, 2)
        assert (stats.decreases, stats.ignored_signals) == (2, 1)
        assert (await first.semaphore.statistics()).limit == 4


async def test_the_shared_limit_moves_as_adaptive_limit_does(redis_service: RedisServer) -> None:
    """The same signals to AdaptiveLimit (in this process) and to two shared clients:
    the same limit, the float too; a success counts only from a busy permit, and a
    burst of resets is three in a row."""
    local = AdaptiveLimit(8)
    name = uuid.uuid4().hex
    script = [
        [Signal.THROTTLED],  # 8 -> 6
        [Signal.SUCCESS] * 4,  # busy: 4 of 6 held
        [Signal.SUCCESS],  # alone: 1 of 6, not busy: no increase
        [Signal.RESET, Signal.RESET],  # two resets: noise
        [Signal.SUCCESS, Signal.SUCCESS, Signal.SUCCESS],  # breaks the burst
        [Signal.RESET, Signal.RESET, Signal.RESET],  # a burst: decrease
    ]
    async with clients(redis_service.url, name, (8, 8)) as shared:
        for step, signals in enumerate(script):
            reporting = shared[step % 2]
            async with AsyncExitStack() as stack:
                here = [await stack.enter_async_context(local.hold()) for _ in signals]
                there = [await stack.enter_async_context(reporting.hold()) for _ in signals]
                for signal, mine, theirs in zip(signals, here, there, strict=True):
                    mine.report(signal)
                    theirs.report(signal)
            await reporting.flush()
            stats = await shared[0].statistics()
            expected = local.statistics()
            assert stats.limit == pytest.approx(expected.limit, abs=1e-9), step
            assert (stats.size, stats.generation) == (expected.size, expected.generation), step
    assert local.statistics().generation == 2


async def test_a_report_while_redis_is_silent_is_kept_and_applied_later(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    name = uuid.uuid4().hex
    async with clients(own_redis.url, name, (8,), reply_timeout=0.3) as (limit,):
        async with limit.hold() as permit:
            own_redis.pause()
            try:
                with caplog.at_level(logging.WARNING, logger="clonegate"):
                    permit.report(Signal.THROTTLED)  # sync: never waits for Redis
                    while not any("could not report" in r.getMessage() for r in caplog.records):  # noqa: ASYNC110
                        await trio.sleep(0.01)  # polling the log: the sender has no event
            finally:
                own_redis.resume()
            await limit.flush()
        stats = await limit.statistics()
        assert (stats.size, stats.generation, stats.pending, stats.sent) == (6, 1, 0, 1)


async def test_a_full_queue_drops_increases_first_and_keeps_the_newest_decrease(
    redis_service: RedisServer,
) -> None:
    async with clients(redis_service.url, uuid.uuid4().hex, (8,)) as (limit,):
        # Nothing is sent: no permit was held, so the reporting task never started.
        limit._queue(Signal.THROTTLED, 1, True)
        for token in range(PENDING_BOUND):
            limit._queue(Signal.SUCCESS, 2 + token, True)
        assert [s for s, _, _ in limit._pending].count(Signal.THROTTLED) == 1
        for token in range(PENDING_BOUND):
            limit._queue(Signal.THROTTLED, 5000 + token, True)
        pending = list(limit._pending)
        assert len(pending) == PENDING_BOUND
        assert {s for s, _, _ in pending} == {Signal.THROTTLED}
        assert pending[-1][1] == 5000 + PENDING_BOUND - 1  # the newest decrease stays
        assert (await limit.statistics()).dropped == PENDING_BOUND + 1


async def test_a_limit_set_by_hand_is_the_new_ceiling_and_another_ceiling_is_warned(
    redis_service: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    name = uuid.uuid4().hex
    async with clients(redis_service.url, name, (8, 4)) as (first, other):
        async with first.hold() as permit:
            permit.report(Signal.THROTTLED)  # 8 -> 6
        await first.flush()
        await first.semaphore.configure(5)  # `clonegate limit --host H 5`
        with caplog.at_level(logging.WARNING, logger="clonegate"):
            async with other.hold() as permit:
                permit.report(Signal.THROTTLED)  # from the new ceiling: 5 -> 3.75
            await other.flush()
        stats = await first.statistics()
        assert (stats.ceiling, stats.limit, stats.size) == (5, 3.75, 3)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "adaptive ceiling of 5" in warnings[0]
        assert "asked for limit 4" in warnings[0]


async def test_the_shared_rate_and_limit_work_through_a_redis_cluster(tmp_path: Path) -> None:
    """Each script's keys share one hash tag: one slot of a Redis Cluster."""
    with redis_cluster(tmp_path / "cluster") as ports:
        url = "redis+cluster://" + ",".join(f"127.0.0.1:{port}" for port in ports)
        name = uuid.uuid4().hex
        async with clients(url, name, (8, 8)) as (first, second):
            async with first.hold() as permit:
                permit.report(Signal.THROTTLED)
            await first.flush()
            assert (await second.statistics()).size == 6
            assert (await second.semaphore.statistics()).limit == 6
            bucket = RedisTokenBucket(first.semaphore._redis, name, "10/s")
            await bucket.take()
            assert bucket.statistics().taken == 1

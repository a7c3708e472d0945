"""The shared host rate on a real redis-server (issue 43, ADR 0019): one GCRA bucket in
Redis for every client, its tokens due an interval apart on Redis's clock."""

from __future__ import annotations

import itertools
import logging
import uuid

import pytest
import trio

from clonegate.cluster import Patience, RedisTokenBucket, open_redis

from .support.redis_server import RedisServer

SAFETY_NET = 60  # seconds: a bound for a hang, never the assertion


async def test_two_clients_take_from_one_rate_spaced_by_redis_time(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    interval = 0.05  # 20/s
    dues: list[float] = []
    async with open_redis(redis_service.url) as redis:
        # Two clients of one bucket, as two workers would be (ids of their own).
        clients = [RedisTokenBucket(redis, name, "20/s") for _ in range(2)]

        async def take(bucket: RedisTokenBucket, times: int) -> None:
            for _ in range(times):
                await bucket.take()
                dues.append(bucket.statistics().last_due)  # no checkpoint in between

        with trio.fail_after(SAFETY_NET):
            async with trio.open_nursery() as nursery:
                for bucket in clients:
                    for _ in range(2):  # two tasks per client: FIFO in the client
                        nursery.start_soon(take, bucket, 3)
    assert sum(b.statistics().taken for b in clients) == len(dues) == 12
    # Redis's clock: every token of the shared bucket due an interval after the one
    # before (two buckets of their own would hand out two tokens at once).
    dues.sort()
    gaps = [later - earlier for earlier, later in itertools.pairwise(dues)]
    assert min(gaps) >= interval - 1e-6, gaps


async def test_a_taker_cancelled_while_waiting_gives_its_token_back(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with open_redis(redis_service.url) as redis:
        key = f"{{clonegate:rate:{name}}}"
        first = RedisTokenBucket(redis, name, "1/min")
        other = RedisTokenBucket(redis, name, "1/min")
        with trio.fail_after(SAFETY_NET):
            await first.take()  # the first token, at once (starts spaced)
            due = first.statistics().last_due
            reserved = await redis.hget(key, "tat")
            with trio.CancelScope() as scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(other.take)  # due a minute later: it waits
                    while await redis.hget(key, "tat") == reserved:  # noqa: ASYNC110
                        await trio.sleep(0.01)  # polling Redis, which has no events
                    scope.cancel()
        assert other.statistics().given_back == 1
        assert other.statistics().taken == 0
        # The next token is due one interval after the first, not two.
        tat = int(await redis.hget(key, "tat") or 0)
        assert tat == round(due * 1_000_000) + 60_000_000


async def test_the_key_expires_once_the_bucket_is_full_and_settings_are_redis_s(
    redis_service: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    name = uuid.uuid4().hex
    key = f"{{clonegate:rate:{name}}}"
    async with open_redis(redis_service.url) as redis:
        stored = RedisTokenBucket(redis, name, "2/min", size=2)
        await stored.take()
        # Bounded: no longer than the bucket takes to fill again (2 intervals of 30 s).
        assert 0 < await redis.pttl(key) <= 60_001
        late = RedisTokenBucket(redis, name, "10/s")
        with caplog.at_level(logging.WARNING, logger="clonegate"):
            # The stored interval (30 s) applies, not 0.1 s: the next token is 30 s off.
            with trio.move_on_after(1) as waiting:
                await late.take()
        assert waiting.cancelled_caught
        assert (late.statistics().taken, late.statistics().given_back) == (0, 1)
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, warnings
        assert "one request per 30 s (burst 2)" in warnings[0]
        assert "asked for 10/s (burst 1)" in warnings[0]


async def test_redis_gone_past_the_patience_is_an_infrastructure_error(
    own_redis: RedisServer,
) -> None:
    from clonegate.errors import LimiterUnavailableError

    async with open_redis(own_redis.url, reply_timeout=0.5) as redis:
        bucket = RedisTokenBucket(redis, uuid.uuid4().hex, "1/s", patience=Patience(0.5))
        own_redis.stop()
        with trio.fail_after(SAFETY_NET), pytest.raises(LimiterUnavailableError):
            await bucket.take()
        assert bucket.statistics().taken == 0

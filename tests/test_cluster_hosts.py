"""A cluster worker's per-host flags (issue 43): --host-limit, --adaptive and --host-rate
become one shared limiter per host, on a real redis-server."""

from __future__ import annotations

import uuid
from functools import partial

import trio
from typer.testing import CliRunner

from clonegate import Limiter, UseCaseConfig
from clonegate._domain.adaptive import Signal
from clonegate._domain.limits import Expiring
from clonegate.cluster import Patience, RedisSemaphore, open_redis
from clonegate_cli._cluster_hosts import host_options
from clonegate_cli.app import app

from .support.redis_server import RedisServer


def test_a_host_rate_that_is_no_rate_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["worker", "--host-rate", "30/week", "--redis", "redis://x"])
    assert result.exit_code == 2
    assert "a rate is N/s, N/min or N/h" in result.output


async def test_adaptive_and_rate_make_one_shared_limiter_per_host(
    redis_service: RedisServer,
) -> None:
    prefix = uuid.uuid4().hex  # the host's name: its keys are this test's own
    async with open_redis(redis_service.url) as redis, trio.open_nursery() as nursery:
        patience = Patience()
        semaphore = partial(RedisSemaphore, redis, nursery=nursery, patience=patience)
        # Without the flags the worker adapts nothing, not even in its own process.
        (off,) = host_options(
            semaphore, redis, patience, host_limit=None, adaptive=False, host_rate=None, jobs=4
        )
        plain = off(UseCaseConfig())
        assert (plain.adaptive, plain.host_limiter) == (False, None)
        adapt, shared = host_options(
            semaphore, redis, patience, host_limit=8, adaptive=True, host_rate="30/min", jobs=4
        )
        limiter_for = shared(adapt(UseCaseConfig())).host_limiter
        assert limiter_for is not None
        limiter: Limiter = limiter_for(prefix)
        async with limiter.hold(1) as permit:
            # The adaptive limit's permit: it takes a report and has the lease's deadline.
            assert isinstance(permit, Expiring)
            permit.report(Signal.SUCCESS)  # type: ignore[attr-defined]
        stored = await RedisSemaphore(redis, f"host:{prefix}", 1, nursery=nursery).statistics()
        assert stored.limit == 4  # the ceiling: --host-limit, never above -j
        bucket = await redis.hgetall(f"{{clonegate:rate:host:{prefix}}}")
        assert (bucket["interval"], bucket["size"]) == ("2000000", "1")  # 30/min: 2 s
        nursery.cancel_scope.cancel()

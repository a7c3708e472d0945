"""Where a clone's lease deadline comes from (ADR 0015, "A clone never outlives its
lease"): a Redis lease's CLOCK_MONOTONIC deadline, renewed with each heartbeat, and
the gate that hands the expiring permits' deadline to the clone's body."""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import trio

from clonegate._adapters.redis.lease import STOP_MARGIN
from clonegate._domain.limits import Expiring, held_deadline
from clonegate._domain.semaphore import WeightedSemaphore
from clonegate._usecase.gate import CloneGate
from clonegate.cluster import RedisSemaphore, open_redis

from .support.redis_server import RedisServer


async def test_a_lease_expires_before_redis_ends_it_and_tells_each_renewal(
    redis_service: RedisServer,
) -> None:
    lease_seconds = 3.0
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, uuid.uuid4().hex, 1, lease=lease_seconds) as sem,
    ):
        before = time.monotonic()
        lease = await sem.acquire()
        assert isinstance(lease, Expiring)
        margin = min(STOP_MARGIN, lease_seconds / 6)
        # Counted from before the request: never later than Redis's end, less the margin.
        assert before < lease.expires_at <= time.monotonic() + lease_seconds - margin
        first = lease.expires_at
        renewed = trio.Event()
        stop = lease.on_renewal(renewed.set)
        await renewed.wait()  # the heartbeat, a third of a lease on
        stop()
        assert lease.expires_at > first
        assert await lease.release()


class _Permit:
    expires_at = 123.0

    def on_renewal(self, callback: Callable[[], None]) -> Callable[[], None]:
        return lambda: None


class _ExpiringLimiter:
    @asynccontextmanager
    async def hold(self, n: int = 1) -> AsyncIterator[_Permit]:
        await trio.lowlevel.checkpoint()
        yield _Permit()


async def test_the_gate_gives_the_clone_its_expiring_permits_deadline_only() -> None:
    seen = []
    for shared in (_ExpiringLimiter(), WeightedSemaphore(1)):
        gate = CloneGate(1, global_limiter=shared)
        async with gate.slot(0, "u", 1):
            held = held_deadline.get()
            seen.append(None if held is None else held.expires_at)
        assert held_deadline.get() is None  # only for the body
    assert seen == [123.0, None]


async def test_a_lease_whose_holders_may_finish_never_ends_their_workers(
    redis_service: RedisServer,
) -> None:
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, uuid.uuid4().hex, 1, on_lease_lost="finish") as sem,
    ):
        lease = await sem.acquire()
        assert lease.expires_at == math.inf
        assert await lease.release()

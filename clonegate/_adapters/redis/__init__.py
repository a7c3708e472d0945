"""The cluster mode's adapters on Redis: a shared semaphore and a work queue (ADR 0015)."""

from .connection import RedisUnavailableError, open_redis, redis_url
from .queue import RedisWorkQueue, Retrying, Running, RunStatus
from .semaphore import (
    Lease,
    RedisHolder,
    RedisSemaphore,
    RedisSemaphoreStatistics,
    RedisWaiter,
)

__all__ = [
    "Lease",
    "RedisHolder",
    "RedisSemaphore",
    "RedisSemaphoreStatistics",
    "RedisUnavailableError",
    "RedisWaiter",
    "RedisWorkQueue",
    "Retrying",
    "RunStatus",
    "Running",
    "open_redis",
    "redis_url",
]

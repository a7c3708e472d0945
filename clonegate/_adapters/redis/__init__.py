"""The cluster mode's adapters on Redis: a shared semaphore and a work queue (ADR 0015).

The names below load their modules (and the Redis client) on first use: the command
line reads :class:`ClusterSettings`' defaults for its options without connecting.
"""

# ``typing`` would cost the command line a few ms before it can start the workers'
# zygote; type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from .cluster_settings import ClusterSettings
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
    "ClusterSettings",
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

_MODULES = {
    "ClusterSettings": "cluster_settings",
    "RedisUnavailableError": "connection",
    "open_redis": "connection",
    "redis_url": "connection",
    "RedisWorkQueue": "queue",
    "Retrying": "queue",
    "Running": "queue",
    "RunStatus": "queue",
    "Lease": "semaphore",
    "RedisHolder": "semaphore",
    "RedisSemaphore": "semaphore",
    "RedisSemaphoreStatistics": "semaphore",
    "RedisWaiter": "semaphore",
}


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)

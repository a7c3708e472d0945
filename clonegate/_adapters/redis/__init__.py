"""The cluster mode's adapters on Redis: a shared semaphore and a work queue (ADR 0015),
a host's shared rate and adaptive limit (ADR 0019).

The names below load their modules (and the Redis client) on first use: the command
line reads :class:`ClusterSettings`' defaults for its options without connecting.
"""

from ..._exports import exports

# ``typing`` would cost the command line a few ms before it can start the workers'
# zygote; type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from .adaptive import RedisAdaptiveLimit as RedisAdaptiveLimit
    from .cluster_settings import ClusterSettings as ClusterSettings
    from .connection import RedisUnavailableError as RedisUnavailableError
    from .connection import open_redis as open_redis
    from .connection import redis_url as redis_url
    from .queue import RedisWorkQueue as RedisWorkQueue
    from .queue import Retrying as Retrying
    from .queue import Running as Running
    from .queue import RunStatus as RunStatus
    from .rate import RedisTokenBucket as RedisTokenBucket
    from .semaphore import Lease as Lease
    from .semaphore import RedisHolder as RedisHolder
    from .semaphore import RedisSemaphore as RedisSemaphore
    from .semaphore import RedisSemaphoreStatistics as RedisSemaphoreStatistics
    from .semaphore import RedisWaiter as RedisWaiter

# What each name's module is: the one table (clonegate._exports), read on first use.
__all__, __getattr__, __dir__ = exports(
    __name__,
    {
        "._adapters.redis.adaptive": "RedisAdaptiveLimit",
        "._adapters.redis.cluster_settings": "ClusterSettings",
        "._adapters.redis.connection": "RedisUnavailableError open_redis redis_url",
        "._adapters.redis.queue": "RedisWorkQueue Retrying Running RunStatus",
        "._adapters.redis.rate": "RedisTokenBucket",
        "._adapters.redis.semaphore": (
            "Lease RedisHolder RedisSemaphore RedisSemaphoreStatistics RedisWaiter"
        ),
    },
)

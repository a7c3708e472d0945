"""The cluster mode: many machines, one fair limit and one work queue on Redis (ADR 0015).

``open_redis(url)`` connects; ``RedisSemaphore`` is a shared limit
(``with_global_limiter``, ``with_host_limiter``), ``RedisAdaptiveLimit`` one that adapts
to a host's pushback, ``RedisTokenBucket`` a shared request rate; ``RedisWorkQueue``
holds the jobs a ``ClusterWorker`` runs through a use case. The Redis client loads on first use of a
name that needs it, not when this module is imported.
"""

from ._exports import exports

TYPE_CHECKING = False  # not typing's (ADR 0003)

if TYPE_CHECKING:
    from ._adapters.redis import ClusterSettings as ClusterSettings
    from ._adapters.redis import Lease as Lease
    from ._adapters.redis import RedisAdaptiveLimit as RedisAdaptiveLimit
    from ._adapters.redis import RedisSemaphore as RedisSemaphore
    from ._adapters.redis import RedisSemaphoreStatistics as RedisSemaphoreStatistics
    from ._adapters.redis import RedisTokenBucket as RedisTokenBucket
    from ._adapters.redis import RedisUnavailableError as RedisUnavailableError
    from ._adapters.redis import RedisWorkQueue as RedisWorkQueue
    from ._adapters.redis import Retrying as Retrying
    from ._adapters.redis import Running as Running
    from ._adapters.redis import RunStatus as RunStatus
    from ._adapters.redis import open_redis as open_redis
    from ._adapters.redis import redis_url as redis_url
    from ._adapters.redis.connection import Redis as Redis
    from ._domain.jobs import Job as Job
    from ._domain.jobs import JobQueue as JobQueue
    from ._domain.jobs import Retry as Retry
    from ._domain.patience import Patience as Patience
    from ._usecase.worker import ClusterWorker as ClusterWorker
    from ._usecase.worker import WorkerTotals as WorkerTotals

# The one table of this module's names (clonegate._exports).
_TABLE = {
    "._adapters.redis": (
        "ClusterSettings Lease RedisAdaptiveLimit RedisSemaphore RedisSemaphoreStatistics "
        "RedisTokenBucket RedisUnavailableError RedisWorkQueue Retrying RunStatus Running "
        "open_redis redis_url"
    ),
    "._adapters.redis.connection": "Redis",
    "._domain.jobs": "Job JobQueue Retry",
    "._domain.patience": "Patience",
    "._usecase.worker": "ClusterWorker WorkerTotals",
}

__all__, __getattr__, __dir__ = exports(__name__, _TABLE)

"""Worker processes forked from a warm zygote, one per job (ADR 0003).

The git and analysis adapters run their jobs here: a clone holds the GIL while it
unpacks, and only a process can be stopped for certain.
"""

from .pool import (
    WorkerDied,
    WorkerPool,
    WorkerPoolStatistics,
    current_pool,
    default_worker_limiter,
    open_worker_pool,
    run_in_worker,
    set_default_preload,
)

__all__ = [
    "WorkerDied",
    "WorkerPool",
    "WorkerPoolStatistics",
    "current_pool",
    "default_worker_limiter",
    "open_worker_pool",
    "run_in_worker",
    "set_default_preload",
]

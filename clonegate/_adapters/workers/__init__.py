"""Worker processes forked from a warm zygote, one per job (ADR 0003).

The git and analysis adapters run their jobs here: a clone holds the GIL while it
unpacks, and only a process can be stopped for certain.
"""

from .pool import (
    WorkerDied,
    WorkerPool,
    WorkerPoolStatistics,
    add_default_preload,
    current_pool,
    default_worker_limiter,
    open_worker_pool,
    run_in_worker,
)

__all__ = [
    "WorkerDied",
    "WorkerPool",
    "WorkerPoolStatistics",
    "add_default_preload",
    "current_pool",
    "default_worker_limiter",
    "open_worker_pool",
    "run_in_worker",
]

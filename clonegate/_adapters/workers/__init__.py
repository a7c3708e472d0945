"""Worker processes forked from a warm zygote, one per job (ADR 0003).

The git and analysis adapters run their jobs here: a clone holds the GIL while it
unpacks, and only a process can be stopped for certain.

The names below load :mod:`.pool` (and trio) on first use: the zygote imports this
package too, and it has no use for trio.
"""

# ``typing`` would cost the command line a few ms before it can start the workers'
# zygote (clonegate_cli.main); type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from .pool import (
        WorkerDied,
        WorkerPool,
        WorkerPoolStatistics,
        default_worker_limiter,
        open_worker_pool,
        run_in_worker,
        run_pool,
    )

__all__ = [
    "WorkerDied",
    "WorkerPool",
    "WorkerPoolStatistics",
    "default_worker_limiter",
    "open_worker_pool",
    "run_in_worker",
    "run_pool",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import pool

    return getattr(pool, name)

"""The worker processes clones and analyses run in, forked from a warm zygote (ADR 0003).

``clonegate.open_analyzer`` opens a pool for its block and passes it to the adapters;
``open_worker_pool()`` opens one to give ``DulwichVCS(pool=...)`` and
``TestInventoryAnalyzer(pool=...)`` yourself. ``prestart(ZYGOTE_PRELOAD, environment)``
starts the zygote at once, so that its imports run while the program imports the rest
(the command line does). Importing this module imports neither trio nor the adapters.
"""

from ._exports import exports

TYPE_CHECKING = False  # not typing's (ADR 0003)

if TYPE_CHECKING:
    from ._adapters.preloads import ZYGOTE_PRELOAD as ZYGOTE_PRELOAD
    from ._adapters.workers import WorkerDied as WorkerDied
    from ._adapters.workers import WorkerPool as WorkerPool
    from ._adapters.workers import WorkerPoolStatistics as WorkerPoolStatistics
    from ._adapters.workers import open_worker_pool as open_worker_pool
    from ._adapters.workers.spawn import prestart as prestart

# The one table of this module's names (clonegate._exports).
_TABLE = {
    "._adapters.preloads": "ZYGOTE_PRELOAD",
    "._adapters.workers": "WorkerDied WorkerPool WorkerPoolStatistics open_worker_pool",
    "._adapters.workers.spawn": "prestart",
}

__all__, __getattr__, __dir__ = exports(__name__, _TABLE)

"""The worker processes clones and analyses run in, forked from a warm zygote (ADR 0003).

``clonegate.open_analyzer`` opens a pool for its block and passes it to the adapters;
``open_worker_pool()`` opens one to give ``DulwichVCS(pool=...)`` and
``TestInventoryAnalyzer(pool=...)`` yourself. ``prestart(ZYGOTE_PRELOAD, environment)``
starts the zygote at once, so that its imports run while the program imports the rest
(the command line does). ``prestart_first_clone(environment)``, then
``start_first_clone(url, settings)``, also starts a first clone at once, which the
first ``open_analyzer`` block's clone of that URL with those settings takes over (the
command line's ``analyze``, issue 47); ``end_first_clone()`` at the program's end stops
it if nothing did. Importing this module imports neither trio nor the adapters.
"""

from ._exports import exports

TYPE_CHECKING = False  # not typing's (ADR 0003)

if TYPE_CHECKING:
    from ._adapters.git.first_clone import end_first_clone as end_first_clone
    from ._adapters.git.first_clone import prestart_first_clone as prestart_first_clone
    from ._adapters.git.first_clone import start_first_clone as start_first_clone
    from ._adapters.preloads import ZYGOTE_PRELOAD as ZYGOTE_PRELOAD
    from ._adapters.workers import WorkerDied as WorkerDied
    from ._adapters.workers import WorkerPool as WorkerPool
    from ._adapters.workers import WorkerPoolStatistics as WorkerPoolStatistics
    from ._adapters.workers import open_worker_pool as open_worker_pool
    from ._adapters.workers.spawn import prestart as prestart

# The one table of this module's names (clonegate._exports).
_TABLE = {
    "._adapters.git.first_clone": "end_first_clone prestart_first_clone start_first_clone",
    "._adapters.preloads": "ZYGOTE_PRELOAD",
    "._adapters.workers": "WorkerDied WorkerPool WorkerPoolStatistics open_worker_pool",
    "._adapters.workers.spawn": "prestart",
}

__all__, __getattr__, __dir__ = exports(__name__, _TABLE)

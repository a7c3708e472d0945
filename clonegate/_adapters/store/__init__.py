"""The result store on SQLite (ADR 0016).

The names below load their modules (and sqlite3, trio) on first use: the command line
reads :class:`StoreSettings`' defaults for its options, and opens a store only with
``--db``.
"""

from ..._exports import exports

# ``typing`` would cost the command line a few ms before it can start the workers'
# zygote; type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from .reader import StoreReader as StoreReader
    from .reader import open_store_reader as open_store_reader
    from .reading import Difference as Difference
    from .reading import HistoryEntry as HistoryEntry
    from .reading import RunInfo as RunInfo
    from .run_report import RunReport as RunReport
    from .run_report import TestCount as TestCount
    from .settings import DEFAULT_CACHE_LIMIT as DEFAULT_CACHE_LIMIT
    from .settings import StoreSettings as StoreSettings
    from .sqlite import SQLiteStore as SQLiteStore
    from .sqlite import open_store as open_store

# What each name's module is: the one table (clonegate._exports), read on first use.
__all__, __getattr__, __dir__ = exports(
    __name__,
    {
        "._adapters.store.settings": "DEFAULT_CACHE_LIMIT StoreSettings",
        "._adapters.store.reading": "Difference HistoryEntry RunInfo",
        "._adapters.store.reader": "StoreReader open_store_reader",
        "._adapters.store.run_report": "RunReport TestCount",
        "._adapters.store.sqlite": "SQLiteStore open_store",
    },
)

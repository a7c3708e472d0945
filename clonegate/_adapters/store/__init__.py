"""The result store on SQLite (ADR 0016).

The names below load their modules (and sqlite3, trio) on first use: the command line
reads :class:`StoreSettings`' defaults for its options, and opens a store only with
``--db``.
"""

# ``typing`` would cost the command line a few ms before it can start the workers'
# zygote; type checkers treat any name TYPE_CHECKING as true.
TYPE_CHECKING = False

if TYPE_CHECKING:
    from .reader import StoreReader, open_store_reader
    from .reading import Difference, HistoryEntry, RunInfo
    from .settings import DEFAULT_CACHE_LIMIT, StoreSettings
    from .sqlite import SQLiteStore, open_store

__all__ = [
    "DEFAULT_CACHE_LIMIT",
    "Difference",
    "HistoryEntry",
    "RunInfo",
    "SQLiteStore",
    "StoreReader",
    "StoreSettings",
    "open_store",
    "open_store_reader",
]

_MODULES = {
    "DEFAULT_CACHE_LIMIT": "settings",
    "StoreSettings": "settings",
    "Difference": "reading",
    "HistoryEntry": "reading",
    "RunInfo": "reading",
    "StoreReader": "reader",
    "open_store_reader": "reader",
    "SQLiteStore": "sqlite",
    "open_store": "sqlite",
}


def __getattr__(name: str) -> object:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{module}", __name__), name)

"""The result store on SQLite (ADR 0016)."""

from .reader import StoreReader, open_store_reader
from .reading import Difference, HistoryEntry, RunInfo
from .sqlite import DEFAULT_CACHE_LIMIT, SQLiteStore, open_store

__all__ = [
    "DEFAULT_CACHE_LIMIT",
    "Difference",
    "HistoryEntry",
    "RunInfo",
    "SQLiteStore",
    "StoreReader",
    "open_store",
    "open_store_reader",
]

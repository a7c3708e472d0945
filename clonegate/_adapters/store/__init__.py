"""The result store on SQLite (ADR 0016)."""

from .reading import Difference, HistoryEntry, RunInfo
from .sqlite import DEFAULT_CACHE_LIMIT, SQLiteStore, open_store

__all__ = [
    "DEFAULT_CACHE_LIMIT",
    "Difference",
    "HistoryEntry",
    "RunInfo",
    "SQLiteStore",
    "open_store",
]

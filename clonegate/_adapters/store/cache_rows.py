"""The analysis cache's rows: recency of use, and eviction by it (ADR 0016)."""

from __future__ import annotations

import sqlite3

__all__ = ["evict", "touch"]


def touch(db: sqlite3.Connection, keys: list[bytes], tick: int) -> None:
    db.executemany("UPDATE analysis_cache SET used = ? WHERE key = ?", [(tick, k) for k in keys])


def evict(db: sqlite3.Connection, target: int) -> int:
    """Delete the least recently used entries until the cache holds at most ``target``
    bytes; what it holds then."""
    (size,) = db.execute(
        "SELECT coalesce(sum(length(key) + length(value)), 0) FROM analysis_cache"
    ).fetchone()
    rows = db.execute("SELECT key, length(key) + length(value) FROM analysis_cache ORDER BY used")
    doomed = []
    for key, length in rows:
        if size <= target:
            break
        doomed.append((key,))
        size -= length
    db.executemany("DELETE FROM analysis_cache WHERE key = ?", doomed)
    return int(size)

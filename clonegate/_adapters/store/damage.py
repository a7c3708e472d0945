"""Rows that cannot be read back: one row's problem, never the whole read's (ADR 0016).

The file is anyone's to edit (or to damage): a ``document`` that is not JSON, a test
status no clonegate wrote, text that is not UTF-8. Whatever decoding a row raises is
that row's damage, named by table and row id; SQLite's own failures (locked, I/O,
a corrupt page) stay store errors.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from ..._domain.store import DamagedRow, DamagedRowError

__all__ = ["Damage", "reading_row"]

# The text sqlite3 raises for a TEXT value that is not UTF-8 (CPython's _sqlite).
_NOT_UTF8 = "Could not decode to UTF-8"


@contextmanager
def reading_row(table: str, row: int) -> Iterator[None]:
    """Decode row ``row`` of ``table`` inside this block; what it raises becomes a
    :class:`DamagedRowError` naming the row."""
    try:
        yield
    except DamagedRowError:
        raise
    except sqlite3.Error as exc:
        if _NOT_UTF8 not in str(exc):
            raise
        raise _damaged(table, row, "text that is not UTF-8") from None
    except RecursionError:
        raise _damaged(table, row, "nested too deeply") from None
    except Exception as exc:  # anything decoding raises: the row is not what we wrote
        problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        raise _damaged(table, row, problem) from None


class Damage:
    """Where damaged rows go during one read: collected if the caller asked for them
    (``into``), else the first one is raised."""

    def __init__(self, into: list[DamagedRow] | None) -> None:
        self._into = into

    def tolerate(self, error: DamagedRowError) -> None:
        if self._into is None:
            raise error
        self._into.append(error.damage)


def _damaged(table: str, row: int, problem: str) -> DamagedRowError:
    # Bounded: an exception's text may quote the damaged value, megabytes of it.
    return DamagedRowError(DamagedRow(table, row, problem[:200]))

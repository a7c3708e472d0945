"""``StoreReader``: what the store's commands read (runs, history, reports, diff, check),
on connections that never write (ADR 0016)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TypeVar

import trio

from ..._domain.reports import RepositoryReport
from ..._domain.store import DamagedRow
from . import checking, reading, run_report
from .damage import Damage
from .files import open_read_only, store_error
from .reading import Difference, HistoryEntry, RunInfo
from .run_report import RunReport

__all__ = ["StoreReader", "open_store_reader"]

T = TypeVar("T")


class StoreReader:
    """The read API of a result store; :func:`open_store_reader` opens one that never
    writes, :func:`open_store` a :class:`SQLiteStore` that also does.

    A row that cannot be read back as it was saved (the file is anyone's to edit) is
    that row's problem: given a ``damaged`` list, a method appends a
    :class:`clonegate.store.DamagedRow` for it there and goes on without it; without
    one, it raises :class:`clonegate.store.DamagedRowError`. Any other failure to read
    the file is a :class:`clonegate.store.StoreError`.
    """

    def __init__(
        self,
        path: Path,
        connect: Callable[[], sqlite3.Connection],
        unchanged: Callable[[], None] | None = None,
    ) -> None:
        self.path = path
        self._connect = connect
        # Raises StoreError if the file changed under reads SQLite cannot lock.
        self._unchanged = unchanged
        # One reading connection per worker thread, kept until the store closes:
        # opening one costs 0.46 ms, the reads of a reused report 0.005 ms each.
        self._readers = threading.local()
        self._reader_connections: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()

    async def run_ids(self) -> list[int]:
        """Every run's id, newest first."""
        return await self._read(reading.run_ids)

    async def runs(
        self, limit: int | None = None, *, damaged: list[DamagedRow] | None = None
    ) -> list[RunInfo]:
        """Runs, newest first."""
        return await self._tolerant(lambda db, d: reading.runs(db, limit, d), damaged)

    async def history(
        self, url: str, *, damaged: list[DamagedRow] | None = None
    ) -> list[HistoryEntry]:
        """What each run found for the repository of ``url``, oldest first."""
        return await self._tolerant(lambda db, d: reading.history(db, url, d), damaged)

    async def reports(
        self, run_id: int, *, inventory: bool = False, damaged: list[DamagedRow] | None = None
    ) -> list[RepositoryReport]:
        """Run ``run_id``'s reports in input order, with their inventories if asked."""
        return await self._tolerant(
            lambda db, d: reading.reports(db, run_id, d, inventory=inventory), damaged
        )

    async def diff(
        self, run_a: int, run_b: int, *, damaged: list[DamagedRow] | None = None
    ) -> list[Difference]:
        """The repositories whose status or tests differ from run ``run_a`` to ``run_b``;
        a repository with a damaged row in either run is left out (and in ``damaged``)."""
        return await self._tolerant(lambda db, d: reading.diff(db, run_a, run_b, d), damaged)

    async def run_report(
        self, run_id: int, *, damaged: list[DamagedRow] | None = None
    ) -> RunReport | None:
        """Run ``run_id`` whole (ADR 0020): summary and options, events, repositories
        with their phases and attempts, tests by framework, language and status; None
        if there is no such run."""
        return await self._tolerant(lambda db, d: run_report.run_report(db, run_id, d), damaged)

    async def check(self) -> list[DamagedRow]:
        """Every damaged row: SQLite's check of the file, then each run and report."""
        return await self._read(checking.check)

    async def _tolerant(
        self,
        read: Callable[[sqlite3.Connection, Damage], T],
        damaged: list[DamagedRow] | None,
    ) -> T:
        # Collected in the reading thread, handed over once the read is done.
        found: list[DamagedRow] | None = None if damaged is None else []
        result = await self._read(lambda db: read(db, Damage(found)))
        if damaged is not None and found:
            damaged.extend(found)
        return result

    async def _read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        def run() -> T:
            db: sqlite3.Connection | None = getattr(self._readers, "db", None)
            if db is None:
                db = self._readers.db = self._connect()
                with self._readers_lock:
                    self._reader_connections.append(db)
            try:
                # Autocommit: each query reads the last commit (WAL), nothing is held.
                result = query(db)
            except sqlite3.Error:
                self._readers.db = None  # a connection that failed is not reused
                self._check_unchanged()  # a file changed under the read: that, not its effect
                raise
            except Exception:  # a damaged row, possibly the torn read of a changed file
                self._check_unchanged()
                raise
            self._check_unchanged()
            return result

        try:
            return await trio.to_thread.run_sync(run)
        except sqlite3.Error as exc:
            raise store_error(self.path, exc) from None

    def _check_unchanged(self) -> None:
        if self._unchanged is not None:
            self._unchanged()

    def _close_readers(self) -> None:
        """Close every reading connection (no read is running)."""
        with self._readers_lock:
            connections, self._reader_connections = self._reader_connections, []
        for db in connections:
            db.close()


@asynccontextmanager
async def open_store_reader(path: str | Path) -> AsyncIterator[StoreReader]:
    """Open the store at ``path`` for reading only: nothing is created or written (an
    older schema is brought up to date where the file can be written), and a store on
    a read-only file system can be read. Raises :class:`clonegate.store.StoreError` if
    there is no store there, or it cannot be read."""
    path = Path(path)
    connect, unchanged = await trio.to_thread.run_sync(open_read_only, path)
    reader = StoreReader(path, connect, unchanged)
    try:
        yield reader
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(reader._close_readers)

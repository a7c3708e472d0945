"""``SQLiteStore``: the result store and the analysis cache in one SQLite file (ADR 0016).

One writer task owns the only connection that writes: every write is a request to it,
and it applies whatever has queued up in one transaction, each request inside its own
savepoint, so a batch of concurrent saves costs one commit and one failing save cannot
take the others with it. Nothing then ever waits on "database is locked" inside one
process; other processes writing the same file wait on SQLite's busy timeout. Reads
open their own connection, in a worker thread, and see the last committed state (WAL).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Generic, TypeVar, final

import trio

from ..._domain.listed import Listed
from ..._domain.reports import RepositoryReport
from ..._domain.store import StoredResult, StoreError
from ..._domain.timeline import RunEvent, microseconds
from . import reading
from .cache_rows import evict, touch
from .files import connect, open_writer, store_error
from .listed_rows import reusable_listed
from .reader import StoreReader
from .rows import insert_report, read_report
from .settings import DEFAULT_CACHE_LIMIT

__all__ = ["DEFAULT_CACHE_LIMIT", "SQLiteStore", "open_store"]

T = TypeVar("T")

# Writes still queued when the store closes are applied within this bound, shielded.
_CLOSE_SECONDS = 10.0
_CHUNK = 500  # SQLite's default limit on host parameters per statement is 999


@dataclass(eq=False)
class _Write(Generic[T]):
    apply: Callable[[sqlite3.Connection], T]
    done: trio.Event = field(default_factory=trio.Event)
    result: T | None = None
    error: sqlite3.Error | None = None


@final
class SQLiteStore(StoreReader):
    """Reports, runs and the analysis cache in one SQLite file; open with :func:`open_store`.

    Implements :class:`clonegate.store.ReportStore` and
    :class:`clonegate.store.AnalysisCache`, and the read API of :class:`StoreReader`.
    Every async method is a checkpoint and raises :class:`clonegate.store.StoreError` when
    the file cannot be read or written; a report whose :meth:`save` returned is
    durable (WAL, committed), whatever happens to the process next.
    """

    def __init__(self, path: Path, writer: sqlite3.Connection, cache_limit: int) -> None:
        super().__init__(path, lambda: connect(path))
        self._db = writer
        self._cache_limit = cache_limit
        self._send, self._receive = trio.open_memory_channel[_Write[Any]](1024)
        self._drained = trio.Event()  # the writer has ended
        # Integers only: a counter edited to text or bytes (anyone may edit the file)
        # would otherwise be where the counting starts, and fail every lookup and keep.
        (size, used) = writer.execute(
            "SELECT coalesce(sum(length(key) + length(value)), 0), "
            "coalesce(max(CASE typeof(used) WHEN 'integer' THEN used END), 0) "
            "FROM analysis_cache"
        ).fetchone()
        self._cache_bytes: int = size
        self._tick: int = used  # the cache's use counter: larger is more recent

    # -- the report store (clonegate.store.ReportStore) ------------------------------

    async def begin_run(self, options: Mapping[str, object]) -> int:
        text = json.dumps(dict(options), sort_keys=True, default=str)

        def begin(db: sqlite3.Connection) -> int:
            cursor = db.execute(
                "INSERT INTO runs (started_at, options) VALUES (?, ?)", (_now(), text)
            )
            assert cursor.lastrowid is not None
            return cursor.lastrowid

        return await self._write(begin)

    async def save(self, run_id: int, key: str, report: RepositoryReport) -> None:
        await self._write(lambda db: insert_report(db, run_id, key, report))

    async def finish_run(self, run_id: int) -> None:
        def finish(db: sqlite3.Connection) -> None:
            summary = reading.summary_of(db, run_id)
            db.execute(
                "UPDATE runs SET finished_at = ?, summary = ? WHERE id = ?",
                (_now(), json.dumps(summary), run_id),
            )

        await self._write(finish)

    async def save_events(self, run_id: int, events: Sequence[RunEvent]) -> None:
        rows = [(e.kind, microseconds(e.at), e.value, e.detail) for e in events]

        def save(db: sqlite3.Connection) -> None:
            (count,) = db.execute(
                "SELECT count(*) FROM run_events WHERE run_id = ?", (run_id,)
            ).fetchone()
            db.executemany(
                "INSERT INTO run_events VALUES (?, ?, ?, ?, ?, ?)",
                [(run_id, count + n, *row) for n, row in enumerate(rows)],
            )

        await self._write(save)

    async def last_result(self, key: str) -> StoredResult | None:
        row = await self._read(lambda db: reading.last_result(db, key))
        return StoredResult(*row[1:]) if row is not None else None

    async def reusable(
        self, key: str, commit: str, analyzer_version: str
    ) -> RepositoryReport | None:
        return await self._read(lambda db: reading.reusable(db, key, commit, analyzer_version))

    async def reusable_listed(
        self, key: str, listed: Listed, analyzer_version: str
    ) -> RepositoryReport | None:
        return await self._read(lambda db: reusable_listed(db, key, listed, analyzer_version))

    async def load(self, run_id: int, key: str) -> RepositoryReport | None:
        def load(db: sqlite3.Connection) -> RepositoryReport | None:
            row = db.execute(
                "SELECT id FROM reports WHERE run_id = ? AND key = ? AND duplicate_of IS NULL "
                "ORDER BY line LIMIT 1",
                (run_id, key),
            ).fetchone()
            return read_report(db, row[0]) if row is not None else None

        return await self._read(load)

    async def clone_memory(self, key: str, depth: int | None) -> int | None:
        row = await self._read(
            lambda db: db.execute(
                "SELECT r.clone_memory FROM reports r JOIN runs u ON u.id = r.run_id "
                # An integer, or no figure: an edited value is no hint, never an error.
                "WHERE r.key = ? AND typeof(r.clone_memory) = 'integer' AND r.reused = 0 "
                "AND r.duplicate_of IS NULL "
                # CASE, not AND: SQLite does not promise to skip json_extract on a
                # damaged options column, and it raises there (ADR 0016).
                "AND CASE WHEN json_valid(u.options) "
                "THEN json_extract(u.options, '$.clone_depth') END IS ? "
                "ORDER BY r.run_id DESC LIMIT 1",
                (key, depth),
            ).fetchone()
        )
        return int(row[0]) if row is not None else None

    # -- the analysis cache (clonegate.store.AnalysisCache) --------------------------

    async def lookup(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        def lookup(db: sqlite3.Connection) -> dict[bytes, bytes]:
            found: dict[bytes, bytes] = {}
            for start in range(0, len(keys), _CHUNK):
                chunk = keys[start : start + _CHUNK]
                found.update(
                    db.execute(
                        # Bytes whatever the row holds: an edited TEXT value that is
                        # not UTF-8 would make sqlite3 raise for the whole lookup.
                        "SELECT key, CAST(value AS BLOB) FROM analysis_cache "
                        f"WHERE key IN ({', '.join('?' * len(chunk))})",
                        chunk,
                    ).fetchall()
                )
            return found

        found = await self._read(lookup)
        if found:
            # Recency for eviction: queued, not awaited; a lookup never waits on a write.
            self._tick += 1
            tick, hits = self._tick, list(found)
            self._write_nowait(lambda db: touch(db, hits, tick))
        return found

    async def keep(self, entries: Mapping[bytes, bytes]) -> None:
        if not entries:
            await trio.lowlevel.checkpoint()
            return
        self._tick += 1
        tick = self._tick
        rows = [(key, value, tick) for key, value in entries.items()]

        def keep(db: sqlite3.Connection) -> None:
            # Replacing, not ignoring: the analyzer keeps only what it could not take
            # from the cache, so an existing key here held a value it could not decode
            # (damaged, or another writer's), and this repairs it. The running size
            # may then count a value twice; eviction recounts before deleting.
            db.executemany("INSERT OR REPLACE INTO analysis_cache VALUES (?, ?, ?)", rows)
            self._cache_bytes += sum(len(key) + len(value) for key, value, _ in rows)
            if self._cache_bytes > self._cache_limit:
                self._cache_bytes = evict(db, self._cache_limit * 9 // 10)

        await self._write(keep)

    # -- the writer ---------------------------------------------------------------------

    async def _write(self, apply: Callable[[sqlite3.Connection], T]) -> T:
        request = _Write(apply)
        try:
            await self._send.send(request)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise StoreError(f"the result store {self.path} is closed") from None
        await request.done.wait()
        if request.error is not None:
            raise store_error(self.path, request.error)
        return request.result  # type: ignore[return-value]

    def _write_nowait(self, apply: Callable[[sqlite3.Connection], object]) -> None:
        # Only a recency hint: dropping it costs a less accurate eviction, nothing more.
        with suppress(trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self._send.send_nowait(_Write(apply))

    async def _writer(self) -> None:
        try:
            await self._write_until_closed()
        finally:
            self._drained.set()

    async def _write_until_closed(self) -> None:
        async with self._receive:
            async for first in self._receive:
                batch: list[_Write[Any]] = [first]
                while True:
                    try:
                        batch.append(self._receive.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                # Never abandoned: a transaction is finished or rolled back before
                # anything else happens to this connection.
                await trio.to_thread.run_sync(_apply, self._db, batch)
                for request in batch:
                    request.done.set()

    def _close_all(self) -> None:
        """Close the writer's and every reader's connection (no read is running)."""
        self._db.close()
        self._close_readers()


def _apply(db: sqlite3.Connection, batch: list[_Write[Any]]) -> None:
    """Apply ``batch`` in one transaction, each request in a savepoint of its own."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as exc:
        for request in batch:
            request.error = exc
        return
    for request in batch:
        db.execute("SAVEPOINT request")
        try:
            request.result = request.apply(db)
            db.execute("RELEASE request")
        except sqlite3.Error as exc:
            request.error = exc
            try:
                db.execute("ROLLBACK TO request")
                db.execute("RELEASE request")
            except sqlite3.Error:
                break
    try:
        db.execute("COMMIT")
    except sqlite3.Error as exc:
        # Nothing of this batch is written: every request learns it.
        for request in batch:
            request.error = request.error or exc
        with suppress(sqlite3.Error):
            db.execute("ROLLBACK")


@asynccontextmanager
async def open_store(
    path: str | Path, *, cache_limit: int = DEFAULT_CACHE_LIMIT, create: bool = True
) -> AsyncIterator[SQLiteStore]:
    """Open (creating it if ``create``, and bringing its schema up to date) the store
    at ``path``; its writer task runs until the block ends.

    ``cache_limit``: bytes the analysis cache may hold; past it, the least recently
    used entries are evicted down to 90% of it. Raises :class:`clonegate.store.StoreError`
    if the file cannot be opened or is not a clonegate store.
    """
    path = Path(path)
    db = await trio.to_thread.run_sync(open_writer, path, create)
    try:
        store = SQLiteStore(path, db, cache_limit)
    except BaseException:
        await trio.to_thread.run_sync(db.close)
        raise
    raised: BaseException | None = None
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(store._writer)
            try:
                yield store
            except BaseException as exc:
                # Re-raised below, outside the nursery: the caller's own exception
                # (a StoreError from a save) comes back as itself, not in a group.
                raised = exc
            finally:
                # Let the writer apply what is queued, then end: shielded, bounded.
                store._send.close()
                with trio.move_on_after(_CLOSE_SECONDS, shield=True):
                    await store._drained.wait()
                nursery.cancel_scope.cancel()
    finally:
        await trio.to_thread.run_sync(store._close_all)
    if raised is not None:
        raise raised


def _now() -> str:
    # To the microsecond, as the phases and events of its reports are (ADR 0020): a
    # run's end in seconds would come before what it ended with.
    return datetime.now(UTC).isoformat(timespec="microseconds")

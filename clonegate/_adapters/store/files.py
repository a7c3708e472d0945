"""Opening the store's file, for writing or only for reading, with messages that say
what is wrong and where (ADR 0016)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path

from ..._domain.store import StoreError
from .schema import MIGRATIONS, SchemaError, migrate, schema_version

__all__ = ["BUSY_SECONDS", "connect", "open_read_only", "open_writer", "store_error"]

# Another process holding the write lock (a second run on the same file) is waited
# for this long before a write fails.
BUSY_SECONDS = 30.0


def connect(path: Path) -> sqlite3.Connection:
    """A connection that may write; autocommit at the driver level: transactions are
    explicit (BEGIN IMMEDIATE takes the write lock up front, so a batch never fails
    half-way on a lock upgrade)."""
    db = sqlite3.connect(path, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False)
    db.execute("PRAGMA foreign_keys = ON")
    return db


def open_writer(path: Path, create: bool) -> sqlite3.Connection:
    """The writing connection to the store at ``path``, its schema brought up to date.
    Raises :class:`StoreError` (what is wrong, with the path)."""
    _refuse_unusable(path, create)
    try:
        db = connect(path)
    except sqlite3.Error as exc:
        raise store_error(path, exc) from None
    try:
        # WAL: readers see the last commit while the writer writes; synchronous=NORMAL
        # in WAL mode loses nothing to a crashed process (only to a lost machine).
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        migrate(db)
    except (sqlite3.Error, SchemaError) as exc:
        db.close()
        if _read_only(path):
            raise StoreError(
                f"the result store {path} is on a read-only file system: a run writes "
                "its reports there"
            ) from None
        raise store_error(path, exc) from None
    except BaseException:
        db.close()
        raise
    return db


def open_read_only(path: Path) -> tuple[Callable[[], sqlite3.Connection], Callable[[], None]]:
    """What opens a read-only connection to the store at ``path`` (one per reading
    thread), once the file is known to be a store of this schema, and what to call
    after each read to be sure it read one state of the file (it raises
    :class:`StoreError` otherwise). Nothing is written, except an older schema
    brought up to date where the file can be written.

    On a read-only file system SQLite cannot make the WAL's shared-memory file: a
    store closed cleanly (no ``-wal`` left) is then opened ``immutable``; one with a
    write-ahead log still to merge is refused, since reading it immutable would
    silently miss the log's reports. Immutable means no locks and no check for
    changes, and a read-only mount may be another mount's writable file (a bind
    mount into a container while runs write it outside): each read is then checked
    against the file as it was opened, so a file rewritten under the reader is an
    error, never pages of two states read as one.
    """
    _refuse_unusable(path, create=False)
    opener = _reader(path, "mode=ro")
    unchanged: Callable[[], None] = _always_unchanged
    try:
        version = _schema_version(opener)
    except sqlite3.OperationalError as exc:
        _explain_unopenable(path, exc)
        unchanged = _unchanged_since(path)  # the file as the reads will see it
        opener = _reader(path, "immutable=1")
        try:
            version = _schema_version(opener)
        except sqlite3.Error as again:
            raise store_error(path, again) from None
    except sqlite3.Error as exc:
        raise store_error(path, exc) from None
    _check_version(path, version)
    return opener, unchanged


def _always_unchanged() -> None:
    """SQLite's own locks keep each read of a file it can lock to one state."""


def _unchanged_since(path: Path) -> Callable[[], None]:
    """What raises :class:`StoreError` once the file at ``path`` is not as it is now."""

    def fingerprint() -> tuple[int, ...]:
        try:
            found = os.stat(path)
        except OSError:
            return ()
        # Size too: a write within the file system's timestamp tick changes no time.
        return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)

    opened = fingerprint()

    def unchanged() -> None:
        if fingerprint() != opened:
            raise StoreError(
                f"the result store {path} changed while it was read: on a read-only "
                "mount it is read without locks, and something writes it through "
                "another mount (a run?); read it again once that is done"
            )

    return unchanged


def _reader(path: Path, query: str) -> Callable[[], sqlite3.Connection]:
    uri = f"{path.absolute().as_uri()}?{query}"
    return lambda: sqlite3.connect(
        uri, uri=True, timeout=BUSY_SECONDS, isolation_level=None, check_same_thread=False
    )


def _schema_version(opener: Callable[[], sqlite3.Connection]) -> int:
    db = opener()
    try:
        return schema_version(db)
    finally:
        db.close()


def _explain_unopenable(path: Path, exc: sqlite3.Error) -> None:
    """Why SQLite could not open ``path`` read-only (it needs to create the WAL's
    ``-shm`` file beside it); returns only where opening it immutable is right."""
    if "unable to open" not in str(exc):
        raise store_error(path, exc) from None
    if not _read_only(path):
        if os.access(path.parent, os.W_OK | os.X_OK):
            raise store_error(path, exc) from None
        raise StoreError(
            f"cannot read the result store {path}: SQLite needs to create {path}-shm "
            f"beside it, and the directory {path.parent} is not writable by this user"
        )
    log = path.with_name(path.name + "-wal")
    with suppress(OSError):
        if log.stat().st_size > 0:
            raise StoreError(
                f"the result store {path} is on a read-only file system and its "
                f"write-ahead log {log} was never merged (a run that did not end "
                "cleanly): SQLite cannot read both there; open it once where it can be "
                "written, or copy both files"
            )


def _check_version(path: Path, version: int) -> None:
    if version == 0:
        raise StoreError(f"{path} is not a clonegate result store (an SQLite file with no schema)")
    if version > len(MIGRATIONS):
        raise store_error(
            path,
            SchemaError(
                f"the database has schema version {version}, newer "
                f"than this clonegate's {len(MIGRATIONS)}: use a "
                "newer clonegate"
            ),
        )
    if version < len(MIGRATIONS):
        if _read_only(path):
            raise StoreError(
                f"the result store {path} has schema version {version}, older than this "
                f"clonegate's {len(MIGRATIONS)}, and is on a read-only file system: open it "
                "once where it can be written (any command) to bring it up to date"
            )
        open_writer(path, create=False).close()  # the one write a reading command makes


def _refuse_unusable(path: Path, create: bool) -> None:
    """A clear error for what SQLite would call "unable to open database file" or
    worse ("cannot rollback - no transaction is active" for ``/dev/full``)."""
    if path.is_dir():
        raise StoreError(f"the result store {path} is a directory: give the path of a file")
    if path.exists():
        if not path.is_file():
            raise StoreError(
                f"the result store {path} is not a regular file (a result store is an SQLite file)"
            )
        return
    if not create:
        raise StoreError(f"no result store at {path}")
    if not path.parent.is_dir():
        raise StoreError(
            f"cannot create the result store {path}: the directory {path.parent} does not exist"
        )
    if not os.access(path.parent, os.W_OK | os.X_OK) and not _read_only(path):
        raise StoreError(
            f"cannot create the result store {path}: the directory {path.parent} is not writable"
        )


def _read_only(path: Path) -> bool:
    try:
        return bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def store_error(path: Path, exc: Exception) -> StoreError:
    return StoreError(f"the result store {path}: {exc}")

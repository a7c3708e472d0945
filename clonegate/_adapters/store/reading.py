"""Reading the store: runs, one repository's history, a run's reports, two runs' diff."""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..._domain.errors import InvalidURLError
from ..._domain.inventory import Inventory, TestSuite
from ..._domain.reports import RepositoryReport
from ..._domain.store import DamagedRowError
from ..._domain.timeline import from_microseconds
from ..._domain.urls import parse_repo_url
from .damage import Damage, reading_row
from .rows import read_report

__all__ = [
    "LAST_RESULT",
    "Difference",
    "HistoryEntry",
    "RunInfo",
    "diff",
    "first_row",
    "history",
    "last_result",
    "reports",
    "reusable",
    "run_ids",
    "runs",
    "runs_by_id",
]


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run: when (UTC, ISO 8601), with which options, and its summary once it ended
    (``finished_at`` stays None for a run whose process died)."""

    id: int
    started_at: str
    finished_at: str | None
    options: dict[str, Any]
    summary: dict[str, int] | None


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """What one run found for one repository; ``unread_files``: test files of
    languages and frameworks not read (None: not counted, ADR 0016). What the forge's
    listing said then, when the line came from one (ADR 0023; None otherwise): the
    forge, its id for the repository, its stars, and ``pushed_at`` (UTC, ISO 8601)."""

    run_id: int
    started_at: str
    status: str
    commit: str | None
    committed_at: str | None
    test_files: int | None
    tests: int | None
    reused: bool
    error_kind: str | None
    unread_files: int | None = None
    forge: str | None = None
    forge_id: str | None = None
    stars: int | None = None
    pushed_at: str | None = None


@dataclass(frozen=True, slots=True)
class Difference:
    """A repository whose status or tests changed from one run to the other.

    ``added``/``removed``: per test file, the tests (``Suite > test``) found in only
    one of the two runs; a test that moved to another line is not a change. A
    repository in only one run has the other side's fields None.
    """

    key: str
    url: str
    status_a: str | None
    status_b: str | None
    tests_a: int | None
    tests_b: int | None
    commit_a: str | None
    commit_b: str | None
    added: dict[str, list[str]] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)


# A repository's newest successful result of its own (not reused, not a duplicate);
# of two in one run (a session's execute() calls), the one written last.
LAST_RESULT = (
    "FROM reports WHERE key = ? AND status = 'ok' AND reused = 0 AND duplicate_of IS NULL "
    "ORDER BY run_id DESC, id DESC LIMIT 1"
)


def reusable(
    db: sqlite3.Connection, key: str, commit: str, analyzer_version: str
) -> RepositoryReport | None:
    """The last result's report for ``key`` if made at ``commit`` by ``analyzer_version``.
    Raises :class:`DamagedRowError` if that result cannot be read."""
    row = last_result(db, key)
    if row is None or (row[2], row[3]) != (commit, analyzer_version):
        return None
    return read_report(db, row[0])


def last_result(db: sqlite3.Connection, key: str) -> tuple[int, int, str, str] | None:
    """Report id, run id, commit and analyzer version of ``key``'s last result."""
    row: tuple[int, int, str, str] | None = first_row(
        db, "id, run_id, commit_id, analyzer_version", LAST_RESULT, key
    )
    return row


def first_row(db: sqlite3.Connection, columns: str, query: str, key: str) -> Any:
    """``columns`` of the first row ``query`` (``FROM ... WHERE key = ? ...``) finds."""
    try:
        return db.execute(f"SELECT {columns} {query}", (key,)).fetchone()
    except sqlite3.Error:
        # Text that is not UTF-8 in that row: name it (its id is a number, readable).
        (report_id,) = db.execute("SELECT id " + query, (key,)).fetchone()
        with reading_row("reports", report_id):
            raise


def summary_of(db: sqlite3.Connection, run_id: int) -> dict[str, int]:
    """A run's counts, from its stored reports."""
    row = db.execute(
        "SELECT count(*), "
        "coalesce(sum(status = 'ok'), 0), coalesce(sum(status = 'failed'), 0), "
        "coalesce(sum(status = 'timeout'), 0), coalesce(sum(status = 'cancelled'), 0), "
        "coalesce(sum(duplicate_of IS NOT NULL), 0), coalesce(sum(reused), 0), "
        "coalesce(sum(test_files), 0), coalesce(sum(tests), 0), "
        "coalesce(sum(unread_files), 0) "
        "FROM reports WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    names = ("repositories", "ok", "failed", "timeout", "cancelled", "duplicates", "reused")
    counts = (*names, "test_files", "tests", "unread_files")
    summary = dict(zip(counts, map(int, row), strict=True))
    # Stretches of memory thrash, each a run event (issue 46); 0 said, so that a run
    # stored before they were counted (no key) is not read as one without any.
    (thrash,) = db.execute(
        "SELECT count(*) FROM run_events WHERE run_id = ? AND kind = 'memory_thrash'", (run_id,)
    ).fetchone()
    return summary | {"memory_thrash": int(thrash)}


def run_ids(db: sqlite3.Connection) -> list[int]:
    """Every run's id, newest first (ids only: nothing to decode, nothing damaged)."""
    return [int(row[0]) for row in db.execute("SELECT id FROM runs ORDER BY id DESC")]


def runs(db: sqlite3.Connection, limit: int | None, damage: Damage) -> list[RunInfo]:
    return runs_by_id(db, run_ids(db)[:limit], damage)


def runs_by_id(db: sqlite3.Connection, ids: list[int], damage: Damage) -> list[RunInfo]:
    """The runs of ``ids`` that exist, in that order; a damaged one in ``damage``."""
    found = []
    for run_id in ids:
        try:
            with reading_row("runs", run_id):
                row = db.execute(
                    "SELECT started_at, finished_at, options, summary FROM runs WHERE id = ?",
                    (run_id,),
                ).fetchone()
                if row is None:
                    continue
                started, finished, options, summary = row
                found.append(
                    RunInfo(
                        run_id,
                        started,
                        finished,
                        _json_object(options),
                        _json_object(summary) if summary else None,
                    )
                )
        except DamagedRowError as exc:
            damage.tolerate(exc)
    return found


def _json_object(text: str) -> dict[str, Any]:
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError(f"a JSON {type(value).__name__}, not an object")
    return value


def key_of(url: str) -> str:
    """The store's key for ``url`` (``RepoURL.key``), or ``url`` itself if it is no URL."""
    try:
        return parse_repo_url(url, allow_local=True).key
    except InvalidURLError:
        return url


def history(db: sqlite3.Connection, url: str, damage: Damage) -> list[HistoryEntry]:
    rows = db.execute(
        "SELECT r.id, r.run_id FROM reports r JOIN runs ON runs.id = r.run_id "
        "WHERE r.key = ? AND r.duplicate_of IS NULL ORDER BY r.run_id, r.line",
        (key_of(url),),
    ).fetchall()
    found = []
    for report_id, run_id in rows:
        try:
            with reading_row("runs", run_id):
                (started,) = db.execute(
                    "SELECT started_at FROM runs WHERE id = ?", (run_id,)
                ).fetchone()
            with reading_row("reports", report_id):
                status, commit, at, files, tests, reused, kind, unread, *listed = db.execute(
                    "SELECT status, commit_id, committed_at, test_files, tests, reused, "
                    "error_kind, unread_files, forge, forge_id, stars, pushed_at "
                    "FROM reports WHERE id = ?",
                    (report_id,),
                ).fetchone()
                if listed[-1] is not None:  # pushed_at, stored in microseconds
                    listed[-1] = from_microseconds(listed[-1]).isoformat()
        except DamagedRowError as exc:
            damage.tolerate(exc)
            continue
        entry = (run_id, started, status, commit, at, files, tests, bool(reused), kind, unread)
        found.append(HistoryEntry(*entry, *listed))
    return found


def reports(
    db: sqlite3.Connection, run_id: int, damage: Damage, *, inventory: bool
) -> list[RepositoryReport]:
    ids = [
        row[0]
        for row in db.execute("SELECT id FROM reports WHERE run_id = ? ORDER BY line", (run_id,))
    ]
    found = []
    for report_id in ids:
        try:
            found.append(read_report(db, report_id, inventory=inventory))
        except DamagedRowError as exc:
            damage.tolerate(exc)
    return found


def diff(db: sqlite3.Connection, run_a: int, run_b: int, damage: Damage) -> list[Difference]:
    unreadable: set[str] = set()  # keys with a damaged row: not compared at all
    a, b = _by_key(db, run_a, damage, unreadable), _by_key(db, run_b, damage, unreadable)
    changes = []
    for key in sorted((a.keys() | b.keys()) - unreadable):
        old, new = a.get(key), b.get(key)
        if old is not None and new is not None and _same(old, new):
            continue
        try:
            before = _tests(db, old[0]) if old is not None else {}
            after = _tests(db, new[0]) if new is not None else {}
        except DamagedRowError as exc:
            damage.tolerate(exc)
            continue
        change = _difference(key, old, new, before, after)
        if change is not None:
            changes.append(change)
    return changes


# (report id, url, status, commit, tests, analyzer version)
_Row = tuple[int, str, str, str | None, int | None, str | None]


def _difference(
    key: str,
    old: _Row | None,
    new: _Row | None,
    before: dict[str, Counter[str]],
    after: dict[str, Counter[str]],
) -> Difference | None:
    added, removed = _tests_gained(before, after), _tests_gained(after, before)
    unchanged = old is not None and new is not None and (old[2], old[4]) == (new[2], new[4])
    if unchanged and not (added or removed):
        return None
    return Difference(
        key=key,
        url=(new or old)[1],  # type: ignore[index]
        status_a=old[2] if old else None,
        status_b=new[2] if new else None,
        tests_a=old[4] if old else None,
        tests_b=new[4] if new else None,
        commit_a=old[3] if old else None,
        commit_b=new[3] if new else None,
        added=added,
        removed=removed,
    )


def _tests_gained(
    before: dict[str, Counter[str]], after: dict[str, Counter[str]]
) -> dict[str, list[str]]:
    """By file, sorted, the tests ``after`` has more of than ``before``."""
    gained: dict[str, list[str]] = {}
    for path in sorted(before.keys() | after.keys()):
        more = after.get(path, Counter()) - before.get(path, Counter())
        if more:
            gained[path] = sorted(more.elements())
    return gained


def _by_key(
    db: sqlite3.Connection, run_id: int, damage: Damage, unreadable: set[str]
) -> dict[str, _Row]:
    ids = db.execute(
        "SELECT id FROM reports WHERE run_id = ? AND duplicate_of IS NULL ORDER BY line DESC",
        (run_id,),
    ).fetchall()
    found: dict[str, _Row] = {}
    for (report_id,) in ids:  # the first line of a repository last: it is the one kept
        try:
            with reading_row("reports", report_id):
                key, url, status, commit, tests, version = db.execute(
                    "SELECT key, url, status, commit_id, tests, analyzer_version FROM reports "
                    "WHERE id = ?",
                    (report_id,),
                ).fetchone()
        except DamagedRowError as exc:
            damage.tolerate(exc)
            unreadable.update(_key_of_row(db, report_id))
            continue
        found[key or url] = (report_id, url, status, commit, tests, version)
    return found


def _key_of_row(db: sqlite3.Connection, report_id: int) -> list[str]:
    """The key of a damaged row if that much can be read: its repository is then left
    out of a diff rather than shown as present in only one run."""
    try:
        key, url = db.execute("SELECT key, url FROM reports WHERE id = ?", (report_id,)).fetchone()
    except sqlite3.Error:
        return []
    return [key or url]


def _same(old: _Row, new: _Row) -> bool:
    """One commit analyzed by one analyzer version, with the same outcome: the same
    inventory, so there is nothing to compare test by test."""
    return old[2:] == new[2:] and old[3] is not None


def _tests(db: sqlite3.Connection, report_id: int) -> dict[str, Counter[str]]:
    inventory = read_report(db, report_id).inventory or Inventory((), ())
    found: dict[str, Counter[str]] = {}
    for file in inventory.files:
        names: Counter[str] = Counter(test.name for test in file.tests)
        for suite in file.suites:
            _named(suite, "", names)
        found[file.path] = names
    return found


def _named(suite: TestSuite, prefix: str, names: Counter[str]) -> None:
    chain = f"{prefix}{suite.name} > "
    names.update(f"{chain}{test.name}" for test in suite.tests)
    for child in suite.suites:
        _named(child, chain, names)

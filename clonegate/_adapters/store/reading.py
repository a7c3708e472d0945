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
from ..._domain.urls import parse_repo_url
from .rows import inventory_rows_of, read_inventory, read_report

__all__ = [
    "LAST_RESULT",
    "Difference",
    "HistoryEntry",
    "RunInfo",
    "diff",
    "history",
    "reports",
    "reusable",
    "runs",
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
    """What one run found for one repository."""

    run_id: int
    started_at: str
    status: str
    commit: str | None
    committed_at: str | None
    test_files: int | None
    tests: int | None
    reused: bool
    error_kind: str | None


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
    """The last result's report for ``key`` if made at ``commit`` by ``analyzer_version``."""
    row = db.execute("SELECT id, commit_id, analyzer_version " + LAST_RESULT, (key,)).fetchone()
    if row is None or (row[1], row[2]) != (commit, analyzer_version):
        return None
    return read_report(db, row[0])


def summary_of(db: sqlite3.Connection, run_id: int) -> dict[str, int]:
    """A run's counts, from its stored reports."""
    row = db.execute(
        "SELECT count(*), "
        "coalesce(sum(status = 'ok'), 0), coalesce(sum(status = 'failed'), 0), "
        "coalesce(sum(status = 'timeout'), 0), coalesce(sum(status = 'cancelled'), 0), "
        "coalesce(sum(duplicate_of IS NOT NULL), 0), coalesce(sum(reused), 0), "
        "coalesce(sum(test_files), 0), coalesce(sum(tests), 0) "
        "FROM reports WHERE run_id = ?",
        (run_id,),
    ).fetchone()
    names = ("repositories", "ok", "failed", "timeout", "cancelled", "duplicates", "reused")
    return dict(zip((*names, "test_files", "tests"), map(int, row), strict=True))


def runs(db: sqlite3.Connection, limit: int | None) -> list[RunInfo]:
    rows = db.execute(
        "SELECT id, started_at, finished_at, options, summary FROM runs ORDER BY id DESC LIMIT ?",
        (-1 if limit is None else limit,),
    )
    return [
        RunInfo(
            id, started, finished, json.loads(options), json.loads(summary) if summary else None
        )
        for id, started, finished, options, summary in rows
    ]


def key_of(url: str) -> str:
    """The store's key for ``url`` (``RepoURL.key``), or ``url`` itself if it is no URL."""
    try:
        return parse_repo_url(url, allow_local=True).key
    except InvalidURLError:
        return url


def history(db: sqlite3.Connection, url: str) -> list[HistoryEntry]:
    rows = db.execute(
        "SELECT r.run_id, runs.started_at, r.status, r.commit_id, r.committed_at, "
        "r.test_files, r.tests, r.reused, r.error_kind FROM reports r "
        "JOIN runs ON runs.id = r.run_id WHERE r.key = ? AND r.duplicate_of IS NULL "
        "ORDER BY r.run_id, r.line",
        (key_of(url),),
    )
    return [
        HistoryEntry(run, started, status, commit, at, files, tests, bool(reused), kind)
        for run, started, status, commit, at, files, tests, reused, kind in rows
    ]


def reports(db: sqlite3.Connection, run_id: int, *, inventory: bool) -> list[RepositoryReport]:
    ids = [
        row[0]
        for row in db.execute("SELECT id FROM reports WHERE run_id = ? ORDER BY line", (run_id,))
    ]
    return [read_report(db, i, inventory=inventory) for i in ids]


def diff(db: sqlite3.Connection, run_a: int, run_b: int) -> list[Difference]:
    a, b = _by_key(db, run_a), _by_key(db, run_b)
    changes = []
    for key in sorted(a.keys() | b.keys()):
        old, new = a.get(key), b.get(key)
        if old is not None and new is not None and _same(old, new):
            continue
        added: dict[str, list[str]] = {}
        removed: dict[str, list[str]] = {}
        before = _tests(db, old[0]) if old is not None else {}
        after = _tests(db, new[0]) if new is not None else {}
        for path in sorted(before.keys() | after.keys()):
            gained = after.get(path, Counter()) - before.get(path, Counter())
            lost = before.get(path, Counter()) - after.get(path, Counter())
            if gained:
                added[path] = sorted(gained.elements())
            if lost:
                removed[path] = sorted(lost.elements())
        statuses_differ = old is None or new is None or old[2] != new[2]
        if not (added or removed or statuses_differ or old[4] != new[4]):  # type: ignore[index]
            continue
        changes.append(
            Difference(
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
        )
    return changes


# (report id, url, status, commit, tests, analyzer version)
_Row = tuple[int, str, str, str | None, int | None, str | None]


def _by_key(db: sqlite3.Connection, run_id: int) -> dict[str, _Row]:
    rows = db.execute(
        "SELECT key, id, url, status, commit_id, tests, analyzer_version FROM reports "
        "WHERE run_id = ? AND duplicate_of IS NULL ORDER BY line DESC",
        (run_id,),
    )
    return {
        key or url: (id, url, status, commit, tests, version)
        for key, id, url, status, commit, tests, version in rows
    }


def _same(old: _Row, new: _Row) -> bool:
    """One commit analyzed by one analyzer version, with the same outcome: the same
    inventory, so there is nothing to compare test by test."""
    return old[2:] == new[2:] and old[3] is not None


def _tests(db: sqlite3.Connection, report_id: int) -> dict[str, Counter[str]]:
    inventory: Inventory = read_inventory(db, inventory_rows_of(db, report_id))
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

"""Reports to rows and back: the columns a query needs, the document the CLI prints,
and the inventory in one row per file, suite, test and scan error."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ..._domain.inventory import Inventory, ScanError, TestCase, TestFile, TestStatus, TestSuite
from ..._domain.report_json import report_from_json, to_json
from ..._domain.reports import RepositoryReport
from ..._domain.timeline import Phase, from_microseconds, microseconds
from .damage import reading_row

__all__ = ["insert_report", "inventory_rows_of", "read_inventory", "read_report"]

_REPORT_COLUMNS = (
    "run_id, line, key, url, status, error_phase, error_kind, error, branch, commit_id, "
    "committed_at, analyzer_version, reused, duplicate_of, waited, setup, clone, analysis, "
    "test_files, tests, document, clone_memory, unread_files, retried_attempts, "
    "forge, forge_id, pushed_at, stars"
)
_PLACES = ", ".join("?" * len(_REPORT_COLUMNS.split(",")))


def insert_report(db: sqlite3.Connection, run_id: int, key: str, report: RepositoryReport) -> int:
    """Insert ``report`` and its inventory; the report's row id. A report already
    stored for that run and line is replaced (a retried write).

    A reused report's inventory is not copied: its row points at the rows of the
    stored report it was reused from (``inventory_of``), found by key, commit and
    analyzer version, the same inventory by construction (ADR 0016); the totals are
    compared all the same, and rows of its own are written if they differ.
    """
    old = db.execute(
        "SELECT id FROM reports WHERE run_id = ? AND line = ?", (run_id, report.index)
    ).fetchone()
    if old is not None:
        # A later run's reused report may share these rows: they stay, keyed by the
        # old id, which is all a reader needs.
        sharing = db.execute("SELECT 1 FROM reports WHERE inventory_of = ? LIMIT 1", old)
        if sharing.fetchone() is None:
            for table in ("tests", "suites", "files", "scan_errors"):
                db.execute(f"DELETE FROM {table} WHERE report_id = ?", old)
        db.execute("DELETE FROM phases WHERE report_id = ?", old)  # its own, never shared
        db.execute("DELETE FROM reports WHERE id = ?", old)
    shared = _shared_inventory(db, key, report) if report.reused else None
    cursor = db.execute(
        f"INSERT INTO reports ({_REPORT_COLUMNS}) VALUES ({_PLACES})",
        _report_row(run_id, key, report),
    )
    report_id = cursor.lastrowid
    assert report_id is not None
    db.executemany(
        "INSERT INTO phases VALUES (?, ?, ?, ?, ?, ?)",
        [
            (report_id, n, p.name, p.attempt, microseconds(p.started), microseconds(p.ended))
            for n, p in enumerate(report.phases)
        ],
    )
    if shared is not None:
        db.execute("UPDATE reports SET inventory_of = ? WHERE id = ?", (shared, report_id))
    elif report.inventory is not None:
        _insert_inventory(db, report_id, report.inventory)
    return report_id


def _report_row(run_id: int, key: str, report: RepositoryReport) -> tuple[object, ...]:
    """The ``reports`` row of ``report``, in ``_REPORT_COLUMNS``' order."""
    error, ref, totals, timings = report.error, report.ref, report.analysis, report.timings
    listed = report.listed
    return (
        run_id,
        report.index,
        key,
        report.url,
        str(report.status),
        error.phase if error else None,
        error.kind if error else None,
        error.message if error else None,
        ref.branch if ref else None,
        ref.commit if ref else None,
        ref.committed_at.isoformat() if ref else None,
        totals.analyzer_version if totals else None,
        int(report.reused),
        report.duplicate_of,
        timings.waited,
        timings.setup,
        timings.clone,
        timings.analysis,
        totals.test_files if totals else None,
        totals.tests if totals else None,
        # Without its phases: they are rows of their own (ADR 0020).
        json.dumps(to_json(replace(report, phases=())), separators=(",", ":")),
        report.clone_memory,
        totals.unread_files if totals else None,
        len(report.attempts),
        # What the listing said, if the line came from one (the rest is in ``document``).
        str(listed.forge) if listed is not None and listed.forge is not None else None,
        listed.forge_id if listed is not None else None,
        microseconds(pushed) if listed is not None and (pushed := listed.pushed_at) else None,
        listed.stars if listed is not None else None,
    )


def _shared_inventory(db: sqlite3.Connection, key: str, report: RepositoryReport) -> int | None:
    """The id of the inventory rows ``report``, a reused one, can share; None if none."""
    ref, totals, inventory = report.ref, report.analysis, report.inventory
    if ref is None or totals is None or inventory is None:
        return None
    # The totals compared in SQL: a row edited to hold text there is no match, where
    # reading it would fail (not UTF-8) and take this save with it.
    row = db.execute(
        "SELECT COALESCE(inventory_of, id) FROM reports "
        "WHERE key = ? AND commit_id = ? AND analyzer_version = ? AND status = 'ok' "
        "AND reused = 0 AND duplicate_of IS NULL AND test_files = ? AND tests = ? "
        "ORDER BY run_id DESC LIMIT 1",
        (key, ref.commit, totals.analyzer_version, inventory.test_files, inventory.tests),
    ).fetchone()
    return None if row is None else int(row[0])


def _insert_inventory(db: sqlite3.Connection, report_id: int, inventory: Inventory) -> None:
    files: list[tuple[Any, ...]] = []
    suites: list[tuple[Any, ...]] = []
    tests: list[tuple[Any, ...]] = []
    for file_no, file in enumerate(inventory.files):
        files.append(
            (report_id, file_no, file.path, file.framework, file.language, file.config_note)
        )
        counter = _Counter()
        for test in file.tests:
            tests.append((report_id, file_no, counter.test(), None, *_test(test)))
        for suite in file.suites:
            _flatten(suite, None, report_id, file_no, counter, suites, tests)
    db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, ?)", files)
    db.executemany("INSERT INTO suites VALUES (?, ?, ?, ?, ?, ?)", suites)
    db.executemany("INSERT INTO tests VALUES (?, ?, ?, ?, ?, ?, ?)", tests)
    db.executemany(
        "INSERT INTO scan_errors VALUES (?, ?, ?, ?, ?)",
        [(report_id, n, e.path, e.phase, e.message) for n, e in enumerate(inventory.errors)],
    )


class _Counter:
    def __init__(self) -> None:
        self.suites = self.tests = 0

    def suite(self) -> int:
        self.suites += 1
        return self.suites - 1

    def test(self) -> int:
        self.tests += 1
        return self.tests - 1


def _test(test: TestCase) -> tuple[str, int, str]:
    return test.name, test.line, str(test.status)


def _flatten(
    suite: TestSuite,
    parent: int | None,
    report_id: int,
    file_no: int,
    counter: _Counter,
    suites: list[tuple[Any, ...]],
    tests: list[tuple[Any, ...]],
) -> None:
    """Depth first, in file order: a suite's own tests, then its nested suites."""
    number = counter.suite()
    suites.append((report_id, file_no, number, parent, suite.name, suite.line))
    for test in suite.tests:
        tests.append((report_id, file_no, counter.test(), number, *_test(test)))
    for child in suite.suites:
        _flatten(child, number, report_id, file_no, counter, suites, tests)


def read_report(
    db: sqlite3.Connection, report_id: int, *, inventory: bool = True
) -> RepositoryReport:
    """The report stored as ``report_id``, with its inventory if it had one (and
    ``inventory`` asks for it). Raises :class:`DamagedRowError` if the row, or its
    inventory's rows, cannot be read back as what was saved."""
    with reading_row("reports", report_id):
        document, shared = db.execute(
            "SELECT document, inventory_of FROM reports WHERE id = ?", (report_id,)
        ).fetchone()
        report = replace(report_from_json(json.loads(document)), phases=_phases(db, report_id))
        if report.analysis is None or not inventory:
            return report
        return replace(report, inventory=read_inventory(db, shared or report_id))


def _phases(db: sqlite3.Connection, report_id: int) -> tuple[Phase, ...]:
    return tuple(
        Phase(
            str(name),
            from_microseconds(started),
            from_microseconds(ended),
            None if attempt is None else int(attempt),
        )
        for name, attempt, started, ended in db.execute(
            "SELECT name, attempt, started, ended FROM phases WHERE report_id = ? "
            "ORDER BY phase_no",
            (report_id,),
        )
    )


def inventory_rows_of(db: sqlite3.Connection, report_id: int) -> int:
    """The id the inventory rows of report ``report_id`` are stored under."""
    row = db.execute("SELECT inventory_of FROM reports WHERE id = ?", (report_id,)).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else report_id


def read_inventory(db: sqlite3.Connection, report_id: int) -> Inventory:
    """The inventory stored under ``report_id`` (see :func:`inventory_rows_of`), equal
    to the one that was saved."""
    tests_of: dict[tuple[int, int | None], list[TestCase]] = {}
    for file_no, suite_no, name, line, status in db.execute(
        "SELECT file_no, suite_no, name, line, status FROM tests WHERE report_id = ? "
        "ORDER BY file_no, test_no",
        (report_id,),
    ):
        tests_of.setdefault((file_no, suite_no), []).append(
            TestCase(name, line, TestStatus(status))
        )
    children: dict[tuple[int, int | None], list[tuple[int, str, int]]] = {}
    for file_no, suite_no, parent_no, name, line in db.execute(
        "SELECT file_no, suite_no, parent_no, name, line FROM suites WHERE report_id = ? "
        "ORDER BY file_no, suite_no",
        (report_id,),
    ):
        children.setdefault((file_no, parent_no), []).append((suite_no, name, line))

    def suites_under(file_no: int, parent: int | None) -> Iterator[TestSuite]:
        for suite_no, name, line in children.get((file_no, parent), ()):
            yield TestSuite(
                name,
                line,
                tuple(suites_under(file_no, suite_no)),
                tuple(tests_of.get((file_no, suite_no), ())),
            )

    files = tuple(
        TestFile(
            path,
            framework,
            language,
            tuple(suites_under(file_no, None)),
            tuple(tests_of.get((file_no, None), ())),
            note,
        )
        for file_no, path, framework, language, note in db.execute(
            "SELECT file_no, path, framework, language, config_note FROM files "
            "WHERE report_id = ? ORDER BY file_no",
            (report_id,),
        )
    )
    errors = tuple(
        ScanError(path, phase, message)
        for path, phase, message in db.execute(
            "SELECT path, phase, message FROM scan_errors WHERE report_id = ? ORDER BY error_no",
            (report_id,),
        )
    )
    return Inventory(files, errors)

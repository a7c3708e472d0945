"""`clonegate check`: every row the store could not give back as it was saved."""

from __future__ import annotations

import sqlite3

from ..._domain.store import DamagedRow, DamagedRowError
from . import reading, run_report
from .damage import Damage, reading_row
from .rows import read_report

__all__ = ["check"]


def check(db: sqlite3.Connection) -> list[DamagedRow]:
    """SQLite's own check of the file, then every run (and its events) and every report
    (its document, its columns, its phases, its inventory rows) read back as the
    commands read them.

    The analysis cache is not read: its values are the analyzer's encoding, and one
    that does not decode is already a cache miss, parsed again and replaced.
    """
    found = [
        DamagedRow("file", None, f"SQLite: {line}")
        for (line,) in db.execute("PRAGMA quick_check")
        if line != "ok"
    ]
    damage = Damage(found)
    reading.runs(db, None, damage)
    for run_id in reading.run_ids(db):  # the limits' changes (ADR 0020)
        run_report.events(db, run_id, damage)
    for (report_id,) in db.execute("SELECT id FROM reports ORDER BY id").fetchall():
        try:
            _check_report(db, report_id)
        except DamagedRowError as exc:
            damage.tolerate(exc)
    return found


def _check_report(db: sqlite3.Connection, report_id: int) -> None:
    report = read_report(db, report_id)
    with reading_row("reports", report_id):
        # clonegate makes the totals from the inventory: rows deleted since, or a
        # report_id changed, show here.
        inventory, totals = report.inventory, report.analysis
        held = (inventory.test_files, inventory.tests) if inventory else None
        said = (totals.test_files, totals.tests) if totals else None
        if inventory is not None and held != said:
            raise ValueError(f"its inventory rows hold {held} files and tests, its totals {said}")
        row = db.execute(
            "SELECT status, commit_id, tests, r.run_id IN (SELECT id FROM runs) "
            "FROM reports r WHERE id = ?",
            (report_id,),
        ).fetchone()
        # The columns answer history, diff and reuse; the document answers export.
        ref = report.ref
        document = (
            str(report.status),
            ref.commit if ref else None,
            totals.tests if totals else None,
            1,
        )
        if tuple(row) != document:
            raise ValueError(f"its columns {tuple(row)!r} do not match its document {document!r}")

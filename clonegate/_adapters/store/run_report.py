"""A run as one document: what it was given, what each repository went through and
when, the limits' changes, the tests it found (issue 44, ADR 0020). What ``clonegate
report`` writes, and what a drawing of the run (the HTML report) reads."""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass

from ..._domain.reports import RepositoryReport
from ..._domain.store import DamagedRowError
from ..._domain.timeline import RunEvent, from_microseconds
from .damage import Damage, reading_row
from .reading import RunInfo, reports, runs_by_id

__all__ = ["RunReport", "TestCount", "events", "run_report"]


@dataclass(frozen=True, slots=True)
class TestCount:
    """Tests of one framework and language with one status, in a run's results."""

    framework: str
    language: str
    status: str
    tests: int


@dataclass(frozen=True, slots=True)
class RunReport:
    """One stored run, whole: ``run`` (when, the options used, the summary), its
    ``events`` in order (its clone limit and memory budget when it began, then each
    change), its ``repositories`` in input order (each with its phases and attempts,
    without the inventory), and its ``tests`` counted by framework, language and
    status, over the repositories listed. ``clonegate.to_json`` gives its JSON document.
    """

    run: RunInfo
    events: tuple[RunEvent, ...]
    repositories: tuple[RepositoryReport, ...]
    tests: tuple[TestCount, ...]


def run_report(db: sqlite3.Connection, run_id: int, damage: Damage) -> RunReport | None:
    """Run ``run_id`` as a :class:`RunReport`; None if there is no such run, or its
    own row is damaged (then in ``damage``). A damaged report or event is left out
    (in ``damage``), and so are its tests."""
    run = runs_by_id(db, [run_id], damage)
    if not run:
        return None
    listed = reports(db, run_id, damage, inventory=False)
    counts: Counter[tuple[str, str, str]] = Counter()
    for report_id in _report_ids(db, run_id, {r.index for r in listed}):
        try:
            with reading_row("reports", report_id):
                counts.update(_tests_of(db, report_id))
        except DamagedRowError as exc:
            damage.tolerate(exc)
    return RunReport(
        run=run[0],
        events=tuple(events(db, run_id, damage)),
        repositories=tuple(listed),
        tests=tuple(TestCount(*key, n) for key, n in sorted(counts.items())),
    )


def _report_ids(db: sqlite3.Connection, run_id: int, lines: set[int]) -> list[int]:
    """The ids of the run's reports at ``lines`` (those read back), duplicates left
    out: a line naming a repository seen before was not analyzed again."""
    rows = db.execute(
        "SELECT id, line FROM reports WHERE run_id = ? AND duplicate_of IS NULL ORDER BY line",
        (run_id,),
    )
    return [report_id for report_id, line in rows if line in lines]


def _tests_of(db: sqlite3.Connection, report_id: int) -> Counter[tuple[str, str, str]]:
    """Report ``report_id``'s tests by (framework, language, status): its own rows, or
    those of the report it was reused from (ADR 0016)."""
    found: Counter[tuple[str, str, str]] = Counter()
    for framework, language, status, n in db.execute(
        "SELECT f.framework, f.language, t.status, count(*) FROM reports r "
        "JOIN files f ON f.report_id = coalesce(r.inventory_of, r.id) "
        "JOIN tests t ON t.report_id = f.report_id AND t.file_no = f.file_no "
        "WHERE r.id = ? GROUP BY 1, 2, 3",
        (report_id,),
    ):
        found[(str(framework), str(language), str(status))] += int(n)
    return found


def events(db: sqlite3.Connection, run_id: int, damage: Damage) -> list[RunEvent]:
    """Run ``run_id``'s events in order; a damaged one in ``damage``, named by its run
    and number (``run_events (run 5) row 1``)."""
    numbers = [
        n
        for (n,) in db.execute(
            "SELECT event_no FROM run_events WHERE run_id = ? ORDER BY event_no", (run_id,)
        )
    ]
    found = []
    for number in numbers:
        try:
            with reading_row(f"run_events (run {run_id})", number):
                kind, at, value, detail = db.execute(
                    "SELECT kind, at, value, detail FROM run_events "
                    "WHERE run_id = ? AND event_no = ?",
                    (run_id, number),
                ).fetchone()
                if not isinstance(kind, str) or not isinstance(detail, str):
                    raise TypeError("kind and detail must be text")
                found.append(RunEvent(kind, from_microseconds(at), int(value), detail))
        except DamagedRowError as exc:
            damage.tolerate(exc)
    return found

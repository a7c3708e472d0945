"""The data the HTML report's table reads (issue 44, ADR 0022): one JSON document,
columnar (one list per field, a repository's values at its place in each), phases as
flat lists of numbers, test names up to a budget for the whole page.

Every string from a server or a repository goes in with its control characters shown
(``clonegate.visible``): the page sets it as text (``textContent``), never as markup,
and an escape sequence is seen as ``\\x1b``, not obeyed. The document is written by
``safe_json``: ``< > &`` escaped, so no ``</script>`` in a test name ends its element.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clonegate import Inventory, RepositoryReport, TestSuite
from clonegate.store import HistoryEntry

from ._html_svg import message, shown
from ._html_time import Axis

__all__ = ["PHASE_CODES", "TEXT_BUDGET", "table_data"]

# Phases as numbers in the page (the index here); attempt 0 is "no attempt".
PHASE_CODES = ("listing", "waiting", "setup", "clone", "retry_wait", "analysis")
# Characters of file paths, test names and scan errors the page lists in all: 4 MB of
# the 10 MB bound (ADR 0022), however many tests a repository has and however long it
# names them. Each repository may use an equal share; past it, files and names are
# left out (counted by status still, where the file is listed) and the page says how
# many. ``_ROW_COST``: what the JSON spends around a row beside its text.
TEXT_BUDGET = 4_000_000
_LEAST_SHARE = 2_000
_ROW_COST = 16


def table_data(
    axis: Axis,
    reports: Sequence[RepositoryReport],
    inventories: Mapping[int, Inventory],
    histories: Mapping[int, list[HistoryEntry]],
) -> dict[str, Any]:
    """The document the page's script reads: ``columns`` (field -> values, a repository
    at the same place in each), ``phases``, ``files`` and ``history`` by place."""
    share = max(_LEAST_SHARE, TEXT_BUDGET // max(len(reports), 1))
    return {
        "phaseNames": PHASE_CODES,
        "columns": _columns(reports),
        "phases": [_phases(axis, r) for r in reports],
        "files": [_files(inventories.get(r.index), share) for r in reports],
        "history": [_history(histories.get(r.index, [])) for r in reports],
    }


# The table's fields, each a list in the document (a repository at its place).
_FIELDS = (
    *("url", "status", "kind", "message", "branch", "commit", "tests", "files"),
    *("frameworks", "wait", "clone", "analysis", "attempts", "reused"),
)


def _columns(reports: Sequence[RepositoryReport]) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {name: [] for name in _FIELDS}
    for report in reports:
        for name, value in _fields(report).items():
            columns[name].append(value)
    return columns


def _fields(r: RepositoryReport) -> dict[str, Any]:
    totals = r.analysis
    frameworks = sorted(totals.by_framework.items()) if totals else []
    return {
        "url": shown(r.url),
        "status": r.status.value,
        "kind": shown(r.error.kind) if r.error else "",
        "message": message(r.error.message) if r.error else "",
        "branch": shown(r.ref.branch) if r.ref else "",
        "commit": shown(r.ref.commit[:12]) if r.ref else "",
        "tests": totals.tests if totals else None,
        "files": totals.test_files if totals else None,
        "frameworks": ", ".join(f"{shown(k)} {v}" for k, v in frameworks),
        "wait": round(r.timings.waited, 3),
        "clone": round(r.timings.clone, 3),
        "analysis": round(r.timings.analysis, 3),
        "attempts": len(r.attempts) + 1 if r.phases or r.attempts else 0,
        "reused": r.reused,
    }


def _phases(axis: Axis, report: RepositoryReport) -> list[int]:
    """[code, start ms, duration ms, attempt] per phase, flattened."""
    flat: list[int] = []
    for p in report.phases:
        code = PHASE_CODES.index(p.name) if p.name in PHASE_CODES else -1
        start = round(axis.at(p.started) * 1000)
        flat += [code, start, round(axis.at(p.ended) * 1000) - start, p.attempt or 0]
    return flat


@dataclass(slots=True)
class _Share:
    """What is left of a repository's share of the page's text (characters)."""

    left: int

    def take(self, text: str) -> bool:
        """Spend ``text``'s cost if it fits; False (and nothing spent) if not."""
        cost = len(text) + _ROW_COST
        if cost > self.left:
            self.left = 0  # past the share: nothing after this, however short
            return False
        self.left -= cost
        return True


def _files(inventory: Inventory | None, share: int) -> dict[str, Any] | None:
    """Each test file: path, framework, language, counts by status, and its tests'
    names with their statuses, while the repository's share of text lasts."""
    if inventory is None:
        return None
    budget = _Share(share)
    files: list[list[Any]] = []
    names_left = files_left = 0
    for file in inventory.files:
        named = list(_tests(file.suites, file.tests, ""))
        path = shown(file.path)
        if not budget.take(path):
            files_left += 1
            names_left += len(named)
            continue
        listed = []
        for name, status in named:
            label = shown(name)
            if not budget.take(label):
                break
            listed.append([label, status])
        names_left += len(named) - len(listed)
        statuses = dict(Counter(status for _, status in named))
        files.append([path, shown(file.framework), shown(file.language), statuses, listed])
    errors = [
        [shown(e.path), message(e.message)]
        for e in inventory.errors
        if budget.take(shown(e.path) + message(e.message))
    ]
    return {
        "files": files,
        "leftOut": names_left,
        "filesLeftOut": files_left,
        "errorsLeftOut": len(inventory.errors) - len(errors),
        "errors": errors,
    }


def _tests(
    suites: Sequence[TestSuite], tests: Sequence[Any], prefix: str
) -> Iterator[tuple[str, str]]:
    """(``Suite > test`` name, status) of every test, in file order, suites first."""
    for test in tests:
        yield prefix + test.name, test.status.value
    for suite in suites:
        yield from _tests(suite.suites, suite.tests, f"{prefix}{suite.name} > ")


def _history(entries: list[HistoryEntry]) -> list[list[Any]]:
    """[run id, tests (None: no result), status] per run that saw the repository."""
    return [[e.run_id, e.tests, e.status] for e in entries]

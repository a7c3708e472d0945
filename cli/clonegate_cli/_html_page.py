"""The HTML report of a stored run (issue 44, ADR 0022): one self-contained page,
inline style, script and SVG, no network. Drawn from ``clonegate.store.RunReport``:
the summary and options, the clone timeline, tests by framework, language and
status, failures by kind, and every repository in a table with its details.

Server text reaches the page in two ways only: escaped into HTML by
``_html_svg.text`` (entities, control characters shown), or inside the JSON data
element (``safe_json``), which the script sets as text.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from clonegate import Inventory, RepositoryReport
from clonegate.store import DamagedRow, HistoryEntry, RunEvent, RunReport

from ._html_data import table_data
from ._html_script import SCRIPT, STYLE
from ._html_svg import PHASE_COLOURS, STATUS_COLOURS, bar_chart, message, text
from ._html_time import Axis, run_axis
from ._html_timeline import timeline
from ._json_text import safe_json

__all__ = ["FAILURES_SHOWN", "html_report"]

# Failures listed per error kind; the table lists them all (filter: failed).
FAILURES_SHOWN = 100
_SUMMARY = [
    "repositories",
    "ok",
    "failed",
    "timeout",
    "cancelled",
    "duplicates",
    "reused",
    "test_files",
    "tests",
    "unread_files",
    "memory_thrash",  # stretches without progress under memory pressure (issue 46)
]


def html_report(
    found: RunReport,
    inventories: Mapping[int, Inventory],
    histories: Mapping[int, list[HistoryEntry]],
    damaged: Sequence[DamagedRow] = (),
) -> str:
    """The page for ``found``; ``inventories`` and ``histories`` by report index;
    ``damaged``: rows of the store left out, said at the top of the page."""
    run, reports = found.run, found.repositories
    finished = None if run.finished_at is None else _instant(run.finished_at)
    axis = run_axis(_instant(run.started_at), finished, reports)
    data = table_data(axis, reports, inventories, histories)
    sections = [
        f"<h1>clonegate run {run.id}</h1>",
        _damage(damaged),
        _summary(found, axis),
        "<h2>Clone timeline</h2>",
        _legend(),
        timeline(axis, reports, found.events),
        "<h2>Tests</h2>",
        _test_charts(found),
        "<h2>Failures by kind</h2>",
        _failures(reports),
        "<h2>Repositories</h2>",
        _table(),
    ]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>clonegate run {run.id}</title><style>{STYLE}</style></head><body>"
        + "\n".join(sections)
        + f'\n<script type="application/json" id="run-data">{safe_json(data).strip()}</script>'
        + f"\n<script>{SCRIPT}</script></body></html>\n"
    )


def _instant(value: str) -> datetime:
    """A run's stored instant (ISO 8601, UTC; an older store's may lack the zone)."""
    instant = datetime.fromisoformat(value)
    return instant if instant.tzinfo else instant.replace(tzinfo=UTC)


def _rows(pairs: Sequence[tuple[str, object]]) -> str:
    return "".join(f"<tr><th>{text(k)}</th><td>{text(v)}</td></tr>" for k, v in pairs)


def _summary(found: RunReport, axis: Axis) -> str:
    """Counts as the store summed them when the run ended (counted from the reports
    read if it never did), when, the options given and the limits the run began with."""
    run = found.run
    counts = run.summary
    said = "as stored when the run ended"
    if counts is None:
        said = "the run never ended: counted from its reports"
        thrash = sum(e.kind == "memory_thrash" for e in found.events)
        counts = _counted(found.repositories) | {"memory_thrash": thrash}
    timing = [
        ("started", run.started_at),
        ("finished", run.finished_at or "never (the process died, or it still runs)"),
        ("drawn over", f"{axis.span:.1f} s"),
    ]
    limits = [(f"{e.kind} at start", f"{e.value} {e.detail}".strip()) for e in _first(found)]
    options = sorted((str(k), v) for k, v in run.options.items())
    return (
        f'<div class="charts"><table id="summary"><caption>{text(said)}</caption>'
        + "".join(
            f'<tr><th>{text(k)}</th><td class="num" data-count="{text(k)}">'
            f"{text(counts.get(k, 0))}</td></tr>"
            for k in _SUMMARY
        )
        + f"</table><table>{_rows(timing + limits)}</table>"
        + f'<table id="options"><caption>options</caption>{_rows(options)}</table></div>'
    )


def _damage(damaged: Sequence[DamagedRow]) -> str:
    """What the page lacks: each damaged row left out (``clonegate check`` lists all)."""
    if not damaged:
        return ""
    items = "".join(f"<li>{text(row)}</li>" for row in damaged[:FAILURES_SHOWN])
    return (
        f'<div id="damaged" class="status-failed"><p>{len(damaged)} damaged rows of the'
        " store were left out of this page (its counts are the store's; its table and"
        f" charts lack them); <code>clonegate check</code> lists them.</p><ul>{items}</ul></div>"
    )


def _first(found: RunReport) -> list[RunEvent]:
    """The first event of each kind other than a host's and a thrash (the limits the
    run began with)."""
    seen: dict[str, RunEvent] = {}
    for event in found.events:
        if event.kind not in ("host_limit", "memory_thrash"):
            seen.setdefault(event.kind, event)
    return list(seen.values())


def _counted(reports: Sequence[RepositoryReport]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for r in reports:
        counts["repositories"] += 1
        counts[r.status.value] += 1
        counts["duplicates"] += r.duplicate_of is not None
        counts["reused"] += r.reused
        if r.analysis:
            counts["test_files"] += r.analysis.test_files
            counts["tests"] += r.analysis.tests
            counts["unread_files"] += sum(r.analysis.unread.values())
    return counts


def _legend() -> str:
    spans = "".join(
        f'<span><i style="background:{colour}"></i>{name.replace("_", " ")}</span>'
        for name, colour in PHASE_COLOURS.items()
    )
    return (
        f'<p class="legend">{spans}<span><i style="background:#c00"></i>'
        "clone or memory limit (dashed); triangle: a host's limit changed; diamond:"
        " memory thrashed</span></p>"
    )


def _test_charts(found: RunReport) -> str:
    charts = []
    for field in ("framework", "language", "status"):
        sums: dict[str, int] = defaultdict(int)
        for row in found.tests:
            sums[getattr(row, field)] += row.tests
        chart = bar_chart(f"tests by {field}", list(sums.items()), STATUS_COLOURS)
        charts.append(
            f'<figure id="tests-by-{field}"><figcaption>by {field}</figcaption>{chart}</figure>'
        )
    return f'<div class="charts">{"".join(charts)}</div>'


def _failures(reports: Sequence[RepositoryReport]) -> str:
    """Each error kind, its count, and the first ``FAILURES_SHOWN`` repositories with
    their messages."""
    kinds: dict[str, list[RepositoryReport]] = defaultdict(list)
    for r in reports:
        if r.error is not None:
            kinds[r.error.kind].append(r)
    if not kinds:
        return '<p class="none">No repository failed.</p>'
    parts = []
    for kind, failed in sorted(kinds.items(), key=lambda k: (-len(k[1]), k[0])):
        items = "".join(
            f"<li><code>{text(r.url)}</code> ({text(r.error.phase if r.error else '')}):"
            f" {text(message(r.error.message) if r.error else '')}</li>"
            for r in failed[:FAILURES_SHOWN]
        )
        more = len(failed) - FAILURES_SHOWN
        rest = f'<li class="none">and {more} more: the table lists them</li>' if more > 0 else ""
        parts.append(
            f'<details class="failure-kind"{" open" if len(failed) <= 20 else ""}>'
            f"<summary>{text(kind)}: {len(failed)}</summary>"
            f"<ul>{items}{rest}</ul></details>"
        )
    return "".join(parts)


def _table() -> str:
    heads = [
        ("url", "repository"),
        ("status", "status"),
        ("kind", "error"),
        ("tests", "tests"),
        ("files", "test files"),
        ("frameworks", "frameworks"),
        ("wait", "waited s"),
        ("clone", "clone s"),
        ("analysis", "analysis s"),
        ("attempts", "attempts"),
    ]
    statuses = "".join(f"<option>{s}</option>" for s in ("ok", "failed", "timeout", "cancelled"))
    return (
        '<p><input id="filter" type="search" placeholder="filter: URL, error, framework">'
        f' <select id="status"><option value="">any status</option>{statuses}</select>'
        ' <span id="count"></span> <button id="more" hidden>show all</button></p>'
        '<table id="repositories"><thead><tr>'
        + "".join(f'<th data-key="{k}">{label}</th>' for k, label in heads)
        + '</tr></thead><tbody id="rows"></tbody></table><div id="detail"></div>'
    )

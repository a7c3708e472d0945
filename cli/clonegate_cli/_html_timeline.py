"""The clone timeline of the HTML report, as SVG (issue 44, ADR 0022): one row per
clone slot with each attempt's bar, the clone limit over it, host limits and retries
marked; what the repositories were doing over time; the memory budget and its use.

A run too dense for bars (a bar thinner than a pixel, on average) is drawn per pixel
column instead: the mean number of busy slots in each column, as a filled area.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence

from clonegate import RepositoryReport
from clonegate.store import RunEvent

from ._html_svg import PHASE_COLOURS, number, text
from ._html_time import Axis, Held, assign_slots, column_means, held_slots

__all__ = ["LANES_MOST", "WIDTH", "dense", "timeline"]

WIDTH = 1100  # the plot's pixel columns
_LEFT = 64  # room for the rows' labels
_ROW = 14
_AREA = 160  # height of an area chart
_MOST_ROWS = 64  # more slots than this: drawn as an area
LANES_MOST = 200  # repositories drawn one lane each; more: as an area
_LANE = 6


def _top_label(top: float) -> str:
    """The axis's top: whole above 10 (MiB, slots), two digits below (a mean of 1.5)."""
    return f"{top:.0f}" if top >= 10 else f"{top:.2g}"


def timeline(axis: Axis, reports: Sequence[RepositoryReport], events: Sequence[RunEvent]) -> str:
    """The timeline's SVG charts, one after the other; what is not drawn, said."""
    unrecorded = sum(1 for r in reports if not r.phases)
    if unrecorded == len(reports):
        return (
            '<p class="none" id="no-phases">No phases recorded for this run (a run stored'
            " before clonegate kept them, ADR 0020, or one that started nothing):"
            " no timeline to draw.</p>"
        )
    note = ""
    if unrecorded:
        note = (
            f'<p class="none" id="no-phases">{unrecorded} of {len(reports)} repositories'
            " have no phases (a duplicate line, a line that is no URL, or a report stored"
            " before phases were kept): not drawn.</p>"
        )
    return note + _charts(axis, reports, events)


def _charts(axis: Axis, reports: Sequence[RepositoryReport], events: Sequence[RunEvent]) -> str:
    held = held_slots(axis, reports)
    slots = assign_slots(held)
    limits = _steps(events, "clone_limit", axis)
    if dense(axis, held, slots):
        busy = column_means(((h.start, h.end, 1.0) for h in held), axis.span, WIDTH)
        label = "Busy clone slots (mean per pixel column)"
        marks = _host_marks(axis, events, _AREA + 2)
        charts = [_area_chart(label, axis, busy, limits, marks=marks)]
    else:
        charts = [_slot_rows(axis, reports, held, slots, limits, events)]
    charts.append(_activity(axis, reports))
    charts.append(_memory(axis, reports, held, events))
    return "\n".join(c for c in charts if c)


def dense(axis: Axis, held: Sequence[Held], slots: Sequence[int]) -> bool:
    """True when bars would be unreadable: more slots than rows fit, a row holding more
    bars than a quarter of the pixel columns, or the median bar thinner than a pixel."""
    if not held:
        return False
    rows = max(slots) + 1
    per_row = [0] * rows
    for slot in slots:
        per_row[slot] += 1
    median = statistics.median(h.end - h.start for h in held) / axis.span * WIDTH
    return rows > _MOST_ROWS or max(per_row) > WIDTH / 4 or median < 1


def _x(axis: Axis, seconds: float) -> float:
    return _LEFT + max(0.0, min(seconds, axis.span)) / axis.span * WIDTH


def _steps(events: Sequence[RunEvent], kind: str, axis: Axis) -> list[tuple[float, int]]:
    """(second, value) of each event of ``kind``, in order."""
    return [(axis.at(e.at), e.value) for e in events if e.kind == kind]


def _svg(label: str, height: int, body: list[str], axis: Axis) -> str:
    ticks = _ticks(axis, height - 14)
    return (
        f"<figure><figcaption>{text(label)}</figcaption>"
        f'<svg class="timeline" role="img" width="{_LEFT + WIDTH + 10}" height="{height}"'
        f' aria-label="{text(label)}"><title>{text(label)}</title>{"".join(body)}{ticks}</svg>'
        "</figure>"
    )


def _ticks(axis: Axis, y: int) -> str:
    """A time axis at ``y``: ten ticks at most, a round number of seconds apart."""
    step = _tick_step(axis.span)
    parts = [f'<line class="axis" x1="{_LEFT}" x2="{_LEFT + WIDTH}" y1="{y}" y2="{y}"/>']
    for n in range(int(axis.span // step) + 1):
        x = number(_x(axis, n * step))
        parts.append(f'<text class="tick" x="{x}" y="{y + 12}">{_seconds(n * step)}</text>')
    return "".join(parts)


def _tick_step(span: float) -> float:
    """The least round step (1, 2 or 5 times a power of ten under a minute; whole
    minutes, hours or days above) that cuts ``span`` in ten parts or fewer."""
    magnitude = 10 ** math.floor(math.log10(span / 10))
    steps = [m * magnitude for m in (1, 2, 5) if m * magnitude < 60]
    steps += [60 * m for m in (1, 2, 5, 10, 15, 30, 60, 120, 240, 360, 720, 1440)]
    return next((s for s in steps if span / s <= 10), 86400 * math.ceil(span / 864000))


def _seconds(value: float) -> str:
    if value >= 7200:
        return f"{value / 3600:g} h"
    return f"{value / 60:g} min" if value >= 120 else f"{value:.4g} s"


def _slot_rows(
    axis: Axis,
    reports: Sequence[RepositoryReport],
    held: Sequence[Held],
    slots: Sequence[int],
    limits: list[tuple[float, int]],
    events: Sequence[RunEvent],
) -> str:
    """One row per slot used, each attempt a bar: setup then clone, a retry darker;
    the clone limit as a line under the row it admits last (at the bottom when it
    admitted more than were used: the caption says how many)."""
    rows = max([*slots, 0]) + 1  # a run that cloned nothing: one empty row
    body = [
        f'<text class="row" x="{_LEFT - 4}" y="{n * _ROW + 11}">slot {n + 1}</text>'
        for n in range(rows)
    ]
    for attempt, slot in zip(held, slots, strict=True):
        body.append(_bar(axis, reports[attempt.row], attempt, slot * _ROW))
    body.append(_limit_line(axis, limits, lambda v: min(v, rows) * _ROW, "clone limit"))
    body.append(_host_marks(axis, events, rows * _ROW + 2))
    said = ", ".join(str(v) for _, v in limits) or "not recorded"
    label = f"Clone slots: {len(set(slots))} used, clone limit {said}"
    return _svg(label, rows * _ROW + 40, body, axis)


def _bar(axis: Axis, report: RepositoryReport, attempt: Held, y: int) -> str:
    x0, x1, x2 = (_x(axis, s) for s in (attempt.start, attempt.setup_end, attempt.end))
    clone = PHASE_COLOURS["clone" if attempt.attempt == 1 else "retry_clone"]
    took = attempt.end - attempt.start
    return (
        f'<g class="slot-bar"><title>{text(report.url)}: attempt {attempt.attempt},'
        f" {took:.2f} s</title>"
        f'<rect x="{number(x0)}" y="{y + 1}" width="{number(max(x1 - x0, 0))}"'
        f' height="{_ROW - 2}" fill="{PHASE_COLOURS["setup"]}"/>'
        f'<rect x="{number(x1)}" y="{y + 1}" width="{number(max(x2 - x1, 1))}"'
        f' height="{_ROW - 2}" fill="{clone}"/></g>'
    )


def _limit_line(
    axis: Axis, limits: list[tuple[float, int]], y_of: Callable[[int], float], label: str
) -> str:
    """A step line: each value from its instant to the next one's (or the end)."""
    if not limits:
        return ""
    points = []
    for n, (at, value) in enumerate(limits):
        until = limits[n + 1][0] if n + 1 < len(limits) else axis.span
        y = number(y_of(value))
        points.append(f"{number(_x(axis, at))},{y} {number(_x(axis, until))},{y}")
    values = ", ".join(str(v) for _, v in limits)
    return (
        f'<polyline class="limit" points="{" ".join(points)}">'
        f"<title>{text(label)}: {values}</title></polyline>"
    )


def _host_marks(axis: Axis, events: Sequence[RunEvent], y: int) -> str:
    """A triangle where a host's limit changed (throttling), the host in its title; a
    diamond where memory thrashed (issue 46), its figures in its title."""
    marks = []
    for event in events:
        x = number(_x(axis, axis.at(event.at)))
        if event.kind == "host_limit":
            marks.append(
                f'<path class="host-limit" d="M{x},{y} l-4,7 h8 z">'
                f"<title>{text(event.detail)}: host limit {event.value}</title></path>"
            )
        elif event.kind == "memory_thrash":
            marks.append(
                f'<path class="memory-thrash" d="M{x},{y} l4,4 l-4,4 l-4,-4 z">'
                f"<title>memory thrashed: {text(event.detail)}</title></path>"
            )
    return "".join(marks)


def _area_chart(
    label: str,
    axis: Axis,
    means: list[float],
    limits: list[tuple[float, int]],
    line: str = "clone limit",
    marks: str = "",
) -> str:
    top = max([*means, *(v for _, v in limits), 1.0])
    scale = _AREA / top
    points = " ".join(
        f"{number(_LEFT + c + 0.5)},{number(_AREA - m * scale)}" for c, m in enumerate(means)
    )
    body = [
        f'<text class="row" x="{_LEFT - 4}" y="10">{_top_label(top)}</text>',
        f'<polygon class="busy" fill="{PHASE_COLOURS["clone"]}"'
        f' points="{_LEFT},{_AREA} {points} {_LEFT + WIDTH},{_AREA}"/>',
        _limit_line(axis, limits, lambda v: _AREA - v * scale, line),
        marks,
    ]
    return _svg(label, _AREA + 30, body, axis)


def _activity(axis: Axis, reports: Sequence[RepositoryReport]) -> str:
    """Each repository's phases: a lane each for a small run, else the mean number of
    repositories in each phase per pixel column, stacked."""
    if len(reports) <= LANES_MOST:
        return _lanes(axis, reports)
    layers = {name: _in_phase(axis, reports, name) for name in _STACKED}
    totals = [sum(layer[c] for layer in layers.values()) for c in range(WIDTH)]
    top = max([*totals, 1.0])
    body = [f'<text class="row" x="{_LEFT - 4}" y="10">{top:.0f}</text>']
    below = [0.0] * WIDTH
    for name, layer in layers.items():
        above = [b + m for b, m in zip(below, layer, strict=True)]
        outline = " ".join(_outline(above, _AREA / top) + _outline(below, _AREA / top)[::-1])
        body.append(
            f'<polygon class="phase-area" fill="{PHASE_COLOURS[name]}" points="{outline}">'
            f"<title>{name}</title></polygon>"
        )
        below = above
    return _svg("Repositories in each phase (mean per pixel column)", _AREA + 30, body, axis)


_STACKED = ("waiting", "setup", "clone", "retry_wait", "analysis")


def _in_phase(axis: Axis, reports: Sequence[RepositoryReport], name: str) -> list[float]:
    """The mean number of repositories in phase ``name``, per pixel column."""
    spans = (
        (axis.at(p.started), axis.at(p.ended), 1.0)
        for r in reports
        for p in r.phases
        if p.name == name
    )
    return column_means(spans, axis.span, WIDTH)


def _outline(heights: list[float], scale: float) -> list[str]:
    """A point per pixel column, at ``heights`` scaled, left to right."""
    return [f"{number(_LEFT + c + 0.5)},{number(_AREA - h * scale)}" for c, h in enumerate(heights)]


def _lanes(axis: Axis, reports: Sequence[RepositoryReport]) -> str:
    body = []
    for n, report in enumerate(reports):
        y = n * _LANE
        rects = []
        for phase in report.phases:
            name = (
                "retry_clone" if phase.name == "clone" and (phase.attempt or 1) > 1 else phase.name
            )
            x0, x1 = _x(axis, axis.at(phase.started)), _x(axis, axis.at(phase.ended))
            rects.append(
                f'<rect x="{number(x0)}" y="{y}" width="{number(max(x1 - x0, 0.5))}"'
                f' height="{_LANE - 1}" fill="{PHASE_COLOURS.get(name, "#000")}"/>'
            )
        body.append(f'<g class="lane"><title>{text(report.url)}</title>{"".join(rects)}</g>')
    return _svg("Each repository's phases", len(reports) * _LANE + 30, body, axis)


def _memory(
    axis: Axis,
    reports: Sequence[RepositoryReport],
    held: Sequence[Held],
    events: Sequence[RunEvent],
) -> str:
    """The memory budget (MiB) over time, and what the clones at work were measured to
    use (each clone's ``clone_memory`` while it held its slot)."""
    budget = _steps(events, "memory_budget", axis)
    used = column_means(
        ((h.start, h.end, (reports[h.row].clone_memory or 0) / 2**20) for h in held),
        axis.span,
        WIDTH,
    )
    if not budget and not any(used):
        return '<p class="none">No memory budget in this run, and no clone\'s memory measured.</p>'
    return _area_chart(
        "Memory budget and clones' use (MiB)", axis, used, budget, "memory budget (MiB)"
    )

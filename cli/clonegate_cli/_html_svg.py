"""SVG drawn on the server for the HTML report (issue 44, ADR 0022): text from servers
escaped as data, numbers rounded, simple bar charts.

Every string that reaches the page passes through :func:`text`: control characters
shown as escapes (``clonegate.visible``), then ``& < > " '`` as entities, so that it
is the same in element text and in a quoted attribute, and nothing in it can close an
element or start one.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from clonegate import visible

__all__ = ["PHASE_COLOURS", "bar_chart", "message", "number", "shown", "text"]

# One colour per phase, in the page's legend and every chart; a retried clone darker.
PHASE_COLOURS = {
    "listing": "#b0b0b0",
    "waiting": "#d9d9d9",
    "setup": "#9ecae1",
    "clone": "#3182bd",
    "retry_clone": "#08306b",
    "retry_wait": "#fdae6b",
    "analysis": "#74c476",
}
STATUS_COLOURS = {
    "active": "#74c476",
    "ok": "#74c476",
    "skipped": "#fdae6b",
    "xfail": "#9e9ac8",
    "todo": "#bdbdbd",
    "failed": "#de2d26",
    "timeout": "#e6550d",
    "cancelled": "#969696",
}
_BAR_COLOUR = "#6baed6"
_ROW = 18
_LABEL = 180
_BARS = 360


def shown(value: str) -> str:
    """``value`` with its control characters shown (``clonegate.visible``); text that is
    all printable as it is, without looking at each character again (5,000 URLs and
    100,000 test names are mostly printable)."""
    return value if value.isprintable() else visible(value)


def text(value: object) -> str:
    """``value`` as text safe in HTML element content and in quoted attributes."""
    return html.escape(shown(str(value)), quote=True)


def message(value: str, most: int = 1000) -> str:
    """A server's message, shown (``visible``) and cut to ``most`` characters, saying
    how many more there were: a page lists thousands, each within bounds."""
    shown = visible(value)
    if len(shown) <= most:
        return shown
    return f"{shown[:most]}… ({len(shown) - most} more characters)"


def number(value: float) -> str:
    """A coordinate: one decimal at most, no exponent."""
    return f"{value:.1f}".removesuffix(".0")


def bar_chart(title: str, rows: Sequence[tuple[str, int]], colours: dict[str, str]) -> str:
    """Horizontal bars, one per (label, value), longest first, each labelled."""
    rows = sorted(rows, key=lambda r: (-r[1], r[0]))
    if not rows:
        return f'<p class="none">{text(title)}: none</p>'
    top = max(value for _, value in rows) or 1
    height = _ROW * len(rows) + 4
    parts = [
        f'<svg class="bars" role="img" width="{_LABEL + _BARS + 80}" height="{height}"'
        f' aria-label="{text(title)}"><title>{text(title)}</title>'
    ]
    for n, (label, value) in enumerate(rows):
        y = n * _ROW + 2
        width = max(value / top * _BARS, 1.0)
        colour = colours.get(label, _BAR_COLOUR)
        parts.append(
            f'<g class="bar"><title>{text(label)}: {value}</title>'
            f'<text x="{_LABEL - 6}" y="{y + 13}" text-anchor="end">{text(_clip(label))}</text>'
            f'<rect x="{_LABEL}" y="{y}" width="{number(width)}" height="{_ROW - 4}"'
            f' fill="{colour}"/>'
            f'<text x="{number(_LABEL + width + 4)}" y="{y + 13}">{value}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _clip(label: str, most: int = 28) -> str:
    return label if len(label) <= most else label[: most - 1] + "\u2026"

"""One frame of the live display: what a person sees while a run goes (ADR 0021).

A progress bar with finished/total, failures, rate and time left; every repository's
state, adding up to the total; the clone slots in use and the memory budget; then one
row per clone slot, with the repository it clones (escaped: a URL is the user's or a
server's text), its phase, how long it has run and the memory it reserved. Rich is
imported here only when a frame is drawn (issue 14).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clonegate import CloneGateStatistics, visible

from ._tally import State

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult

__all__ = ["Figures", "SlotRows", "duration", "frame"]

_HEAD_LINES = 3  # the bar, the states, the slots and memory


@dataclass(frozen=True)
class Figures:
    """What a frame shows besides the gate's statistics."""

    total: int | None  # None: the input is still being read
    counts: dict[State, int]
    elapsed: float  # seconds since the run began
    final: bool = False  # the run has ended: no slot rows, the time taken in place of ETA

    @property
    def finished(self) -> int:
        return self.counts[State.DONE] + self.counts[State.FAILED]


@dataclass
class SlotRows:
    """Which row each running clone is drawn on: a clone keeps its row from its first
    frame to its last, and a new one takes the first row free, so that a person reads
    each row as one slot at work."""

    _rows: list[int | None] = field(default_factory=list)  # repository index per row

    def assign(self, size: int, active: list[int]) -> list[int | None]:
        """Rows (at least ``size``: one per slot) with the index each one draws."""
        running = set(active)
        rows = [index if index in running else None for index in self._rows]
        placed = {index for index in rows if index is not None}
        for index in active:
            if index in placed:
                continue
            if None in rows:
                rows[rows.index(None)] = index
            else:
                rows.append(index)
        while len(rows) < size:
            rows.append(None)
        while len(rows) > size and rows[-1] is None:  # the limit shrank
            rows.pop()
        self._rows = rows
        return list(rows)


def frame(
    figures: Figures, stats: CloneGateStatistics, rows: list[int | None], height: int
) -> Group:
    """The frame, at most ``height`` lines (the terminal's: Rich cannot redraw what
    scrolled off)."""
    from rich.console import Group

    lines: list[RenderableType] = [_bar(figures), _states(figures), _gate(stats)]
    if not figures.final:
        lines.extend(_slots(stats, rows, max(height - _HEAD_LINES - 1, 1)))
    return Group(*lines)


def _bar(figures: Figures) -> RenderableType:
    from rich.table import Table
    from rich.text import Text

    finished, failed = figures.finished, figures.counts[State.FAILED]
    total = "?" if figures.total is None else str(figures.total)
    rate = finished / figures.elapsed if figures.elapsed > 0 else 0.0
    text = Text(f" {finished}/{total} · ")
    text.append(f"{failed} failed", style="red" if failed else "")
    text.append(f" · {_rate(rate) if rate > 0 else 'rate ?'}")
    if figures.final:
        text.append(f" · {duration(figures.elapsed)}")
    elif figures.total is not None and rate > 0:
        text.append(f" · ETA {duration((figures.total - finished) / rate)}")
    else:
        text.append(" · ETA ?")
    grid = Table.grid(expand=True)
    grid.add_column(ratio=1)
    grid.add_column(no_wrap=True)
    grid.add_row(_Bar(finished, figures.total), text)
    return grid


@dataclass(frozen=True)
class _Bar:
    """A bar as wide as it is given: heavy for what finished, light for the rest, so
    that it reads without colour too (``NO_COLOR``; Rich's own bar then draws nothing
    for the rest). Without a total it is all light: nothing is claimed."""

    finished: int
    total: int | None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.text import Text

        width = options.max_width
        filled = 0 if not self.total else min(width * self.finished // self.total, width)
        done, rest = ("#", "-") if options.ascii_only else ("━", "─")
        yield Text.assemble((done * filled, "green"), (rest * (width - filled), "dim"))


def _states(figures: Figures) -> RenderableType:
    from rich.text import Text

    text = Text()
    for n, state in enumerate(State):
        count = figures.counts[state]
        if n:
            text.append(" · ")
        text.append(f"{state} ")
        text.append(str(count), style="red" if state is State.FAILED and count else "bold")
    return text


def _gate(stats: CloneGateStatistics) -> RenderableType:
    from rich.text import Text

    text = Text.assemble(("clone slots ", ""), (f"{stats.held}/{stats.size}", "bold"), " held")
    if stats.memory_size is not None:
        text.append(" · memory ")
        text.append(f"{stats.memory_held}/{stats.memory_size} MiB", style="bold")
        text.append(f" held (budget {stats.memory_budget} MiB)")
        text.append(f" · a new host's clone reserves {stats.memory_estimate} MiB")
    return text


def _slots(stats: CloneGateStatistics, rows: list[int | None], room: int) -> list[RenderableType]:
    """A row per slot, ``room`` lines at most: past that, the last says how many more."""
    from rich.table import Table
    from rich.text import Text

    entries = {entry.index: entry for entry in stats.active}
    shown = rows if len(rows) <= room else rows[: room - 1]
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)  # slot
    grid.add_column(no_wrap=True)  # phase
    grid.add_column(ratio=1, no_wrap=True, overflow="ellipsis")  # repository
    grid.add_column(no_wrap=True, justify="right")  # elapsed
    budget = stats.memory_size is not None
    if budget:
        grid.add_column(no_wrap=True, justify="right")  # MiB reserved
    for n, index in enumerate(shown, 1):
        entry = entries.get(index) if index is not None else None
        if entry is None:
            cells = [Text(f"slot {n}", style="dim"), Text("idle", style="dim"), Text(""), Text("")]
            grid.add_row(*cells, *([Text("")] if budget else []))
            continue
        cells = [
            Text(f"slot {n}"),
            Text("cloning", style="cyan"),
            Text(visible(entry.url)),
            Text(duration(entry.seconds)),
        ]
        grid.add_row(*cells, *([Text(f"{entry.memory} MiB")] if budget else []))
    lines: list[RenderableType] = [grid]
    if len(shown) < len(rows):
        more = rows[len(shown) :]
        busy = sum(index is not None for index in more)
        lines.append(Text(f"… {len(more)} more slots, {busy} cloning", style="dim"))
    return lines


def _rate(per_second: float) -> str:
    if per_second >= 1:
        return f"{per_second:.1f}/s"
    return f"{per_second * 60:.1f}/min"


def duration(seconds: float) -> str:
    """``4.2 s``, ``3:05``, ``1:02:03``: short, and never claiming more precision."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"

"""One frame of the live display: what a person sees while a run goes (ADR 0021).

A progress bar with finished/total, failures, rate and time left; every repository's
state, adding up to the total; the clone slots in use and the memory budget; then one
row per clone slot, with the repository it clones (escaped: a URL is the user's or a
server's text), its phase, how long it has run, the bytes it received (when its VCS
said) and the memory it reserved. Rich is
imported here only when a frame is drawn (issue 14).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from clonegate import CloneGateStatistics, visible

from ._tally import State

if TYPE_CHECKING:
    from rich.console import Group
    from rich.text import Text

__all__ = ["Figures", "SlotRows", "duration", "frame", "size"]


@dataclass(frozen=True)
class Figures:
    """What a frame shows besides the gate's statistics."""

    total: int | None  # None: the input is still being read
    counts: dict[State, int]
    elapsed: float  # seconds since the run began
    final: bool = False  # the run has ended: no slot rows, the time taken in place of ETA
    # Bytes each running clone received so far, by repository index (none: not said yet).
    received: Mapping[int, int] = field(default_factory=dict)

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
    figures: Figures,
    stats: CloneGateStatistics,
    rows: list[int | None],
    size: tuple[int, int],
    *,
    ascii_only: bool = False,
) -> Group:
    """The frame for a terminal of ``size`` (columns, lines): at most that high, since
    Rich cannot redraw what scrolled off. Lines of text laid out here, not tables: a
    frame with 64 slots takes a fraction of a millisecond, not several, every 0.1 s."""
    from rich.console import Group

    width, height = size
    lines = [_bar(figures, width, ascii_only), _states(figures), *_gate(stats)]
    if not figures.final:
        # The line under the frame is the cursor's: Rich needs it.
        room = max(height - len(lines) - 1, 1)
        lines.extend(_slots(stats, rows, width, room, figures.received))
    return Group(*lines)


def _bar(figures: Figures, width: int, ascii_only: bool) -> Text:
    """A bar as wide as the text beside it leaves: heavy for what finished, light for
    the rest, so that it reads without colour too (``NO_COLOR``: Rich's own bar then
    draws nothing for the rest). Without a total it is all light: nothing is claimed."""
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
    room = max(width - text.cell_len, 0)
    filled = 0 if not figures.total else min(room * finished // figures.total, room)
    done, rest = ("#", "-") if ascii_only else ("━", "─")
    bar = Text.assemble((done * filled, "green"), (rest * (room - filled), "dim"))
    return Text.assemble(bar, text, no_wrap=True, overflow="ellipsis")


def _states(figures: Figures) -> Text:
    from rich.text import Text

    text = Text()
    for n, state in enumerate(State):
        count = figures.counts[state]
        if n:
            text.append(" · ")
        text.append(f"{state} ")
        text.append(str(count), style="red" if state is State.FAILED and count else "bold")
    return text


def _gate(stats: CloneGateStatistics) -> list[Text]:
    """The clone slots held; with a memory budget, a line of its own (ADR 0014)."""
    from rich.text import Text

    lines = [Text.assemble("clone slots ", (f"{stats.held}/{stats.size}", "bold"), " held")]
    if stats.memory_size is not None:
        memory = Text.assemble("memory ", (f"{stats.memory_held}/{stats.memory_size} MiB", "bold"))
        memory.append(f" held (budget {stats.memory_budget} MiB)")
        memory.append(f" · estimate {stats.memory_estimate} MiB per clone")
        lines.append(memory)
    return lines


def _slots(
    stats: CloneGateStatistics,
    rows: list[int | None],
    width: int,
    room: int,
    received: Mapping[int, int],
) -> list[Text]:
    """A row per slot, ``room`` lines at most: past that, the last says how many more.
    Columns: slot, phase, repository (cut with an ellipsis to fit), elapsed, bytes
    received (blank until the clone says), MiB reserved."""
    from rich.cells import cell_len
    from rich.text import Text

    entries = {entry.index: entry for entry in stats.active}
    shown = rows if len(rows) <= room else rows[: room - 1]
    budget = stats.memory_size is not None
    # Each row's slot, repository (None: idle), elapsed time, bytes received, MiB reserved.
    cells: list[tuple[str, str | None, str, str, str]] = []
    for n, index in enumerate(shown, 1):
        entry = entries.get(index) if index is not None else None
        if entry is None:
            cells.append((f"slot {n}", None, "", "", ""))
        else:
            got = received.get(entry.index)
            got_text = f"{size(got)} received" if got is not None else ""
            mib = f"{entry.memory} MiB" if budget else ""
            shown_url = visible(entry.url)
            cells.append((f"slot {n}", shown_url, duration(entry.seconds), got_text, mib))
    slot_w = max((len(c[0]) for c in cells), default=0)
    time_w = max((len(c[2]) for c in cells), default=0)
    got_w = max((len(c[3]) for c in cells), default=0)
    mib_w = max((len(c[4]) for c in cells), default=0)
    fixed = slot_w + 2 + len("cloning") + 2 + 2 + time_w + (2 + mib_w if budget else 0)
    fixed += 2 + got_w if got_w else 0
    url_w = min(max((cell_len(c[1] or "") for c in cells), default=0), max(width - fixed, 8))
    lines = []
    for slot, url, elapsed, got_text, mib in cells:
        line = Text(slot.ljust(slot_w) + "  ", no_wrap=True, overflow="ellipsis")
        if url is None:
            line.append("idle", style="dim")
            line.stylize("dim")
        else:
            line.append("cloning", style="cyan")
            cell = Text(url)
            cell.truncate(url_w, overflow="ellipsis", pad=True)  # in cells: wide ones count 2
            line.append("  ")
            line.append_text(cell)
            line.append(f"  {elapsed.rjust(time_w)}")
            if got_w:
                line.append(f"  {got_text.rjust(got_w)}")
            if budget:
                line.append(f"  {mib.rjust(mib_w)}")
        lines.append(line)
    if len(shown) < len(rows):
        more = rows[len(shown) :]
        busy = sum(index is not None for index in more)
        lines.append(Text(f"… {len(more)} more slots, {busy} cloning", style="dim"))
    return lines


def _rate(per_second: float) -> str:
    if per_second >= 1:
        return f"{per_second:.1f}/s"
    return f"{per_second * 60:.1f}/min"


def size(nbytes: int) -> str:
    """``980 bytes``, ``512.0 KiB``, ``12.3 MiB``, ``1.2 GiB``: one decimal, binary units."""
    if nbytes < 1024:
        return f"{nbytes} bytes"
    value, unit = nbytes / 1024, "KiB"
    for bigger in ("MiB", "GiB"):
        if value < 1024:
            break
        value, unit = value / 1024, bigger
    return f"{value:.1f} {unit}"


def duration(seconds: float) -> str:
    """``4.2 s``, ``3:05``, ``1:02:03``: short, and never claiming more precision."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"

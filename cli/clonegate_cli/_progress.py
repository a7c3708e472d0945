"""Live progress on a terminal (a frame: ``_frame.py``, ADR 0021), or a line per event.

Rich is imported only when something is drawn or printed on stderr: a run whose
stderr is no terminal and that has nothing to say there (``--format json``) never
loads it (30 ms of a first result, issue 14).
"""

from __future__ import annotations

import os
import stat
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

import trio

from clonegate import AnalyzeUseCase, Event, EventKind, visible

from ._frame import Figures, SlotRows, frame
from ._tally import Tally

if TYPE_CHECKING:
    from rich.console import Console, Group

    from ._stderr import Diagnostics

REFRESH = 0.1  # seconds between frames


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True)


def stderr_is_terminal() -> bool:
    """What ``Console(stderr=True).is_terminal`` says, without importing rich when the
    answer is plainly no: stderr is no TTY and neither ``TTY_COMPATIBLE`` nor
    ``FORCE_COLOR`` (which rich obeys) is set."""
    try:
        tty = sys.stderr.isatty()
    except ValueError:  # closed
        tty = False
    if not tty and not {"TTY_COMPATIBLE", "FORCE_COLOR"} & os.environ.keys():
        return False
    return stderr_console().is_terminal


@dataclass
class Progress:
    """Counts kept from the use case's events; drawn on a terminal, or logged as lines."""

    terminal: bool  # stderr is a terminal (as rich sees it)
    live: bool  # redraw in place (a terminal) or print one line per event
    verbose: bool = False
    stderr: Diagnostics | None = None  # stderr as a run writes it (None: sys.stderr)
    stderr_gone: bool = False  # a write to stderr failed: nothing more is written there
    total: int | None = None  # repositories in the run; None: not known yet
    tally: Tally = field(init=False)
    _rows: SlotRows = field(default_factory=SlotRows, init=False, repr=False)
    _stop: trio.Event = field(default_factory=trio.Event, init=False, repr=False)
    _stopped: trio.Event = field(default_factory=trio.Event, init=False, repr=False)
    _elapsed: float | None = field(default=None, init=False, repr=False)  # the summary's
    _console: Console | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.tally = Tally(self.total)

    @property
    def console(self) -> Console:
        """Rich's console on stderr, made when first used."""
        if self._console is None:
            self._console = stderr_console()
        return self._console

    def shares_terminal(self, stream: TextIO) -> bool:
        """Whether ``stream`` (stdout) goes to the terminal the live display is drawn on:
        then what is written there must go above the display, or its next frame would
        be drawn over it. Asked before the display starts."""
        if not self.live:
            return False
        try:
            out, err = os.fstat(stream.fileno()), os.fstat(sys.stderr.fileno())
        except (OSError, ValueError):  # closed, or no file (a test's)
            return False
        return stream.isatty() and stat.S_ISCHR(out.st_mode) and out.st_rdev == err.st_rdev

    def above(self, text: str) -> None:
        """``text`` (results: JSON lines) printed above the live display, as it is: not
        wrapped, not read as markup. Like the display's frames, written at once."""
        if self.stderr_gone:
            return
        from rich.text import Text

        try:
            self.console.print(Text(text.removesuffix("\n")), soft_wrap=True, highlight=False)
        except OSError:
            self.stderr_gone = True

    def say(self, line: str, *, warning: bool = False) -> None:
        """One line on stderr (after ``warning:``, yellow on a terminal, if a warning),
        above the live display on a terminal; elsewhere as it is (rich would wrap it at
        80 columns). Callers escape what a server sent (:func:`clonegate.visible`); the
        line is never read as markup or emoji codes."""
        if self.stderr_gone:
            return
        try:
            if not self.terminal:
                stderr = self.stderr or sys.stderr
                stderr.write(("warning: " if warning else "") + line + "\n")
                stderr.flush()
                return
            from rich.text import Text

            text = Text.assemble(("warning:", "yellow"), " ", line) if warning else Text(line)
            self.console.print(text, highlight=False)
        except OSError:
            # The terminal is gone (hung up: EIO) or its reader is: nothing more can be
            # said there, and saying it must not end the run.
            self.stderr_gone = True

    def on_event(self, event: Event) -> None:
        self.tally.on_event(event)
        if event.kind is EventKind.STUCK:
            self.say(
                f"clone of {visible(event.url)} running for {event.elapsed:.0f} s", warning=True
            )
        elif event.kind is EventKind.RECEIVED:
            pass  # the display's figure: a line for each would flood -v
        elif event.kind is EventKind.BUDGET:
            if self.verbose:
                when = time.strftime("%H:%M:%S")
                self.say(f"{when} memory budget {event.status}: {event.detail}")
        elif self.verbose:
            status = f" {event.status}" if event.status else ""
            # clonegate's own words, but a RETRY's quote a clone error: escaped too.
            detail = f": {visible(event.detail)}" if event.detail else ""
            when = time.strftime("%H:%M:%S")
            self.say(f"{when} {event.kind}{status} {visible(event.url)}{detail}")

    def render(self, uc: AnalyzeUseCase, started: float, *, final: bool = False) -> Group:
        """The frame for now; ``final``: the last one, which stays on the terminal."""
        stats = uc.clone_gate_statistics()
        elapsed = trio.current_time() - started
        if final and self._elapsed is not None:
            elapsed = self._elapsed  # the last frame's time is the summary's
        figures = Figures(
            self.tally.total, self.tally.counts(), elapsed, final, self.tally.received
        )
        rows = self._rows.assign(stats.size, [entry.index for entry in stats.active])
        size = (self.console.size.width, self.console.size.height)
        return frame(figures, stats, rows, size, ascii_only=self.console.options.ascii_only)

    async def run(self, uc: AnalyzeUseCase) -> None:
        """Redraw until :meth:`finish` or cancelled (a terminal only); the last frame
        stays, above what the run writes next (the table)."""
        from rich.live import Live

        started = trio.current_time()
        try:
            with Live(self.render(uc, started), console=self.console, auto_refresh=False) as live:
                try:
                    while True:
                        with trio.move_on_after(REFRESH):
                            await self._stop.wait()
                        if self._stop.is_set():
                            break
                        live.update(self.render(uc, started), refresh=True)
                finally:
                    # Drawn as the display stops, after a signal too: no clone is left.
                    live.update(self.render(uc, started, final=True))
        except OSError:  # the terminal is gone (SIGHUP follows): the drawing stops
            self.stderr_gone = True
        finally:
            self._stopped.set()

    async def finish(self, elapsed: float | None = None) -> None:
        """Stop the live display with its last frame, which gives ``elapsed`` (the
        summary's) as the time taken, and return once it is drawn: the run writes its
        table on the same terminal next, and a frame redrawn after it would overwrite
        its last lines (issue 44)."""
        self._elapsed = elapsed
        self._stop.set()
        if self.live:
            await self._stopped.wait()
        else:
            await trio.lowlevel.checkpoint()

"""Live progress: clone slots in use, queued, cloning, analyzing, done, failed.

Rich is imported only when something is drawn or printed on stderr: a run whose
stderr is no terminal and that has nothing to say there (``--format json``) never
loads it (30 ms of a first result, issue 14).
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import trio

from clonegate import AnalyzeUseCase, Event, EventKind, visible

if TYPE_CHECKING:
    from rich.console import Console, Group

    from ._stderr import Diagnostics


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
    analyzing: set[int] = field(default_factory=set)
    done: int = 0
    failed: int = 0
    stderr: Diagnostics | None = None  # stderr as a run writes it (None: sys.stderr)
    stderr_gone: bool = False  # a write to stderr failed: nothing more is written there
    _console: Console | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def console(self) -> Console:
        """Rich's console on stderr, made when first used."""
        if self._console is None:
            self._console = stderr_console()
        return self._console

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
        if event.kind is EventKind.ANALYZING:
            self.analyzing.add(event.index)
        elif event.kind is EventKind.DONE:
            self.analyzing.discard(event.index)
            self.done += 1
            if event.status != "ok":
                self.failed += 1
        if event.kind is EventKind.STUCK:
            self.say(
                f"clone of {visible(event.url)} running for {event.elapsed:.0f} s", warning=True
            )
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

    def render(self, uc: AnalyzeUseCase) -> Group:
        from rich.console import Group
        from rich.text import Text

        stats = uc.clone_gate_statistics()
        head = Text.assemble(
            ("clone slots ", "bold"),
            f"{stats.held}/{stats.size}",
            f"  queued {len(stats.queued)}  cloning {len(stats.active)}",
            f"  analyzing {len(self.analyzing)}  done {self.done}",
            ("  failed ", ""),
            (str(self.failed), "red" if self.failed else ""),
        )
        lines = [head]
        if stats.memory_size is not None:
            lines.append(
                Text.assemble(
                    ("memory budget ", "bold"),
                    f"{stats.memory_held}/{stats.memory_size} MiB",
                    f" (of {stats.memory_budget} MiB)  estimate {stats.memory_estimate} MiB",
                )
            )
        for entry in sorted(stats.active, key=lambda e: -e.seconds)[:8]:
            lines.append(
                Text(f"  cloning {visible(entry.url)}  {entry.seconds:.1f} s", style="cyan")
            )
        return Group(*lines)

    async def run(self, uc: AnalyzeUseCase) -> None:
        """Redraw until cancelled (a terminal only)."""
        from rich.live import Live

        try:
            with Live(
                self.render(uc), console=self.console, transient=True, auto_refresh=False
            ) as live:
                while True:
                    await trio.sleep(0.1)
                    live.update(self.render(uc), refresh=True)
        except OSError:  # the terminal is gone (SIGHUP follows): the drawing stops
            self.stderr_gone = True

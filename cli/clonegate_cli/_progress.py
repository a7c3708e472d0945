"""Live progress: clone slots in use, queued, cloning, analyzing, done, failed."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import trio
from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from clonegate import AnalyzeUseCase, Event, EventKind, visible


@dataclass
class Progress:
    """Counts kept from the use case's events; drawn on a terminal, or logged as lines."""

    console: Console
    live: bool  # redraw in place (a terminal) or print one line per event
    verbose: bool = False
    analyzing: set[int] = field(default_factory=set)
    done: int = 0
    failed: int = 0

    def on_event(self, event: Event) -> None:
        if event.kind is EventKind.ANALYZING:
            self.analyzing.add(event.index)
        elif event.kind is EventKind.DONE:
            self.analyzing.discard(event.index)
            self.done += 1
            if event.status != "ok":
                self.failed += 1
        if event.kind is EventKind.STUCK:
            self.console.print(
                Text.assemble(
                    ("warning:", "yellow"),
                    f" clone of {visible(event.url)} running for {event.elapsed:.0f} s",
                )
            )
        elif event.kind is EventKind.BUDGET:
            if self.verbose:
                line = f"{time.strftime('%H:%M:%S')} memory budget {event.status}: {event.detail}"
                self.console.print(Text(line), highlight=False)
        elif self.verbose:
            # On a terminal, rich prints the line above the live display.
            status = f" {event.status}" if event.status else ""
            line = f"{time.strftime('%H:%M:%S')} {event.kind}{status} {visible(event.url)}"
            self.console.print(Text(line), highlight=False)

    def render(self, uc: AnalyzeUseCase) -> Group:
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
        with Live(
            self.render(uc), console=self.console, transient=True, auto_refresh=False
        ) as live:
            while True:
                await trio.sleep(0.1)
                live.update(self.render(uc), refresh=True)

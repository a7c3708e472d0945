"""`clonegate status`'s lines for a run's jobs: who runs what, and the jobs put back
after infrastructure errors (ADR 0015)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from clonegate import visible

if TYPE_CHECKING:
    from clonegate.cluster import RunStatus

__all__ = ["show_jobs"]

RETRIES_SHOWN = 10  # jobs listed by name under "waiting to retry"; the rest are counted


def show_jobs(found: RunStatus) -> None:
    retries = {entry.key: entry.retries for entry in found.retrying}
    for entry in found.running:
        again = f", retry {retries[entry.key]}" if entry.key in retries else ""
        typer.echo(
            f"  {visible(entry.key)}: worker {visible(entry.worker)}, "
            f"{entry.seconds:.0f} s, delivery {entry.deliveries}{again}"
        )
    # Put back after infrastructure errors, and run by nobody now: queued, never failed.
    waiting = found.waiting_to_retry
    if waiting:
        typer.echo(f"  {len(waiting)} waiting to retry after infrastructure errors:")
    for retrying in waiting[:RETRIES_SHOWN]:
        when = f"in {retrying.due:.0f} s" if retrying.due > 0 else "queued"
        reason = visible(retrying.reason)
        typer.echo(f"  {visible(retrying.key)}: retry {retrying.retries}, {when}, after: {reason}")
    if len(waiting) > RETRIES_SHOWN:
        typer.echo(f"  ... and {len(waiting) - RETRIES_SHOWN} more")

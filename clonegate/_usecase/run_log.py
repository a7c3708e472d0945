"""A run's events: its clone limit and memory budget when it began, then each change,
kept in the result store with the run (issue 44, ADR 0020)."""

from __future__ import annotations

import trio

from .._domain.store import ReportStore
from .._domain.timeline import RunClock, RunEvent, RunEventKind
from .gate import CloneGate

__all__ = ["RunLog", "first_limits"]


def first_limits(gate: CloneGate) -> list[tuple[str, int, str]]:
    """The limits a run begins with, as (kind, value, detail): the clone slots, and
    the memory budget's MiB with how it was chosen, if there is one."""
    limits = [(str(RunEventKind.CLONE_LIMIT), gate.size, "")]
    if gate.admission is not None:
        estimates = gate.admission.estimates
        size, detail = gate.admission.semaphore.size, estimates.origin
        if size != estimates.ceiling:  # the use case's controller moved it in a run before
            detail = "; ".join(
                filter(None, [detail, f"of {estimates.ceiling} MiB, as an earlier run left it"])
            )
        limits.append((str(RunEventKind.MEMORY_BUDGET), size, detail))
    return limits


class RunLog:
    """The events of the runs in flight, noted as they happen (sync: a limit changes
    in a callback) and written with the run's next report, and when it ends.

    The limits belong to the use case, not to one run: two batches of one use case run
    at once share its gate, so an event goes to every run in flight.
    """

    def __init__(self, store: ReportStore | None, clock: RunClock) -> None:
        self._store = store
        self.clock = clock
        self._pending: dict[int, list[RunEvent]] = {}

    def open(self, run_id: int, first: list[tuple[str, int, str]]) -> None:
        """Run ``run_id`` began: its limits' first values, as (kind, value, detail).
        The clock reads the wall clock again (a use case may live for days), unless
        another run is in flight: runs that overlap share one reading, so that their
        instants compare."""
        if not self._pending:
            self.clock.anchor()
        at = self.clock.now()
        self._pending[run_id] = [RunEvent(kind, at, value, detail) for kind, value, detail in first]

    def note(self, kind: str, value: int, detail: str = "") -> None:
        """A limit took ``value``, now. Not a checkpoint."""
        at = self.clock.now()
        for pending in self._pending.values():
            pending.append(RunEvent(kind, at, value, detail))

    async def flush(self, run_id: int) -> None:
        """Write run ``run_id``'s events noted since the last flush. Always a checkpoint."""
        events = self._pending.get(run_id)
        if not events or self._store is None:  # most reports: no write of their own
            await trio.lowlevel.checkpoint()
            return
        self._pending[run_id] = []
        await self._store.save_events(run_id, events)

    def close(self, run_id: int) -> None:
        """Run ``run_id`` ended: nothing more is noted for it."""
        self._pending.pop(run_id, None)

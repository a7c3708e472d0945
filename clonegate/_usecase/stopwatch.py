"""When a repository reached each step of its way through the use case."""

from __future__ import annotations

from dataclasses import dataclass

from .._domain.reports import Timings

__all__ = ["Stopwatch"]


@dataclass
class Stopwatch:
    """When a repository reached each step; its Timings at any moment, finished or not."""

    started: float
    slot_at: float | None = None
    ready_at: float | None = None  # the VCS's set-up done, the clone itself begins
    cloned_at: float | None = None
    analysis_at: float | None = None

    def phase(self) -> str:
        if self.cloned_at is not None:
            return "analyzing"
        if self.slot_at is None:
            return "waiting for a clone slot"
        return "cloning" if self.ready_at is not None else "starting the clone"

    def timings(self, now: float) -> Timings:
        slot = self.slot_at if self.slot_at is not None else now
        cloned = self.cloned_at if self.cloned_at is not None else now
        if self.ready_at is not None:
            ready = self.ready_at
        else:  # unfinished: still setting up; finished by a VCS that never said: all clone
            ready = slot if self.cloned_at is not None else cloned
        return Timings(
            waited=slot - self.started,
            setup=ready - slot,
            clone=cloned - ready,
            analysis=now - self.analysis_at if self.analysis_at is not None else 0.0,
        )

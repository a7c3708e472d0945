"""Events the use case emits as repositories move through the pipeline."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Event", "EventKind"]


class EventKind(StrEnum):
    QUEUED = "queued"  # waiting for a clone slot
    CLONING = "cloning"  # holds a slot
    CLONED = "cloned"  # slot released
    ANALYZING = "analyzing"
    DONE = "done"  # a report exists; see ``status``
    STUCK = "stuck"  # a clone has run longer than the stuck threshold
    BUDGET = "budget"  # the memory budget's controller resized the gate (no repository)
    MEMORY = "memory"  # a clone's reservation in the budget changed as it forecast its need
    RETRY = "retry"  # a clone the server pushed back waits (no slot) to be tried again
    RECEIVED = "received"  # a clone's bytes received so far (``received``), now and then


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    url: str  # redacted
    index: int
    # Seconds in this phase so far (for STUCK, the clone's; for RETRY, the wait ahead).
    elapsed: float = 0.0
    # For DONE: the report's status; for BUDGET: "shrink" or "grow"; for RETRY: the kind.
    status: str = ""
    # For BUDGET: the new size and why; for MEMORY: "8 -> 500 MiB"; for RETRY: the error.
    detail: str = ""
    # For RECEIVED: the bytes the clone received so far (its pack's, as they arrive).
    received: int = 0

"""Where every repository of a run is, from the use case's events: each in exactly one
state, so that the states always add up to the total (issue 44, ADR 0021)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from clonegate import Event, EventKind

__all__ = ["State", "Tally"]


class State(enum.StrEnum):
    """A repository's place in a run, in the order it passes them (a retry goes back)."""

    QUEUED = "queued"  # not started yet, or waiting for a clone slot
    RETRY = "waiting to retry"  # the server pushed back; no slot held (issue 43)
    CLONING = "cloning"  # holds a clone slot
    ANALYZING = "analyzing"  # cloned: the slot is given back
    DONE = "done"  # reported ok
    FAILED = "failed"  # reported anything else (failed, timeout, cancelled)


# The state an event puts its repository in; the others (STUCK, MEMORY, BUDGET,
# RECEIVED) move none.
_MOVES = {
    EventKind.QUEUED: State.QUEUED,
    EventKind.RETRY: State.RETRY,
    EventKind.CLONING: State.CLONING,
    EventKind.CLONED: State.ANALYZING,
    EventKind.ANALYZING: State.ANALYZING,
}


@dataclass
class Tally:
    """The state of each repository an event named; the rest of ``total`` are queued.

    ``total`` is None while the input is still being read (a stream): then only the
    repositories seen waiting for a slot count as queued, and the total shows as "?".
    A finished repository is only counted: a run of a million keeps no entry for it.
    """

    total: int | None
    _at: dict[int, State] = field(default_factory=dict)  # repositories not finished
    _counts: dict[State, int] = field(default_factory=lambda: dict.fromkeys(State, 0))
    # Bytes each clone received so far, by repository, while it is cloning (RECEIVED).
    received: dict[int, int] = field(default_factory=dict)

    def on_event(self, event: Event) -> None:
        if event.index < 0:  # the budget's events name no repository
            return
        if event.kind is EventKind.RECEIVED:
            # A clone's only: a late one (after the clone ended) would be kept forever.
            if self._at.get(event.index) is State.CLONING:
                self.received[event.index] = max(event.received, 0)
        elif event.kind is EventKind.DONE:
            self._move(event.index, State.DONE if event.status == "ok" else State.FAILED)
            del self._at[event.index]
        elif (state := _MOVES.get(event.kind)) is not None:
            self._move(event.index, state)

    def _move(self, index: int, state: State) -> None:
        self.received.pop(index, None)  # an attempt's figure ends with it
        before = self._at.get(index)
        if before is not None:
            self._counts[before] -= 1
        self._at[index] = state
        self._counts[state] += 1

    @property
    def finished(self) -> int:
        return self._counts[State.DONE] + self._counts[State.FAILED]

    def counts(self) -> dict[State, int]:
        """Repositories per state, every state present; with a known total they add up
        to it: those no event named yet are queued."""
        counts = dict(self._counts)
        if self.total is not None:
            named = sum(n for state, n in counts.items() if state is not State.QUEUED)
            counts[State.QUEUED] = self.total - named
        return counts

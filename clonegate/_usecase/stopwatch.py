"""When a repository reached each step of its way through the use case."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

import trio

from .._domain.reports import Timings
from .._domain.timeline import Phase, PhaseName, RunClock

__all__ = ["Stopwatch"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Attempt:
    """One clone attempt's readings: queued, slot held, set-up done, ended."""

    queued: float
    slot_at: float | None
    ready_at: float | None
    cloned_at: float | None
    ended: float


@dataclass
class Stopwatch:
    """When a repository reached each step; its Timings at any moment, finished or not,
    and its phases (ADR 0020). Readings are the use case's clock (trio's)."""

    started: float
    slot_at: float | None = None
    ready_at: float | None = None  # the VCS's set-up done, the clone itself begins
    cloned_at: float | None = None
    analysis_at: float | None = None
    listing_at: float | None = None  # an incremental run asks for the remote's HEAD
    attempts: list[_Attempt] = field(default_factory=list)

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

    def timed(self, attempt: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T]]:
        """``attempt`` (one clone attempt, which sets ``slot_at``, ``ready_at`` and, if
        it clones, ``cloned_at``), its readings kept when it ends, however it ends."""

        async def timed_attempt() -> T:
            queued = trio.current_time()
            try:
                return await attempt()
            finally:  # sync: a cancelled attempt is kept too
                self.attempts.append(
                    _Attempt(
                        queued, self.slot_at, self.ready_at, self.cloned_at, trio.current_time()
                    )
                )

        return timed_attempt

    def phases(self, now: float, clock: RunClock) -> tuple[Phase, ...]:
        """The phases so far, ``now`` ending the one in progress, in order."""
        spans: list[_Span] = []
        if self.listing_at is not None:
            listed = self.attempts[0].queued if self.attempts else now
            spans.append((PhaseName.LISTING, self.listing_at, listed, None))
        for number, attempt in enumerate(self.attempts, 1):
            spans += _attempt_spans(number, attempt)
            if number < len(self.attempts):
                next_queued = self.attempts[number].queued
                spans.append((PhaseName.RETRY_WAIT, attempt.ended, next_queued, number))
        if self.analysis_at is not None:
            spans.append((PhaseName.ANALYSIS, self.analysis_at, now, None))
        return tuple(
            Phase(str(name), clock.at(start), clock.at(end), attempt)
            for name, start, end, attempt in spans
        )


_Span = tuple[PhaseName, float, float, int | None]  # a phase in the use case's clock


def _attempt_spans(number: int, attempt: _Attempt) -> list[_Span]:
    """Waiting, then set-up and clone as far as the attempt got (as :meth:`timings`
    counts them: a VCS that never said it was ready cloned all the time it held the
    slot, if it cloned, and set up all of it if not)."""
    slot = attempt.slot_at
    if slot is None:
        return [(PhaseName.WAITING, attempt.queued, attempt.ended, number)]
    spans: list[_Span] = [(PhaseName.WAITING, attempt.queued, slot, number)]
    end = attempt.cloned_at if attempt.cloned_at is not None else attempt.ended
    ready = attempt.ready_at
    if ready is None:
        ready = slot if attempt.cloned_at is not None else end
    if ready > slot:
        spans.append((PhaseName.SETUP, slot, ready, number))
    if end > ready or attempt.cloned_at is not None:
        spans.append((PhaseName.CLONE, ready, end, number))
    return spans

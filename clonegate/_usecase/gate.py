"""The clone gate: the use case's weighted semaphore, with live bookkeeping (seeds 000, 003)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

import trio

from .._domain.semaphore import WeightedSemaphore

__all__ = ["CloneGate", "CloneGateStatistics", "GateEntry"]


@dataclass(frozen=True, slots=True)
class GateEntry:
    url: str  # redacted
    index: int
    weight: int
    seconds: float  # waited so far (queued) or running so far (active)


@dataclass(frozen=True, slots=True)
class CloneGateStatistics:
    """A snapshot. Invariant: ``acquired == released + len(active)``."""

    size: int
    held: int
    queued: tuple[GateEntry, ...]
    active: tuple[GateEntry, ...]
    acquired: int
    released: int
    done: int  # clones that finished with a clone in hand
    failed: int  # clones that raised (error, timeout, cancellation)


class CloneGate:
    """A :class:`WeightedSemaphore` that also knows who waits and who clones, since when."""

    def __init__(self, size: int) -> None:
        self._semaphore = WeightedSemaphore(size)
        # Keyed by a ticket per slot() call: the same index may be in flight twice
        # when a library user calls execute() concurrently.
        self._queued: dict[int, tuple[str, int, int, float]] = {}
        self._active: dict[int, tuple[str, int, int, float]] = {}
        self._tickets = itertools.count()
        self._acquired = self._released = self._done = self._failed = 0

    @property
    def size(self) -> int:
        return self._semaphore.size

    @asynccontextmanager
    async def slot(self, index: int, url: str, weight: int) -> AsyncIterator[None]:
        """Hold ``weight`` tokens for the body: FIFO, cancellable while waiting."""
        ticket = next(self._tickets)
        self._queued[ticket] = (url, index, weight, trio.current_time())
        try:
            await self._semaphore.acquire(weight)
        finally:
            del self._queued[ticket]
        self._acquired += 1
        self._active[ticket] = (url, index, weight, trio.current_time())
        succeeded = False
        try:
            yield
            succeeded = True
        finally:
            del self._active[ticket]
            self._released += 1
            if succeeded:
                self._done += 1
            else:
                self._failed += 1
            self._semaphore.release(weight)

    async def watch_for_stuck(
        self, threshold: float, on_stuck: Callable[[GateEntry], None]
    ) -> None:
        """Call ``on_stuck(entry)`` once for each clone that holds its slot ``threshold``
        seconds or more. Runs until cancelled; checks at most once a second."""
        warned: set[tuple[int, str]] = set()
        while True:
            await trio.sleep(min(threshold / 4, 1.0))
            for entry in self.statistics().active:
                if entry.seconds >= threshold and (entry.index, entry.url) not in warned:
                    warned.add((entry.index, entry.url))
                    on_stuck(entry)

    def statistics(self) -> CloneGateStatistics:
        # Entries exist only inside trio.run; an idle gate may be asked from outside.
        now = trio.current_time() if self._queued or self._active else 0.0

        def entries(table: dict[int, tuple[str, int, int, float]]) -> tuple[GateEntry, ...]:
            return tuple(GateEntry(u, i, w, now - t) for u, i, w, t in table.values())

        return CloneGateStatistics(
            size=self._semaphore.size,
            held=self._semaphore.held,
            queued=entries(self._queued),
            active=entries(self._active),
            acquired=self._acquired,
            released=self._released,
            done=self._done,
            failed=self._failed,
        )

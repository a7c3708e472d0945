"""A per-host clone limit that finds what the host tolerates: AIMD (issue 43, ADR 0019).

Additive increase after successful clones, multiplicative decrease when the host
pushes back, between 1 and a ceiling (``--host-limit``, never above ``-j``). The
limit is the size of a :class:`WeightedSemaphore`, resized in place, so waiters keep
their FIFO order through every change (ADR 0002).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import final

import trio
from trio.lowlevel import enable_ki_protection

from .errors import CloneError, ErrorKind
from .semaphore import WeightedSemaphore

__all__ = [
    "AdaptiveLimit",
    "AdaptiveLimitStatistics",
    "LimitChange",
    "Permit",
    "Signal",
    "signal_of",
]


class Signal(StrEnum):
    """How a clone ended, as far as its host's limit is concerned.

    - ``success``: the clone went through.
    - ``throttled``: HTTP 429, or a "rate limit" / "too many requests" text.
    - ``unavailable_retry_after``: a 503 that came with ``Retry-After`` (a server
      shedding load says when to come back; a 503 without it may be a plain outage).
    - ``reset``: the connection was reset or closed mid-transfer. One is noise (a
      flaky network); a burst of them is pushback (see :class:`AdaptiveLimit`).
    - ``other``: anything else (not found, too large, cancelled...): says nothing
      about the host's load, changes nothing.
    """

    SUCCESS = "success"
    THROTTLED = "throttled"
    UNAVAILABLE_RETRY_AFTER = "unavailable_retry_after"
    RESET = "reset"
    OTHER = "other"


# The signals that are a server's answer "fewer, please": a reset is no such answer.
_PUSHBACK = frozenset({Signal.THROTTLED, Signal.UNAVAILABLE_RETRY_AFTER})


def signal_of(error: BaseException | None) -> Signal:
    """The signal a clone attempt that ended with ``error`` (None: it cloned) gives its
    host's limit: the one mapping from errors to signals (ADR 0019).

    Only a :class:`CloneError` says anything about the host: a shared limit that
    failed, a cancellation or a bug of ours is ``other``. A connection reset or closed
    mid-answer is kind ``connection_lost``: a ``reset`` (a burst of them lowers the
    limit; a refused connection is the breaker's business, not the limit's).
    """
    if error is None:
        return Signal.SUCCESS
    if not isinstance(error, CloneError):
        return Signal.OTHER
    if error.kind is ErrorKind.THROTTLED:
        return Signal.THROTTLED
    if error.kind is ErrorKind.UNAVAILABLE and error.retry_after is not None:
        return Signal.UNAVAILABLE_RETRY_AFTER
    if error.kind is ErrorKind.CONNECTION_LOST:
        return Signal.RESET
    return Signal.OTHER


@dataclass(frozen=True, slots=True)
class LimitChange:
    """One change of the semaphore's size: at trio ``time``, to ``size``, because of
    ``signal`` (``success`` for an increase)."""

    time: float
    size: int
    signal: Signal


@dataclass(frozen=True, slots=True)
class AdaptiveLimitStatistics:
    """A snapshot of an :class:`AdaptiveLimit`.

    Attributes:
      limit: the current limit, a float (increases come in fractions).
      size: the semaphore's size, ``floor(limit)``.
      ceiling: the largest the limit may be.
      held: clones holding a permit.
      generation: decreases so far; a permit remembers the generation it was granted in.
      increases, decreases: how many times the size went up or down.
      ignored_signals: throttling signals from permits granted before the last
        decrease (already answered by it).
      timeline: the size's changes, oldest first, the last ``TIMELINE`` of them,
        starting with the initial size.
    """

    limit: float
    size: int
    ceiling: int
    held: int
    generation: int
    increases: int
    decreases: int
    ignored_signals: int
    timeline: tuple[LimitChange, ...]


@final
class Permit:
    """What :meth:`AdaptiveLimit.hold` yields: the holder reports how its clone ended.

    Report once (:meth:`report`); a permit given back without a report (cancelled,
    an exception) counts as ``other``. Not a checkpoint.
    """

    __slots__ = ("_limit", "_reported", "busy", "generation")

    def __init__(self, limit: AdaptiveLimit, generation: int, busy: bool) -> None:
        self._limit = limit
        self.generation = generation
        self.busy = busy  # the limit was at least half used when this was granted
        self._reported = False

    @enable_ki_protection
    def report(self, signal: Signal) -> bool:
        """Tell the limit how the clone ended; a second report is ignored (False).

        Returns whether the limit took the signal as its own: a push-back (throttled,
        or unavailable with a ``Retry-After``) while the limit could still go lower,
        or one that came under a limit since lowered. That push-back is the cost of
        the limit's search for the host's capacity, not the repository's failure: the
        retry loop does not charge it to ``--retries`` (ADR 0019). At the floor (1)
        a push-back is the repository's own."""
        if self._reported:
            return False
        self._reported = True
        return self._limit._observe(self, Signal(signal))


@final
class AdaptiveLimit:
    """AIMD on a :class:`WeightedSemaphore`'s size, for one host.

    - **Increase**: each ``success`` adds ``increase / limit`` (``increase`` clones
      per round of ``limit`` successful clones: TCP's congestion avoidance at 1; 0.5
      by default, ADR 0019 says why), up to ``ceiling``, but only from a clone
      granted while at least half the limit was in use (Netflix's rule: a limit
      nobody uses proves nothing, and a host that saw two clones at once must not be
      trusted with eight).
    - **Decrease**: a ``throttled``, an ``unavailable_retry_after`` or a burst of
      ``reset`` multiplies the limit by ``decrease``, never below 1. Once per
      generation: the clones granted before a decrease were admitted under the old
      limit, so their signals are the same news (ignored, counted), as TCP reduces
      once per window.
    - **A burst of resets** is ``reset_burst`` ``reset`` reports from the current
      generation with no ``success`` between them. Any ``success`` starts the count
      again; ``other`` leaves it.

    Each change of the integer size resizes the semaphore at once: growth grants the
    waiters that fit in FIFO order, a shrink takes nothing back (holders finish, new
    clones wait) (ADR 0002). The limit starts at ``initial`` (default: the ceiling,
    the fixed limit it replaces).

    :meth:`hold` is entered like the semaphore's (a checkpoint on every path; nothing
    held if cancelled while waiting); reporting, :meth:`statistics` and leaving are
    never checkpoints. Times in the timeline are trio's. ``on_change``, if given, is
    called with each :class:`LimitChange` as it is made (sync, in the reporting task).
    """

    TIMELINE = 10_000  # changes kept: a long run's timeline stays bounded

    def __init__(
        self,
        ceiling: int,
        *,
        initial: int | None = None,
        increase: float = 0.5,
        decrease: float = 0.75,
        reset_burst: int = 3,
        semaphore: WeightedSemaphore | None = None,
        on_change: Callable[[LimitChange], None] | None = None,
    ) -> None:
        if isinstance(ceiling, bool) or not isinstance(ceiling, int) or ceiling < 1:
            raise ValueError(f"an adaptive limit's ceiling must be an int >= 1, got {ceiling!r}")
        start = ceiling if initial is None else initial
        if isinstance(start, bool) or not isinstance(start, int) or not 1 <= start <= ceiling:
            raise ValueError(f"initial must be an int in [1, {ceiling}], got {initial!r}")
        if not 0 < increase <= 1:
            raise ValueError(f"increase must be in (0, 1], got {increase!r}")
        if not 0 < decrease < 1:
            raise ValueError(f"decrease must be in (0, 1), got {decrease!r}")
        if isinstance(reset_burst, bool) or not isinstance(reset_burst, int) or reset_burst < 1:
            raise ValueError(f"reset_burst must be an int >= 1, got {reset_burst!r}")
        self.ceiling = ceiling
        self.increase = increase
        self.decrease = decrease
        self.reset_burst = reset_burst
        self._limit = float(start)
        self.semaphore = semaphore if semaphore is not None else WeightedSemaphore(start)
        self.semaphore.size = start
        self._generation = 0
        self._resets = 0  # resets in a row in the current generation
        self._increases = 0
        self._decreases = 0
        self._ignored = 0
        self._timeline: deque[LimitChange] = deque(maxlen=self.TIMELINE)
        self._started = False
        # Told of each change of the size (the use case logs it): sync, in the
        # reporting task, never a checkpoint.
        self._on_change = on_change

    def __repr__(self) -> str:
        return f"<AdaptiveLimit {self._limit:.2f}/{self.ceiling} held={self.semaphore.held}>"

    @property
    def limit(self) -> float:
        return self._limit

    @asynccontextmanager
    @enable_ki_protection
    async def hold(self, n: int = 1) -> AsyncIterator[Permit]:
        """Hold ``n`` tokens of the semaphore for one clone, yielding its :class:`Permit`.

        The ``Limiter`` port (ADR 0015): the use case holds it like any limit.
        """
        await self.semaphore.acquire(n)
        try:
            self._note_start()
            permit = Permit(self, self._generation, 2 * self.semaphore.held >= self._limit)
            try:
                yield permit
            finally:
                permit.report(Signal.OTHER)
        finally:
            self.semaphore.release(n)

    def statistics(self) -> AdaptiveLimitStatistics:
        """Return a frozen :class:`AdaptiveLimitStatistics`. Not a checkpoint."""
        return AdaptiveLimitStatistics(
            limit=self._limit,
            size=self.semaphore.size,
            ceiling=self.ceiling,
            held=self.semaphore.held,
            generation=self._generation,
            increases=self._increases,
            decreases=self._decreases,
            ignored_signals=self._ignored,
            timeline=tuple(self._timeline),
        )

    def _note_start(self) -> None:
        # The first entry of the timeline: the size the run started with, when it did.
        if not self._started:
            self._started = True
            start = LimitChange(trio.current_time(), self.semaphore.size, Signal.OTHER)
            self._timeline.append(start)

    def _observe(self, permit: Permit, signal: Signal) -> bool:
        """Apply ``signal``; True if it was a push-back the limit took (see report)."""
        if signal is Signal.SUCCESS:
            self._resets = 0
            if permit.busy:
                step = self.increase / self._limit
                self._set(min(self._limit + step, float(self.ceiling)), signal)
            return False
        if signal is Signal.OTHER:
            return False
        pushback = signal in _PUSHBACK
        if permit.generation != self._generation:
            self._ignored += 1
            return pushback  # granted under a limit a decrease has lowered since
        if signal is Signal.RESET:
            self._resets += 1
            if self._resets < self.reset_burst:
                return False
        self._resets = 0
        self._generation += 1
        above_floor = self.semaphore.size > 1  # a decrease can still lower it
        self._set(max(self._limit * self.decrease, 1.0), signal)
        return pushback and above_floor

    def _set(self, limit: float, signal: Signal) -> None:
        before = self.semaphore.size
        self._limit = limit
        # A float sum of 1/limit steps lands just below a whole number: round first.
        size = max(1, min(self.ceiling, math.floor(round(limit, 9))))
        if size == before:
            return
        if size > before:
            self._increases += 1
        else:
            self._decreases += 1
        self.semaphore.size = size
        change = LimitChange(trio.current_time(), size, signal)
        self._timeline.append(change)
        if self._on_change is not None:
            self._on_change(change)

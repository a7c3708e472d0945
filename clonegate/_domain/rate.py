"""A per-host request rate: ``--host-rate 30/min`` as a token bucket (issue 43, ADR 0019).

For servers that count requests rather than concurrent clones. The bucket is kept
as one number, the theoretical arrival time of the generic cell rate algorithm
(GCRA): the same state a shared version keeps in one Redis key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import final

import trio
from trio.lowlevel import enable_ki_protection

__all__ = ["Rate", "TokenBucket", "TokenBucketStatistics"]

_UNITS = {"s": 1.0, "min": 60.0, "h": 3600.0}
_RATE = re.compile(r"([0-9]{1,9})/(s|min|h)")


@dataclass(frozen=True, slots=True)
class Rate:
    """``count`` requests per ``per`` seconds."""

    count: int
    per: float

    def __post_init__(self) -> None:
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"a rate counts at least 1 request, got {self.count!r}")
        if not math.isfinite(self.per) or self.per <= 0:
            raise ValueError(f"a rate's period must be > 0 seconds, got {self.per!r}")

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``"N/s"``, ``"N/min"`` or ``"N/h"``, N an integer >= 1; spaces around are
        ignored. Anything else raises ``ValueError`` saying what is expected."""
        match = _RATE.fullmatch(text.strip()) if isinstance(text, str) else None
        if match is None or int(match[1]) < 1:
            raise ValueError(f"a rate is N/s, N/min or N/h with N >= 1, got {text!r}")
        return cls(int(match[1]), _UNITS[match[2]])

    @property
    def interval(self) -> float:
        """Seconds between two requests at this rate."""
        return self.per / self.count

    def __str__(self) -> str:
        unit = next((name for name, seconds in _UNITS.items() if seconds == self.per), None)
        return f"{self.count}/{unit}" if unit else f"{self.count}/{self.per:g}s"


@dataclass(frozen=True, slots=True)
class TokenBucketStatistics:
    """A snapshot of a :class:`TokenBucket`.

    Attributes:
      taken: tokens handed out so far.
      tasks_waiting: tasks in :meth:`TokenBucket.take` that have no token yet.
      next_token_at: the trio time the next token can be taken (past: one is there).
      waited: the total seconds tasks spent waiting at the head of the queue.
    """

    taken: int
    tasks_waiting: int
    next_token_at: float
    waited: float


@final
class TokenBucket:
    """At most ``size`` requests at once, then one per ``rate.interval`` seconds.

    It starts spaced: the first :meth:`take` gets a token at once and the next one
    ``rate.interval`` later, whatever the size; the bucket then fills by one token per
    interval while nobody takes, up to ``size`` (so a burst is never larger than
    ``size``, 1 by default: no burst at all).

    :meth:`take` is FIFO-fair: tokens go out in the order the takers came (a
    ``trio.Lock``, which is fair, admits one taker at a time to wait for the next
    token). It is a checkpoint on every path; a taker cancelled while waiting takes
    nothing and the next in line takes its place. :meth:`statistics` is not a
    checkpoint. Times are trio's clock, so a ``MockClock`` drives it in tests.
    """

    __slots__ = ("_lock", "_size", "_started", "_taken", "_tat", "_waited", "rate")

    def __init__(self, rate: Rate, size: int = 1) -> None:
        if not isinstance(rate, Rate):
            raise TypeError(f"rate must be a Rate, not {type(rate).__name__}")
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"a token bucket holds at least 1 token, got {size!r}")
        self.rate = rate
        self._size = size
        self._lock = trio.Lock()
        # The theoretical arrival time: when the bucket would next be empty if every
        # token were taken as soon as it came. A token is there when _tat - tolerance
        # <= now. Unset until the first take: trio time exists only in a run.
        self._tat = -math.inf
        self._started = False
        self._taken = 0
        self._waited = 0.0

    def __repr__(self) -> str:
        return f"<TokenBucket {self.rate} size={self._size} taken={self._taken}>"

    @property
    def size(self) -> int:
        """The most tokens the bucket holds (the largest burst)."""
        return self._size

    @property
    def _tolerance(self) -> float:
        # GCRA's burst tolerance: (size - 1) tokens ahead of the steady rate.
        return (self._size - 1) * self.rate.interval

    def statistics(self) -> TokenBucketStatistics:
        """Return a frozen :class:`TokenBucketStatistics`. Not a checkpoint."""
        return TokenBucketStatistics(
            taken=self._taken,
            tasks_waiting=self._lock.statistics().tasks_waiting + self._lock.locked(),
            next_token_at=self._tat - self._tolerance,
            waited=self._waited,
        )

    @enable_ki_protection
    async def take(self) -> None:
        """Wait for a token, in FIFO order, and take it. Always a checkpoint."""
        async with self._lock:  # acquiring a trio.Lock is a checkpoint on every path
            now = trio.current_time()
            if not self._started:
                # Start spaced: one token, not a full bucket.
                self._tat = now + self._tolerance
                self._started = True
            ready_at = max(self._tat, now) - self._tolerance
            if ready_at > now:
                # Cancelled here, nothing is taken and the lock passes to the next.
                await trio.sleep_until(ready_at)
                self._waited += trio.current_time() - now
            self._tat = max(self._tat, trio.current_time()) + self.rate.interval
            self._taken += 1

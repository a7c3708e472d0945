"""A circuit breaker for a host that is down (issue 43, ADR 0019).

After ``threshold`` connection failures in a row to one host (refused, unknown
name, TLS), the host's other repositories stop trying: they wait while one probe
tries after a cool-down, instead of each paying its own connection timeout. The
probe's success closes the breaker and lets them all go; its failure opens it
again for a longer cool-down. After ``probes`` failed probes, or when the run tells
it to (:meth:`Breaker.give_up`), the host is given up: every waiter, and every
later attempt, gets :exc:`HostUnavailableError`.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import final

import trio
from trio.lowlevel import enable_ki_protection

__all__ = ["Attempt", "Breaker", "BreakerState", "BreakerStatistics", "HostUnavailableError"]


class BreakerState(StrEnum):
    CLOSED = "closed"  # attempts go through
    OPEN = "open"  # attempts wait for the cool-down's end
    HALF_OPEN = "half_open"  # one probe is out; the others wait for its outcome
    GIVEN_UP = "given_up"  # the host is unavailable for the rest of the run


class HostUnavailableError(Exception):
    """The breaker gave the host up: ``host_unavailable`` in reports.

    Attributes:
      host: the host, as the breaker was given it.
      failures: connection attempts to it that failed, probes included.
      reason: the last failure's message, or why it was given up.
    """

    kind = "host_unavailable"

    def __init__(self, host: str, failures: int, reason: str) -> None:
        super().__init__(f"{host}: unavailable after {failures} failed connections ({reason})")
        self.host = host
        self.failures = failures
        self.reason = reason

    def __reduce__(self) -> tuple[type[HostUnavailableError], tuple[str, int, str]]:
        return (type(self), (self.host, self.failures, self.reason))


@dataclass(frozen=True, slots=True)
class BreakerStatistics:
    """A snapshot of a :class:`Breaker`: its ``state``; ``failures_in_a_row``;
    ``failures`` in all (probes included); ``probes`` failed since it last opened;
    ``opened`` (times it opened from closed); ``tasks_waiting``; ``reopen_at`` (trio
    time the cool-down ends, ``inf`` unless open)."""

    state: BreakerState
    failures_in_a_row: int
    failures: int
    probes: int
    opened: int
    tasks_waiting: int
    reopen_at: float


@final
class Attempt:
    """What :meth:`Breaker.attempt` yields: the holder reports how the connection went.

    :meth:`connected` once the server answered anything (even a 404 or a 429: the
    host is up), :meth:`failed` for a connection failure (refused, DNS, TLS). Given
    back without a report (cancelled, another error), it tells the breaker nothing,
    except that a probe is no longer out. Not checkpoints.
    """

    __slots__ = ("_breaker", "_done", "epoch", "probe")

    def __init__(self, breaker: Breaker, probe: bool) -> None:
        self._breaker = breaker
        self.probe = probe
        self.epoch = breaker._epoch  # the breaker's openings so far when this started
        self._done = False

    @enable_ki_protection
    def connected(self) -> None:
        if not self._done:
            self._done = True
            self._breaker._connected()

    @enable_ki_protection
    def failed(self, reason: str) -> None:
        if not self._done:
            self._done = True
            self._breaker._failed(self, reason)

    def _abandon(self) -> None:
        if not self._done:
            self._done = True
            self._breaker._abandoned(self)


@final
class Breaker:
    """Closed, open, half-open: one breaker per host.

    - **Closed**: attempts go through. ``threshold`` failures in a row open it; any
      connection (whatever the server said) sets the count back to 0.
    - **Open**: attempts wait until ``cool_down`` seconds after it opened; then the
      first waiter to run becomes the one probe (**half-open**) and the others wait
      for its outcome (the probe is the first in line: waiters probe in turn of
      arrival). A failed probe opens it again, the cool-down doubled up to
      ``longest_cool_down``; a connected probe closes it and every waiter goes.
      Failures of attempts that started before it opened change nothing more; their
      success closes it (the host is back).
    - **Given up**: after ``probes`` failed probes in a row, or :meth:`give_up`
      (the run is ending and only this host's repositories are left): every waiting
      and later :meth:`attempt` raises :exc:`HostUnavailableError`.

    Entering :meth:`attempt` is a checkpoint on every path, and a task cancelled while
    it waits leaves nothing behind (a cancelled probe hands the probe to the next
    waiter at once). Reporting, :meth:`give_up` and :meth:`statistics` are not
    checkpoints. Times are trio's.
    """

    def __init__(
        self,
        host: str,
        *,
        threshold: int = 5,
        cool_down: float = 5.0,
        longest_cool_down: float = 60.0,
        probes: int = 4,
    ) -> None:
        for name, value in (("threshold", threshold), ("probes", probes)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be an int >= 1, got {value!r}")
        if not (0 < cool_down <= longest_cool_down and math.isfinite(longest_cool_down)):
            raise ValueError("cool_down must be > 0 and <= longest_cool_down (finite)")
        self.host = host
        self.threshold = threshold
        self.cool_down = cool_down
        self.longest_cool_down = longest_cool_down
        self.max_probes = probes
        self._state = BreakerState.CLOSED
        self._in_a_row = 0
        self._failures = 0
        self._probes = 0
        self._opened = 0
        # Tasks waiting in attempt(), in order of arrival (an ordered set).
        self._waiting: OrderedDict[object, None] = OrderedDict()
        self._reopen_at = math.inf
        self._reason = ""
        self._epoch = 0  # bumped when it opens: attempts from before are stale
        self._changed = trio.Event()

    def __repr__(self) -> str:
        return f"<Breaker {self.host} {self._state} failures={self._failures}>"

    @property
    def state(self) -> BreakerState:
        return self._state

    def statistics(self) -> BreakerStatistics:
        """Return a frozen :class:`BreakerStatistics`. Not a checkpoint."""
        return BreakerStatistics(
            state=self._state,
            failures_in_a_row=self._in_a_row,
            failures=self._failures,
            probes=self._probes,
            opened=self._opened,
            tasks_waiting=len(self._waiting),
            reopen_at=self._reopen_at,
        )

    @asynccontextmanager
    @enable_ki_protection
    async def attempt(self) -> AsyncIterator[Attempt]:
        """Wait until this host may be tried, then yield the :class:`Attempt` to report on."""
        attempt = await self._admit()
        try:
            yield attempt
        finally:
            attempt._abandon()

    @enable_ki_protection
    def give_up(self, reason: str = "the run ended while the host was down") -> None:
        """Give the host up unless it is closed: waiters and later attempts raise
        :exc:`HostUnavailableError`. Not a checkpoint."""
        if self._state is not BreakerState.CLOSED:
            self._enter(BreakerState.GIVEN_UP, reason)

    async def _admit(self) -> Attempt:
        await trio.lowlevel.checkpoint_if_cancelled()
        me = object()  # this task's place in the line of waiters
        try:
            while True:
                if self._state is BreakerState.GIVEN_UP:
                    self._leave(me)
                    await trio.lowlevel.cancel_shielded_checkpoint()
                    raise HostUnavailableError(self.host, self._failures, self._reason)
                if self._state is BreakerState.CLOSED:
                    self._leave(me)
                    await trio.lowlevel.cancel_shielded_checkpoint()
                    return Attempt(self, probe=False)
                first = next(iter(self._waiting), me) is me
                if (
                    first
                    and self._state is BreakerState.OPEN
                    and trio.current_time() >= self._reopen_at
                ):
                    # Claimed before yielding: nobody else can become the probe meanwhile.
                    self._enter(BreakerState.HALF_OPEN, self._reason)
                    self._leave(me)
                    await trio.lowlevel.cancel_shielded_checkpoint()
                    return Attempt(self, probe=True)
                self._waiting.setdefault(me)
                # Only the first in line watches the cool-down: it probes, in turn of arrival.
                first = next(iter(self._waiting)) is me
                with trio.move_on_at(self._reopen_at if first else math.inf):
                    await self._changed.wait()
        finally:
            self._leave(me)

    def _leave(self, me: object) -> None:
        if me not in self._waiting:
            return
        first = next(iter(self._waiting)) is me
        del self._waiting[me]
        if first and self._waiting:
            self._notify()  # the next in line watches the cool-down now

    def _enter(self, state: BreakerState, reason: str) -> None:
        self._state = state
        self._reason = reason
        self._reopen_at = math.inf
        self._notify()

    def _notify(self) -> None:
        # Wake every waiter to look again; a fresh event for the next change.
        self._changed.set()
        self._changed = trio.Event()

    def _open(self, reason: str, cool_down: float) -> None:
        self._epoch += 1
        self._enter(BreakerState.OPEN, reason)
        self._reopen_at = trio.current_time() + cool_down

    def _connected(self) -> None:
        if self._state is BreakerState.GIVEN_UP:
            return  # given up for good: its waiters have already been answered
        self._in_a_row = 0
        self._probes = 0
        if self._state in (BreakerState.OPEN, BreakerState.HALF_OPEN):
            self._enter(BreakerState.CLOSED, "")

    def _failed(self, attempt: Attempt, reason: str) -> None:
        self._failures += 1
        if self._state is BreakerState.GIVEN_UP:
            return
        self._reason = reason
        if attempt.probe:
            self._probes += 1
            if self._probes >= self.max_probes:
                self._enter(BreakerState.GIVEN_UP, reason)
                return
            self._open(reason, min(self.cool_down * 2**self._probes, self.longest_cool_down))
            return
        if attempt.epoch != self._epoch or self._state is not BreakerState.CLOSED:
            return  # started before it opened: the opening already answered it
        self._in_a_row += 1
        if self._in_a_row >= self.threshold:
            self._opened += 1
            self._open(reason, self.cool_down)

    def _abandoned(self, attempt: Attempt) -> None:
        if attempt.probe and self._state is BreakerState.HALF_OPEN:
            # Nobody learnt anything: the next waiter probes at once.
            self._open(self._reason, 0.0)

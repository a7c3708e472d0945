"""Riding out an unavailable limit server: retries with capped exponential backoff and
jitter, said once per outage, for up to a patience (ADR 0015, "Workers ride out Redis").

One :class:`Patience` per client, passed explicitly to everything that calls through
that client (the work queue, every semaphore): they share one view of the outage, so
a Redis restart is two log lines, not one per request, and everyone gives up at the
same point of it.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Awaitable, Callable
from typing import ClassVar, TypeVar, final

import trio

from .limits import LimiterUnavailableError

__all__ = ["Patience"]

logger = logging.getLogger("clonegate")

T = TypeVar("T")


@final
class Patience:
    """How long, and how, requests to ``server`` are retried while it is unavailable.

    :meth:`call` retries a request that failed with a retryable
    :exc:`LimiterUnavailableError` (a lost connection, no reply in time, a server
    still loading its data) after ``first`` seconds, doubling up to ``cap``, each wait
    shortened by up to half at random (so clients cut off together do not come back
    together). Once the outage (from the sending of the first request any caller saw
    fail, to now) has lasted ``seconds``, the failing calls raise, the error saying
    how long it lasted; 0: no retry. A request can take up to the client's reply
    bound, so a caller gives up at most one reply bound past ``seconds``.

    The first failure of an outage is logged (one warning), and so is the first
    success after it, with how long the server was gone (from the first unanswered
    request's sending): not each retry.
    """

    DEFAULT: ClassVar[float] = 300.0

    def __init__(
        self,
        seconds: float = DEFAULT,
        *,
        server: str = "Redis",
        first: float = 0.1,
        cap: float = 5.0,
    ) -> None:
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise ValueError(f"patience must be a number of seconds >= 0, got {seconds!r}")
        self.seconds = float(seconds)
        self.server = server
        self.first = first
        self.cap = cap
        self.outages = 0  # outages seen so far (each logged when it began and ended)
        self._since: float | None = None  # trio time the current outage was first seen
        self._retries = 0  # failed requests in the current outage

    def __repr__(self) -> str:
        return f"<Patience {self.seconds:g}s for {self.server}>"

    @property
    def down(self) -> bool:
        """Whether the last request to end failed (an outage is going on)."""
        return self._since is not None

    async def call(self, request: Callable[[], Awaitable[T]]) -> T:
        """``await request()``, again on each retryable failure, for up to the
        patience. ``request`` makes a new request each time (an awaitable is spent
        once awaited); it must be safe to send twice: the first may have run."""
        delay = self.first
        mine: float | None = None  # this call's first failure
        while True:
            sent = trio.current_time()
            try:
                result = await request()
            except LimiterUnavailableError as exc:
                if not exc.retryable:
                    raise
                # The outage is shared (one log line for all callers), but a caller's
                # patience runs from its own first failure too: another caller's success
                # (a cluster node that still answers) must not restart it.
                mine = sent if mine is None else mine
                since = min(self._failed(exc, sent), mine)
                now = trio.current_time()
                if now - since >= self.seconds:
                    raise type(exc)(
                        f"{exc} (unavailable for {now - since:.0f} s: no more patience, "
                        f"{self.seconds:g} s)"
                    ) from None
                # The jitter only shortens a wait: the cap stays a cap.
                pause = delay * (1 - 0.5 * random.random())
                await trio.sleep(min(pause, since + self.seconds - now))
                delay = min(2 * delay, self.cap)
                continue
            self._answered()
            return result

    def _failed(self, exc: LimiterUnavailableError, sent: float) -> float:
        self._retries += 1
        if self._since is None:
            # From when the request went unanswered: a reply bound's wait is part of it.
            self._since = sent
            self.outages += 1
            logger.warning("%s; retrying for up to %g s", exc, self.seconds)
        return self._since

    def _answered(self) -> None:
        if self._since is not None:
            logger.warning(
                "%s back after %.1f s (failed attempts: %d)",
                self.server,
                trio.current_time() - self._since,
                self._retries,
            )
            self._since = None
            self._retries = 0

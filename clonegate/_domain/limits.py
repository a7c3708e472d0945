"""The port every clone limit implements, and the ways a shared limit can fail (ADR 0015).

The use case holds, for each clone, its own count of clones, then optionally a
per-host limit, then a global one: anything with a ``hold(weight)`` async context
manager. :class:`WeightedSemaphore` is one (in this process);
``clonegate.RedisSemaphore`` is another (across processes and machines).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

__all__ = [
    "LeaseLostError",
    "LimitConfigError",
    "LimitError",
    "Limiter",
    "LimiterUnavailableError",
]


class Limiter(Protocol):
    """A limit a clone holds while it runs: ``async with limiter.hold(weight):``.

    Entering waits (FIFO) and is a checkpoint; if cancelled while waiting, nothing is
    held. Leaving gives the weight back. A shared limiter may end the hold early by
    cancelling its body and raising :exc:`LeaseLostError` when it leaves.
    """

    def hold(self, n: int = 1) -> AbstractAsyncContextManager[object]: ...


class LimitError(Exception):
    """A shared limit could not be held as it should; ``kind`` names how, in reports."""

    kind = "limit"


class LeaseLostError(LimitError):
    """The holder's lease ended before it released (the limit's server unreachable for
    longer than a lease, restarted without its data, or this process paused): others
    may already hold the permit, so the body was stopped (or was allowed to finish,
    if the limiter was told so)."""

    kind = "lease_lost"


class LimiterUnavailableError(LimitError):
    """The limit's server cannot be reached or refused the request."""

    kind = "limiter_unavailable"
    # An outage (no connection, no reply in time): worth retrying (``Patience``). False
    # for a refusal that the same request would get again.
    retryable = True


class LimitConfigError(LimitError, ValueError):
    """A shared limit's configuration was refused. ``RedisSemaphore`` no longer raises
    it (issue 39): the limit stored in Redis applies to every client, and a client
    that asked for another one is warned (ADR 0015); kept for code that catches it."""

    kind = "limit_config"

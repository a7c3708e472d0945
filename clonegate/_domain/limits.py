"""The port every clone limit implements, and the ways a shared limit can fail (ADR 0015).

The use case holds, for each clone, its own count of clones, then optionally a
per-host limit, then a global one: anything with a ``hold(weight)`` async context
manager. :class:`WeightedSemaphore` is one (in this process);
``clonegate.cluster.RedisSemaphore`` is another (across processes and machines).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from typing import Protocol, runtime_checkable

__all__ = [
    "Expiring",
    "HeldDeadline",
    "LeaseLostError",
    "LimitConfigError",
    "LimitError",
    "Limiter",
    "LimiterUnavailableError",
    "held_deadline",
]


class Limiter(Protocol):
    """A limit a clone holds while it runs: ``async with limiter.hold(weight):``.

    Entering waits (FIFO) and is a checkpoint; if cancelled while waiting, nothing is
    held. Leaving gives the weight back. A shared limiter may end the hold early by
    cancelling its body and raising :exc:`LeaseLostError` when it leaves.
    """

    def hold(self, n: int = 1) -> AbstractAsyncContextManager[object]: ...


@runtime_checkable
class Expiring(Protocol):
    """What a limiter's hold may yield: a permit that ends at a deadline unless its
    holder renews it (a lease). ``WeightedSemaphore``'s hold yields None: no deadline.

    ``expires_at`` is in ``time.monotonic()`` seconds (CLOCK_MONOTONIC, one clock for
    every process of a Linux machine), never later than the limit's server ends it;
    ``math.inf`` if work under it may run on (a limiter told to let holders finish).
    """

    @property
    def expires_at(self) -> float: ...

    def on_renewal(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` (sync, in the renewing task) after each renewal; returns
        what stops the calls."""
        ...


class HeldDeadline:
    """The deadline of the expiring permits one clone holds: the earliest of theirs
    (ADR 0015, "A clone never outlives its lease"). The use case's gate sets it in
    :data:`held_deadline` while a clone holds its permits; a worker process that runs
    a job for that clone ends itself when it passes without a renewal."""

    __slots__ = ("_permits",)

    def __init__(self, permits: Sequence[Expiring]) -> None:
        if not permits:
            raise ValueError("a held deadline needs at least one expiring permit")
        self._permits = tuple(permits)

    @property
    def expires_at(self) -> float:
        return min(permit.expires_at for permit in self._permits)

    def on_renewal(self, callback: Callable[[], None]) -> Callable[[], None]:
        stops = [permit.on_renewal(callback) for permit in self._permits]

        def stop() -> None:
            for each in stops:
                each()

        return stop


# Set by the gate for the body of a clone's hold; None where nothing held expires.
held_deadline: ContextVar[HeldDeadline | None] = ContextVar("clonegate_held_deadline", default=None)


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

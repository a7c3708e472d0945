"""A permit held in a :class:`~.semaphore.RedisSemaphore` (ADR 0015): its token, its
heartbeat's state, and its deadlines, on trio's clock and on CLOCK_MONOTONIC."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, final

import trio

if TYPE_CHECKING:
    from .semaphore import RedisSemaphore

__all__ = ["Lease"]

# A worker stops this long (at most a sixth of the lease) before the local deadline:
# its ending takes a moment, and a server sees a closed connection only when it next
# writes to it (ADR 0015, "A clone never outlives its lease").
STOP_MARGIN = 1.0


@final
class Lease:
    """A permit held in a :class:`RedisSemaphore`.

    ``token`` is the grant's fencing token: it increases with every grant of the
    semaphore (and across a Redis restart that lost the data, as long as the server's
    clock does), so a resource that records the highest token it has seen can refuse a
    holder whose lease ended. git servers cannot; it is exposed for resources that can.
    ``lost`` is set once the lease has ended before :meth:`release`.

    It is :class:`~clonegate._domain.limits.Expiring`: ``expires_at`` is when a worker
    process running a job for its holder ends itself (``on_renewal`` keeps it told):
    on CLOCK_MONOTONIC (``time.monotonic()``), counted, as ``deadline`` is on trio's
    clock, from before the request that granted or renewed it was sent, so never
    later than Redis ends it (while this clock runs no slower than Redis's), and
    :data:`STOP_MARGIN` (at most a sixth of the lease) earlier still.
    """

    def __init__(self, semaphore: RedisSemaphore, id: str, weight: int, token: int) -> None:
        self.semaphore = semaphore
        self.id = id
        self.weight = weight
        self.token = token
        self.lost = trio.Event()
        self.held_with_grant = -1  # the weight held in all just after the grant; -1: unknown
        self.deadline = 0.0  # trio time by which the lease surely still holds
        self._expires_at = 0.0  # the same on CLOCK_MONOTONIC (time.monotonic())
        self._on_renewal: list[Callable[[], None]] = []
        self._released = False
        self._heartbeat: trio.CancelScope | None = None
        self._cancel_on_loss: trio.CancelScope | None = None  # a hold's body

    def __repr__(self) -> str:
        return f"<Lease {self.id} weight={self.weight} token={self.token}>"

    @property
    def expires_at(self) -> float:
        """``time.monotonic()`` seconds by which work under the lease must stop; never
        (``math.inf``) for a semaphore told to let its holders finish."""
        return math.inf if self.semaphore.on_lease_lost == "finish" else self._expires_at

    def on_renewal(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback`` after each renewal (sync, in the heartbeat task); returns
        what stops the calls. Not a checkpoint."""
        self._on_renewal.append(callback)

        def stop() -> None:
            if callback in self._on_renewal:
                self._on_renewal.remove(callback)

        return stop

    def extend(self, sent: float, sent_monotonic: float, seconds: float) -> None:
        """Redis granted or renewed the lease for ``seconds`` in answer to a request
        sent at trio time ``sent`` (``sent_monotonic`` on CLOCK_MONOTONIC, read before
        it too): the server started the lease when it ran the script, after both."""
        self.deadline = sent + seconds
        self._expires_at = sent_monotonic + seconds - min(STOP_MARGIN, seconds / 6)
        for callback in list(self._on_renewal):
            callback()

    async def release(self) -> bool:
        """Give the permit back; return whether it was still held (False: lost).

        A checkpoint. Runs shielded from cancellation, for at most a few seconds:
        a cancelled task still returns its permit."""
        if self._released:
            await trio.lowlevel.checkpoint()
            return not self.lost.is_set()
        self._released = True
        ended = trio.current_time()  # the work under the lease ended here
        if self._heartbeat is not None:
            self._heartbeat.cancel()
        outcome = await self.semaphore._leave(self.id)
        # Unanswered within the clean-up bound: the work ended while the local deadline
        # still held, so it held its permit throughout; the lease's end returns it.
        if outcome != "released" and (outcome != "unknown" or self.deadline <= ended):
            self.lost.set()
        return not self.lost.is_set()

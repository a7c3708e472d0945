"""``RedisAdaptiveLimit``: one host's adaptive limit, shared by every worker (issue 43).

:class:`~clonegate._domain.adaptive.AdaptiveLimit`'s AIMD (ADR 0019) on a
:class:`RedisSemaphore`'s stored limit: a script (:data:`.host_scripts.ADAPT`) applies
each clone's signal to the limit kept in Redis and stores the new size as the
semaphore's limit, so every worker's permits follow one limit, as after
`clonegate limit --host` (ADR 0015).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, final

import trio
from trio.lowlevel import enable_ki_protection

from ..._domain.adaptive import AdaptiveLimit, Signal
from ..._domain.limits import LimiterUnavailableError
from .connection import redis_call
from .host_scripts import ADAPT, ADAPTIVE_KEYS
from .lease import Lease
from .semaphore import RedisSemaphore
from .settings import describe, ms

__all__ = ["RedisAdaptiveLimit", "RedisAdaptiveLimitStatistics", "SharedPermit"]

logger = logging.getLogger("clonegate")

PENDING_BOUND = 1024  # signals kept while Redis does not answer; increases go first
BATCH = 64  # signals per script run


@dataclass(frozen=True, slots=True)
class RedisAdaptiveLimitStatistics:
    """What Redis holds for the limit (``limit`` -1.0 before the first report) and
    this client's reporting: signals ``pending`` (not sent yet), ``dropped`` (the
    queue was full: increases first, never the last decrease), ``sent``."""

    name: str
    limit: float
    size: int
    ceiling: int
    generation: int
    increases: int
    decreases: int
    ignored_signals: int
    pending: int
    dropped: int
    sent: int


@final
class SharedPermit:
    """What :meth:`RedisAdaptiveLimit.hold` yields: the :class:`Lease`'s deadline
    (it is ``Expiring``) and :meth:`report`, as :class:`~clonegate._domain.adaptive.Permit`."""

    __slots__ = ("_limit", "_reported", "lease")

    def __init__(self, limit: RedisAdaptiveLimit, lease: Lease) -> None:
        self._limit = limit
        self.lease = lease
        self._reported = False

    @property
    def expires_at(self) -> float:
        return self.lease.expires_at

    def on_renewal(self, callback: Callable[[], None]) -> Callable[[], None]:
        return self.lease.on_renewal(callback)

    @enable_ki_protection
    def report(self, signal: Signal) -> None:
        """Tell the shared limit how the clone ended; a second report is ignored. Not
        a checkpoint: the signal goes to Redis from the limit's own task."""
        if self._reported:
            return
        self._reported = True
        self._limit._queue(Signal(signal), self.lease.token, self.lease.held_with_grant)


@final
class RedisAdaptiveLimit:
    """AIMD on ``semaphore``'s limit in Redis, shared by every client of that name.

    The rules are :class:`AdaptiveLimit`'s, with its defaults (``increase``,
    ``decrease``, ``reset_burst``: None takes them): an increase of ``increase / limit``
    per ``success`` of a permit granted while at least half the limit was held, up to
    the ceiling; a decrease to ``limit * decrease`` (never below 1) on ``throttled``,
    ``unavailable_retry_after`` or ``reset_burst`` resets in a row, once per
    generation: a permit granted before the last decrease (its fencing token is not
    above the grant counter the decrease read) changes nothing.

    The ceiling is the limit Redis holds for ``semaphore`` (the first client's, as
    for any :class:`RedisSemaphore`; `clonegate limit --host` sets a new one, from
    which the limit starts again); a client that asked for another one logs one
    warning. :meth:`hold` is the ``Limiter`` port; its permit's ``report`` is sync: the
    signal is queued and a task in the semaphore's nursery sends it (in batches,
    with the client's patience; while Redis does not answer, signals wait, at most
    :data:`PENDING_BOUND`, increases dropped first). A lost report is never a
    repository's failure.
    """

    def __init__(
        self,
        semaphore: RedisSemaphore,
        *,
        increase: float | None = None,
        decrease: float | None = None,
        reset_burst: int | None = None,
    ) -> None:
        # AdaptiveLimit holds the defaults (written once) and checks the values.
        default = AdaptiveLimit(semaphore.limit)
        rules = AdaptiveLimit(
            semaphore.limit,
            increase=default.increase if increase is None else increase,
            decrease=default.decrease if decrease is None else decrease,
            reset_burst=default.reset_burst if reset_burst is None else reset_burst,
        )
        self.semaphore = semaphore
        self.name = semaphore.name
        self.ceiling = semaphore.limit  # asked; Redis's may differ
        self.increase, self.decrease, self.reset_burst = (
            rules.increase, rules.decrease, rules.reset_burst
        )  # fmt: skip
        # The stored limit moves with the adaptation: the semaphore must not read that
        # as another client's setting; this class warns about the ceiling instead.
        semaphore._warned = True
        self._warned = False
        self._keys = [*semaphore._keys, *(f"{semaphore._keys[0]}:{k}" for k in ADAPTIVE_KEYS)]
        self._script = semaphore._redis.register_script(ADAPT)
        self._pending: deque[tuple[Signal, int, int]] = deque()
        self._wake = trio.Event()
        self._sent_all = trio.Event()  # set while nothing waits to be sent
        self._sent_all.set()
        self._batches = itertools.count()
        self._sender_started = False
        self._dropped = 0
        self._sent = 0

    def __repr__(self) -> str:
        return f"<RedisAdaptiveLimit {self.name!r} ceiling={self.ceiling}>"

    @asynccontextmanager
    async def hold(self, n: int = 1) -> AsyncIterator[SharedPermit]:
        """Hold ``n`` permits of the semaphore (its :meth:`~RedisSemaphore.hold`);
        yields a :class:`SharedPermit`. A permit left unreported counts as ``other``."""
        if not self._sender_started:
            self._sender_started = True
            self.semaphore._nursery_or_raise().start_soon(self._send_signals)
        async with self.semaphore.hold(n) as lease:
            permit = SharedPermit(self, lease)
            try:
                yield permit
            finally:
                permit.report(Signal.OTHER)

    async def flush(self) -> None:
        """Return once every signal reported so far has been applied in Redis. A
        checkpoint. Waits as long as Redis does not answer: bound it."""
        await trio.lowlevel.checkpoint()
        await self._sent_all.wait()

    async def statistics(self) -> RedisAdaptiveLimitStatistics:
        """What Redis holds (read with the client's patience) and this client's queue."""
        where = f"the adaptive limit {self.name!r}"
        found = await self.semaphore.patience.call(
            lambda: redis_call(where, self.semaphore._redis.hgetall(self._keys[9]))
        )

        def number(field: str, default: str = "-1") -> float:
            return float(found.get(field, default))

        return RedisAdaptiveLimitStatistics(
            name=self.name,
            limit=number("limit"),
            size=int(number("size")),
            ceiling=int(number("ceiling")),
            generation=int(number("generation", "0")),
            increases=int(number("increases", "0")),
            decreases=int(number("decreases", "0")),
            ignored_signals=int(number("ignored", "0")),
            pending=len(self._pending),
            dropped=self._dropped,
            sent=self._sent,
        )

    # -- internals

    def _queue(self, signal: Signal, token: int, held: int) -> None:
        if signal is Signal.OTHER:
            return  # says nothing about the host: nothing to send
        if len(self._pending) >= PENDING_BOUND:
            self._drop_one()
        self._pending.append((signal, token, held))
        self._wake.set()
        if self._sent_all.is_set():
            self._sent_all = trio.Event()

    def _drop_one(self) -> None:
        # An increase matters less than a decrease, and one decrease per generation
        # is all that counts: the oldest success goes first, then the oldest reset,
        # then the oldest decrease (a newer one stays).
        for kind in (Signal.SUCCESS, Signal.RESET):
            for i, (signal, _, _) in enumerate(self._pending):
                if signal is kind:
                    del self._pending[i]
                    self._dropped += 1
                    return
        self._pending.popleft()
        self._dropped += 1

    async def _send_signals(self) -> None:
        """The reporting task: sends what is queued, a batch at a time, until cancelled.
        A batch that Redis did not answer is sent again, with the same number (the
        script applies a batch once), after the patience ran out, a cap later."""
        batch: list[tuple[Signal, int, int]] = []
        number = -1
        while True:
            if not batch:
                while not self._pending:
                    await self._wake.wait()
                    self._wake = trio.Event()
                batch = [self._pending.popleft() for _ in range(min(BATCH, len(self._pending)))]
                number = next(self._batches)
            try:
                reply = await self._call(number, batch)
            except LimiterUnavailableError as exc:
                logger.warning(
                    "could not report %d signal(s) to the adaptive limit %r (%s): kept, "
                    "sent when Redis answers", len(batch), self.name, exc,
                )  # fmt: skip
                await trio.sleep(self.semaphore.patience.cap)
                continue
            self._sent += len(batch)
            batch = []
            self._follow(reply)
            if not self._pending:
                self._sent_all.set()

    async def _call(self, number: int, batch: list[tuple[Signal, int, int]]) -> Any:
        semaphore = self.semaphore
        args: list[str | int | float] = [
            semaphore._client_id, number, self.ceiling, self.increase, self.decrease,
            self.reset_burst, ms(semaphore.lease),
        ]  # fmt: skip
        for signal, token, held in batch:
            args += [signal.value, token, held]
        where = f"the adaptive limit {self.name!r}"
        return await semaphore.patience.call(
            lambda: redis_call(where, self._script(keys=self._keys, args=args))
        )

    def _follow(self, reply: list[Any]) -> None:
        size, ceiling = int(reply[0]), int(reply[2])
        if ceiling != self.ceiling and not self._warned:
            self._warned = True
            logger.warning(
                "Redis holds an adaptive ceiling of %d for %r; this client asked for %s, "
                "which Redis uses only when none is stored (`clonegate limit --host` "
                "changes it)",
                ceiling, self.name, describe(self.ceiling, ms(self.semaphore.lease)),
            )  # fmt: skip
        if size != self.semaphore.limit:
            logger.info("%r: adaptive limit now %d (%.2f)", self.name, size, float(reply[1]))
            self.semaphore.limit = size

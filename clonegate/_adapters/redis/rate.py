"""``RedisTokenBucket``: one host's request rate, shared by every worker (issue 43).

:class:`~clonegate._domain.rate.TokenBucket`'s GCRA (ADR 0019) with its one number,
the theoretical arrival time, in a Redis key (:data:`.host_scripts.TAKE`) on the
server's clock: the clients' clocks do not matter.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import socket
from dataclasses import dataclass
from typing import Any, final

import trio
from trio.lowlevel import enable_ki_protection

from ..._domain.limits import LimiterUnavailableError
from ..._domain.patience import Patience
from ..._domain.rate import Rate
from .connection import Redis, redis_call
from .host_scripts import GIVE_BACK, TAKE

__all__ = ["RedisTokenBucket", "RedisTokenBucketStatistics"]

logger = logging.getLogger("clonegate")

GIVE_BACK_BOUND = 5.0  # seconds a cancelled taker may spend giving its token back


@dataclass(frozen=True, slots=True)
class RedisTokenBucketStatistics:
    """This client's side: ``taken`` tokens, ``tasks_waiting`` in :meth:`take`, the
    seconds ``waited`` for tokens Redis reserved, ``given_back`` by cancelled takers,
    and when the last token taken here was due, in seconds on Redis's clock (Unix
    time; 0.0 before the first): tokens of one bucket are due an interval apart."""

    taken: int
    tasks_waiting: int
    waited: float
    given_back: int
    last_due: float


@final
class RedisTokenBucket:
    """At most ``size`` requests at once, then one per ``rate.interval`` seconds, for
    every client that opens a bucket of this ``name`` (:class:`TokenBucket`'s rules).

    The rate and size are configuration in Redis, as a semaphore's limit: the first
    client's are stored and every other follows them (one warning if it asked for
    others); they are forgotten when the key expires, once the bucket is full again.
    :meth:`take` asks Redis for the next token, which Redis reserves and says when it
    is due, and sleeps until then: FIFO within this process (a ``trio.Lock``), in the
    order of arrival at Redis across processes. A checkpoint on every path; a taker
    cancelled while it waits gives its token back if nobody took one after it.
    Redis unavailable past the ``patience`` is :exc:`LimiterUnavailableError` (an
    infrastructure error, never the repository's).
    """

    parse_rate = staticmethod(Rate.parse)  # "30/min" -> Rate; ValueError saying why

    def __init__(
        self,
        redis: Redis[str],
        name: str,
        rate: Rate | str,
        *,
        size: int = 1,
        prefix: str = "clonegate:rate",
        patience: Patience | None = None,
    ) -> None:
        self.rate = rate if isinstance(rate, Rate) else Rate.parse(rate)
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"a token bucket holds at least 1 token, got {size!r}")
        self.name = name
        self.size = size
        self.patience = patience or Patience()
        self._interval_us = max(1, round(self.rate.interval * 1_000_000))
        self._key = f"{{{prefix}:{name}}}"
        self._redis = redis
        self._take = redis.register_script(TAKE)
        self._give_back = redis.register_script(GIVE_BACK)
        self._client = f"{socket.gethostname()}:{os.getpid()}:{random.getrandbits(32):08x}"
        self._ids = itertools.count()
        self._lock = trio.Lock()
        self._warned = False
        self._taken = 0
        self._waited = 0.0
        self._given_back = 0
        self._last_due = 0.0

    def __repr__(self) -> str:
        return f"<RedisTokenBucket {self.name!r} {self.rate} size={self.size}>"

    def statistics(self) -> RedisTokenBucketStatistics:
        """This client's figures. Not a checkpoint."""
        return RedisTokenBucketStatistics(
            taken=self._taken,
            tasks_waiting=self._lock.statistics().tasks_waiting + self._lock.locked(),
            waited=self._waited,
            given_back=self._given_back,
            last_due=self._last_due,
        )

    @enable_ki_protection
    async def take(self) -> None:
        """Wait for a token, FIFO in this process, and take it. Always a checkpoint."""
        async with self._lock:  # acquiring a trio.Lock is a checkpoint on every path
            id = f"{self._client}:{next(self._ids)}"
            try:
                reply = await self._call(self._take, self._interval_us, self.size, self._client, id)
                self._follow(int(reply[2]), int(reply[3]))
                wait, started = int(reply[0]) / 1_000_000, trio.current_time()
                # From the reply's arrival: never before the token is due on Redis's
                # clock (the reply took some time to come).
                await trio.sleep(wait)
            except BaseException:
                await self._return(id)
                raise
            self._waited += trio.current_time() - started
            self._taken += 1
            self._last_due = int(reply[4]) / 1_000_000

    async def _return(self, id: str) -> None:
        # Shielded and bounded: a cancelled taker's token goes back unless Redis is gone.
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + GIVE_BACK_BOUND
            try:
                if (await self._call(self._give_back, self._client, id))[0] == 1:
                    self._given_back += 1
            except LimiterUnavailableError as exc:
                logger.debug("could not give a token of %r back: %s", self.name, exc)

    async def _call(self, script: Any, *args: str | int) -> Any:
        where = f"the host rate {self.name!r}"
        return await self.patience.call(
            lambda: redis_call(where, script(keys=[self._key], args=list(args)))
        )

    def _follow(self, interval_us: int, size: int) -> None:
        if (interval_us, size) != (self._interval_us, self.size) and not self._warned:
            self._warned = True
            logger.warning(
                "Redis holds a rate of one request per %g s (burst %d) for %r; this client "
                "asked for %s (burst %d), which Redis uses only when none is stored",
                interval_us / 1_000_000, size, self.name, self.rate, self.size,
            )  # fmt: skip

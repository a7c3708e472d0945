"""``RedisSemaphore``: the weighted FIFO semaphore across processes and machines (ADR 0015).

The queue and the permits live in Redis and change only through the Lua scripts of
:mod:`.scripts`, on the server's clock. A process here keeps, per permit it holds, a
heartbeat and a local deadline; per request it waits for, a poll loop.
"""

from __future__ import annotations

import itertools
import logging
import os
import random
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Literal, Self

import trio

from ..._domain.checks import positive_seconds
from ..._domain.limits import LeaseLostError, LimiterUnavailableError
from ..._domain.patience import Patience
from ..._domain.semaphore import _checked
from .cluster_settings import CLUSTER_DEFAULTS
from .connection import Redis, redis_call
from .lease import Lease
from .scripts import ACQUIRE, CONFIGURE, HEARTBEAT, KEY_NAMES, LEAVE, RESET, STATISTICS
from .settings import (
    RedisHolder,
    RedisSemaphoreStatistics,
    RedisWaiter,
    describe,
    ms,
    setting,
    statistics_of,
)

__all__ = ["Lease", "RedisHolder", "RedisSemaphore", "RedisSemaphoreStatistics", "RedisWaiter"]

logger = logging.getLogger("clonegate")

# Release and withdrawal run shielded, but never longer than this: an unreachable
# Redis must not hang a cancelled task. The lease reclaims what they could not return.
CLEANUP_BOUND = 5.0
FIRST_POLL = 0.01


class RedisSemaphore:
    """A FIFO weighted semaphore whose state is in Redis, shared by every process that
    opens one with the same ``name`` (:class:`WeightedSemaphore`'s rules, ADR 0015).

    Args:
      redis: a connected coredis client (``clonegate.cluster.open_redis``) with
        ``decode_responses=True``.
      name: the semaphore's name; its keys are ``{prefix:name}:*``.
      limit: permits in all, if Redis has none stored for ``name``: the limit and the
        lease are configuration in Redis. The first client to acquire stores its own;
        every other follows what is stored, and one that asked for other values logs
        one warning naming both. :meth:`configure` changes them for everyone, live;
        :meth:`reset` forgets them. ``self.limit`` and ``self.lease`` are the values
        last seen in Redis.
      lease: seconds a grant lasts without a heartbeat; holders heartbeat every
        ``lease / 3``, waiters poll at least that often (the stored lease once
        seen). A crashed holder's permit returns at most one lease after its last
        heartbeat.
      on_lease_lost: ``"cancel"`` (default) cancels the body of :meth:`hold` when its
        lease is lost and raises :exc:`LeaseLostError` as it leaves; ``"finish"`` lets
        it finish (then more than ``limit`` may run for a while).
      patience: how long requests ride out an unavailable Redis (the client's one,
        shared; by default its own). A holder's heartbeat only until its local deadline.

    Use it inside ``async with semaphore:``, or give it a ``nursery``: there run the
    holders' heartbeats and a pub/sub listener that wakes waiters when permits are
    released (only a hint: they poll regardless, with capped exponential backoff and
    jitter).

    :meth:`acquire`, :meth:`try_acquire`, :meth:`statistics` and
    :meth:`configure` are checkpoints. Weights are ``int`` >= 0 as in
    :class:`WeightedSemaphore`; one heavier than the limit waits until a new limit
    makes it fit, blocking nobody.
    """

    def __init__(
        self,
        redis: Redis[str],
        name: str,
        limit: int,
        *,
        lease: float = CLUSTER_DEFAULTS.lease,
        on_lease_lost: Literal["cancel", "finish"] = "cancel",
        prefix: str = "clonegate:sem",
        nursery: trio.Nursery | None = None,
        patience: Patience | None = None,
    ) -> None:
        if on_lease_lost not in ("cancel", "finish"):
            raise ValueError(f"on_lease_lost must be 'cancel' or 'finish', got {on_lease_lost!r}")
        self.name = name
        self.limit = _checked(limit, "limit")
        self.lease = positive_seconds("lease", lease)
        # What this client asks for: stored only if Redis has nothing stored.
        self._asked = (self.limit, ms(self.lease))
        self._warned = False
        self.on_lease_lost = on_lease_lost
        self._redis = redis
        self.patience = patience or Patience()
        tag = f"{{{prefix}:{name}}}"
        self._keys = [f"{tag}:{key}" for key in KEY_NAMES]
        self._channel = f"{self._keys[0]}:hint"
        self._scripts = {
            "acquire": redis.register_script(ACQUIRE),
            "leave": redis.register_script(LEAVE),
            "heartbeat": redis.register_script(HEARTBEAT),
            "configure": redis.register_script(CONFIGURE),
            "reset": redis.register_script(RESET),
            "statistics": redis.register_script(STATISTICS),
        }
        self._client_id = f"{socket.gethostname()}:{os.getpid()}:{random.getrandbits(32):08x}"
        self._ids = itertools.count()
        self._released_hint = trio.Event()
        # Given a nursery, the semaphore runs its tasks there, with no `async with`
        # of its own (many per-host semaphores can share one).
        self._nursery: trio.Nursery | None = nursery
        self._listening = False

    def __repr__(self) -> str:
        return f"<RedisSemaphore {self.name!r} limit={self.limit} lease={self.lease:g}s>"

    async def __aenter__(self) -> Self:
        self._nursery_manager = trio.open_nursery()
        self._nursery = await self._nursery_manager.__aenter__()
        self._listening = False
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._nursery is not None
        self._nursery.cancel_scope.cancel()
        self._nursery = None
        return await self._nursery_manager.__aexit__(exc_type, exc, tb)

    @asynccontextmanager
    async def hold(self, n: int = 1) -> AsyncIterator[Lease]:
        """Hold ``n`` permits for the body; yields the :class:`Lease`.

        Entering waits in FIFO order (see :meth:`acquire`). If the lease is lost while
        the body runs and ``on_lease_lost`` is ``"cancel"``, the body is cancelled and
        :exc:`LeaseLostError` is raised as it leaves. Leaving releases (shielded).
        """
        lease = await self.acquire(n)
        try:
            with trio.CancelScope() as scope:
                if self.on_lease_lost == "cancel":
                    lease._cancel_on_loss = scope
                    if lease.lost.is_set():  # lost before the body even started
                        scope.cancel()
                yield lease
        finally:
            lease._cancel_on_loss = None
            held = await lease.release()
        if scope.cancelled_caught or (not held and self.on_lease_lost == "cancel"):
            raise LeaseLostError(
                f"the lease on {self.name!r} was lost while held: Redis unreachable or "
                f"restarted for longer than {self.lease:g} s, or this process paused"
            )
        if not held:
            logger.warning("the lease on %r ended before its holder finished", self.name)

    async def acquire(self, n: int = 1) -> Lease:
        """Wait until ``n`` permits are granted to this caller, in FIFO order; a checkpoint.

        Polls Redis with capped exponential backoff and jitter (each poll keeps its
        place: a waiter that stops polling for a lease, in an outage, queues again at
        the tail). If cancelled, or if Redis fails past the patience, while waiting, the
        request leaves the queue, and a permit granted meanwhile is returned (shielded).
        """
        _checked(n, "n")
        nursery = self._nursery_or_raise()
        await trio.lowlevel.checkpoint_if_cancelled()
        id = self._new_id()
        delay = FIRST_POLL
        try:
            while True:
                reply, sent = await self._call_timed("acquire", id, n, *self._asked, "wait")
                if reply[0] == "granted":
                    lease = await self._fresh(self._granted(id, reply, sent))
                    break
                if reply[0] == "waiting":
                    self._follow(int(reply[3]), int(reply[4]))
                # The hint comes on release; the poll, whatever happens, within the cap.
                hint = self._released_hint
                with trio.move_on_after(delay * (1 - 0.5 * random.random())):
                    await hint.wait()
                delay = min(delay * 2, self.lease / 3, 1.0)
        except BaseException:
            await self._leave(id)
            raise
        nursery.start_soon(self._heartbeat, lease)
        return lease

    async def try_acquire(self, n: int = 1) -> Lease | None:
        """Take ``n`` permits if that needs no waiting: none queued ahead, enough free.
        Returns the :class:`Lease`, or None. A checkpoint (it asks Redis)."""
        _checked(n, "n")
        nursery = self._nursery_or_raise()
        await trio.lowlevel.checkpoint_if_cancelled()
        id = self._new_id()
        try:
            reply, sent = await self._call_timed("acquire", id, n, *self._asked, "try")
        except BaseException:
            await self._leave(id)
            raise
        if reply[0] != "granted":
            return None
        try:
            lease = await self._fresh(self._granted(id, reply, sent))
        except BaseException:
            await self._leave(id)
            raise
        nursery.start_soon(self._heartbeat, lease)
        return lease

    async def statistics(self) -> RedisSemaphoreStatistics:
        """Holders (weight, token, lease left) and waiters in order, read in one script."""
        return statistics_of(self.name, await self._call("statistics"))

    async def configure(self, limit: int, lease: float | None = None) -> tuple[int, float]:
        """The administrator's change of the stored limit (and lease; None keeps the
        stored one) for every client, live: holders keep their permits, waiters are
        granted under the new limit in arrival order (a higher one grants those it
        fits at once), nobody fails. Returns the previous (limit, lease); (-1, -1.0)
        if none was stored. A checkpoint."""
        limit = _checked(limit, "limit")
        asked = self.lease if lease is None else positive_seconds("lease", lease)
        mode = "keep" if lease is None else "set"
        reply = await self._call("configure", self._client_id, limit, ms(asked), mode)
        self.limit, self.lease = int(reply[2]), int(reply[3]) / 1000
        return setting(reply[0], reply[1])

    async def reset(self) -> tuple[int, float]:
        """Forget the stored limit and lease: the next acquisition, by any client,
        stores its own. Holders keep their permits; waiters are granted once a
        limit is stored again. Returns the previous (limit, lease), as
        :meth:`configure`. A checkpoint."""
        reply = await self._call("reset", self._client_id)
        return setting(reply[0], reply[1])

    # -- internals

    def _nursery_or_raise(self) -> trio.Nursery:
        if self._nursery is None:
            raise RuntimeError(
                f"use {self!r} inside 'async with', or give it a nursery= (it runs the "
                "holders' heartbeats)"
            )
        if not self._listening:
            self._listening = True
            self._nursery.start_soon(self._listen_for_releases)
        return self._nursery

    def _new_id(self) -> str:
        return f"{self._client_id}:{next(self._ids)}"

    def _granted(self, id: str, reply: list[Any], sent: tuple[float, float]) -> Lease:
        self._follow(int(reply[4]), int(reply[5]))
        lease = Lease(self, id, int(reply[3]), int(reply[1]))
        lease.held_with_grant = int(reply[6])  # how busy the limit was (an adaptive one asks)
        # The server started the lease when it ran the script, after `sent`: counting
        # from `sent` errs on the safe side.
        lease.extend(*sent, int(reply[2]) / 1000)
        return lease

    async def _fresh(self, lease: Lease) -> Lease:
        """``lease``, renewed at once if the reply that granted it took longer than the
        lease (a paused Redis, a stalled network): fresh on the server, it is stale here,
        its local deadline counted from the request's sending. Raises
        :exc:`LeaseLostError` if Redis ended it meanwhile."""
        if lease.deadline > trio.current_time():
            await trio.lowlevel.checkpoint()
            return lease
        reply, sent = await self._call_timed("heartbeat", lease.id, ms(self.lease))
        if reply[0] != "granted":
            raise LeaseLostError(f"the lease on {self.name!r} ended before its grant arrived")
        self._follow(int(reply[4]), int(reply[5]))
        lease.extend(*sent, int(reply[2]) / 1000)
        return lease

    def _follow(self, limit: int, lease_ms: int) -> None:
        """Take the limit and lease Redis holds (-1: none, after a reset) as this
        client's; warn, once, if they are not what it asked for, then note changes."""
        if limit < 0 or lease_ms < 0 or (limit, lease_ms / 1000) == (self.limit, self.lease):
            return
        if (limit, lease_ms) != self._asked and not self._warned:
            self._warned = True
            logger.warning(
                "Redis holds %s for %r; this client asked for %s, which Redis uses "
                "only when none is stored (`clonegate limit` changes it)",
                describe(limit, lease_ms), self.name, describe(*self._asked),
            )  # fmt: skip
        else:
            logger.info("Redis now holds %s for %r", describe(limit, lease_ms), self.name)
        self.limit, self.lease = limit, lease_ms / 1000

    async def _call(self, script: str, *args: str | int) -> Any:
        return (await self._call_timed(script, *args))[0]

    async def _call_timed(self, script: str, *args: str | int) -> tuple[Any, tuple[float, float]]:
        """The reply, and the clocks read before the attempt that got it (:func:`_now`):
        a lease granted or renewed after an outage counts from that attempt, not the
        first, or it would end before it began."""
        # Every script is idempotent per acquisition id: sending one again is safe.
        where, send = f"the cluster limit {self.name!r}", self._scripts[script]
        sent = _now()

        async def attempt() -> Any:
            nonlocal sent
            sent = _now()
            return await redis_call(where, send(keys=self._keys, args=list(args)))

        reply = await self.patience.call(attempt)
        return reply, sent

    async def _leave(self, id: str) -> str:
        # Shielded: a cancelled waiter must leave the queue (or return a permit granted
        # while its cancellation raced the grant); bounded: Redis may be gone, and then
        # the lease (or the waiter's poll deadline) reclaims it.
        with trio.CancelScope(shield=True) as scope:
            scope.deadline = trio.current_time() + CLEANUP_BOUND
            try:
                reply = await self._call("leave", id)
                return str(reply[0])
            except LimiterUnavailableError as exc:
                logger.warning("could not leave %r (%s): the lease reclaims it", self.name, exc)
        return "unknown"

    async def _heartbeat(self, lease: Lease) -> None:
        with trio.CancelScope() as scope:
            lease._heartbeat = scope
            # Beat a third of a lease after the last confirmed beat.
            while not lease._released:
                if not await self._renew(lease, lease.deadline - 2 * self.lease / 3):
                    break
            if lease._released:  # released before this task first ran
                return
            logger.warning("lease %s on %r lost", lease.id, self.name)
            lease.lost.set()
            if lease._cancel_on_loss is not None:
                lease._cancel_on_loss.cancel()

    async def _renew(self, lease: Lease, at: float) -> bool:
        """Extend ``lease`` at trio time ``at``; retry failures (patience) until its local
        deadline, past which another client may hold the permit. False: lost."""
        await trio.sleep_until(at)
        with trio.move_on_at(lease.deadline):
            try:
                # Timed from the attempt that was answered: never after the server's run.
                reply, sent = await self._call_timed("heartbeat", lease.id, ms(self.lease))
            except LimiterUnavailableError:
                return False  # no more patience, or refused: the local deadline is moot
            if reply[0] != "granted":
                return False  # Redis no longer has it, whatever the local deadline
            self._follow(int(reply[4]), int(reply[5]))
            lease.extend(*sent, int(reply[2]) / 1000)  # and tells its workers
            return True
        return False

    async def _listen_for_releases(self) -> None:
        # Only a latency hint (waiters poll regardless): made again if its connection dies.
        while True:
            try:
                async with self._redis.pubsub(channels=[self._channel]) as pubsub:
                    async for _ in pubsub:
                        self._released_hint.set()
                        self._released_hint = trio.Event()
            except Exception as exc:
                logger.debug("release hints for %r unavailable: %s", self.name, exc)
            except BaseExceptionGroup as group:
                # Cancelled (a signal, the end of a run), coredis's clean-up may find the
                # client's connections closed by the same cancellation: only it counts.
                if group.subgroup(trio.Cancelled) is None:
                    raise
                await trio.lowlevel.checkpoint()  # raises the cancellation alone
                raise
            await trio.sleep(self.patience.cap)


def _now() -> tuple[float, float]:
    """Trio's time and CLOCK_MONOTONIC's, read before a request that may grant or
    renew a lease: its deadline on each clock counts from there."""
    return trio.current_time(), time.monotonic()

"""The clone gate: the use case's weighted semaphores, with live bookkeeping (seeds 000,
003): one counts clones, with a memory budget a second one counts MiB (ADR 0014), and
shared limits per host and for a whole cluster may follow (ADR 0015)."""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass

import trio

from .._domain.limits import Expiring, HeldDeadline, Limiter, held_deadline
from .._domain.semaphore import WeightedSemaphore
from .._domain.urls import redact
from .._domain.work_clock import waiting_for_slot
from .estimates import MemoryEstimates, MiB

__all__ = ["CloneGate", "CloneGateStatistics", "GateEntry", "MemoryLease"]

logger = logging.getLogger("clonegate")


@dataclass(frozen=True, slots=True)
class GateEntry:
    url: str  # redacted
    index: int
    weight: int
    seconds: float  # waited so far (queued) or running so far (active)
    memory: int = 0  # MiB reserved in the memory budget (0 without one)


@dataclass(frozen=True, slots=True)
class CloneGateStatistics:
    """A snapshot. Invariants: ``acquired == released + len(active)``; with a memory
    budget, ``memory_held`` is the sum of the active entries' ``memory`` (queued ones
    hold none) and never more than ``memory_budget``, and every admission fitted
    ``memory_size`` when it was made.
    """

    size: int
    held: int
    queued: tuple[GateEntry, ...]
    active: tuple[GateEntry, ...]
    acquired: int
    released: int
    done: int  # clones that finished with a clone in hand
    failed: int  # clones that raised (error, timeout, cancellation)
    memory_budget: int | None = None  # MiB configured; None without a budget
    memory_size: int | None = None  # MiB the gate admits now (the controller moves it)
    memory_held: int = 0  # MiB reserved by running clones (the only ones that hold any)
    memory_estimate: int | None = None  # MiB a clone from a host not seen yet reserves


class MemoryLease:
    """The MiB of the memory budget one clone holds (0 without a budget); its VCS may
    raise them as it learns what the clone needs (:meth:`CloneGate.need`)."""

    __slots__ = ("memory", "ticket")

    def __init__(self, ticket: int, memory: int) -> None:
        self.ticket, self.memory = ticket, memory


class CloneGate:
    """A :class:`WeightedSemaphore` that also knows who waits and who clones, since when."""

    # A stored figure is one indexed read; more than this, and the store is stuck.
    HISTORY_SECONDS = 2.0

    def __init__(
        self,
        size: int,
        estimates: MemoryEstimates | None = None,
        *,
        host_limiter: Callable[[str], Limiter] | None = None,
        global_limiter: Limiter | None = None,
        history: Callable[[str], Awaitable[int | None]] | None = None,
    ) -> None:
        self._semaphore = WeightedSemaphore(size)
        # With a budget: bytes a repository's clone used in an earlier run, by key.
        self._history = history
        self._host_limiter = host_limiter
        self._host_limiters: dict[str, Limiter] = {}
        self._global_limiter = global_limiter
        # The memory budget, in MiB: its size starts at the estimates' ceiling.
        self.estimates = estimates
        self.memory = WeightedSemaphore(estimates.ceiling) if estimates is not None else None
        self._admission = trio.Lock()  # FIFO: clones reach the memory check in order
        self._changed = trio.Event()
        self._head = 0  # MiB the clone at the head of the memory queue wants
        self._growing: dict[int, int] = {}  # MiB that running clones wait for, by ticket
        # Keyed by a ticket per slot() call: the same index may be in flight twice
        # when a library user calls execute() concurrently.
        self._queued: dict[int, tuple[str, int, int, int, float]] = {}
        self._active: dict[int, tuple[str, int, int, int, float]] = {}
        self._tickets = itertools.count()
        self._acquired = self._released = self._done = self._failed = 0

    @property
    def size(self) -> int:
        return self._semaphore.size

    @asynccontextmanager
    async def slot(
        self, index: int, url: str, weight: int, host: str = "", key: str = ""
    ) -> AsyncIterator[MemoryLease]:
        """Hold ``weight`` clone tokens, and with a budget the MiB expected for ``host``
        (or for the repository ``key``, if an earlier run measured its clone), for the
        body: FIFO, cancellable while waiting, nothing held if cancelled.

        With a budget, clones pass a FIFO lock one at a time, and the one at the head
        estimates its memory when it gets there and again whenever something changes
        (a clone ends, an estimate learns, the controller resizes): an estimate made
        when the clone was queued would miss what the clones ahead of it taught.
        The memory comes last, after the clone token and the shared limits (per
        host, then global), if any: MiB held by clones that wait for a token or a
        permit would keep the running ones from growing (:meth:`need`), and those
        hold what they wait for. The entry counts as queued until it holds all.

        Yields the clone's :class:`MemoryLease`: :meth:`need` raises it.
        """
        ticket = next(self._tickets)
        self._queued[ticket] = (url, index, weight, 0, trio.current_time())
        memory = 0
        try:
            await self._semaphore.acquire(weight)
        except BaseException:
            del self._queued[ticket]
            raise
        try:
            # The shared limits come next, in one fixed order (host, then global) for
            # every client, so two clients never wait for each other's permits (seed
            # 003's acquire_all); a host permit held while waiting for a global one
            # keeps out only clones of the same host. Released in reverse order.
            async with AsyncExitStack() as shared:
                expiring: list[Expiring] = []
                try:
                    for limiter in self._shared_limiters(host):
                        # Shared with other machines: the wait (their clones, an outage
                        # ridden out) is no repository's own time (issue 39).
                        with waiting_for_slot():
                            permit = await shared.enter_async_context(limiter.hold(weight))
                        if isinstance(permit, Expiring):
                            expiring.append(permit)
                    # The memory last: only running clones hold any, so a clone that
                    # waits to grow never waits for one that waits for a permit.
                    if self.memory is not None:
                        memory = await self._reserve(host, key)
                finally:
                    del self._queued[ticket]
                self._acquired += 1
                self._active[ticket] = (url, index, weight, memory, trio.current_time())
                lease = MemoryLease(ticket, memory)
                # The worker processes of this clone end themselves at its permits'
                # deadline if no renewal comes (ADR 0015): a paused process cannot
                # renew, nor stop them.
                deadline = held_deadline.set(HeldDeadline(expiring) if expiring else None)
                succeeded = False
                try:
                    yield lease
                    succeeded = True
                finally:
                    held_deadline.reset(deadline)
                    memory = lease.memory  # what it holds now, raised or not
                    del self._active[ticket]
                    self._released += 1
                    if succeeded:
                        self._done += 1
                    else:
                        self._failed += 1
        finally:
            self._semaphore.release(weight)
            self._release_memory(memory)

    def weight_of(self, weigh: Callable[[str], int], url: str) -> int:
        """``weigh(url)``, checked: an int >= 0 that fits the gate; else ValueError."""
        try:
            weight = weigh(url)
        except Exception as exc:
            raise ValueError(f"the clone weight function failed: {redact(repr(exc))}") from None
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise ValueError(f"clone weight must be an int >= 0, got {weight!r}")
        if weight > self.size:
            # Go would let it wait until its deadline: nothing can ever make it fit.
            raise ValueError(f"clone weight {weight} exceeds the clone limit {self.size}")
        return weight

    def _shared_limiters(self, host: str) -> list[Limiter]:
        limiters = []
        if self._host_limiter is not None:
            if host not in self._host_limiters:
                self._host_limiters[host] = self._host_limiter(host)
            limiters.append(self._host_limiters[host])
        if self._global_limiter is not None:
            limiters.append(self._global_limiter)
        return limiters

    async def _known(self, key: str) -> int | None:
        """Bytes an earlier run's clone of ``key`` used, or None. Asked with every
        admission waiting behind it, so bounded: a busy or broken store costs only
        the better first estimate, and this run learns its own as without one."""
        if self._history is None or not key:
            await trio.lowlevel.checkpoint()
            return None
        with trio.move_on_after(self.HISTORY_SECONDS):
            try:
                return await self._history(key)
            except Exception as exc:  # a store of the user's may raise anything
                logger.warning("no stored clone memory for %s: %s", key, redact(str(exc)))
                return None
        logger.warning("no stored clone memory for %s within %g s", key, self.HISTORY_SECONDS)
        return None

    async def _reserve(self, host: str, key: str) -> int:
        assert self.memory is not None
        assert self.estimates is not None
        async with self._admission:
            # Asked in the queue's order: a lookup outside it would let the clones
            # whose answers came first overtake the others.
            known = await self._known(key)
            while True:
                self._head = self.estimates.estimate(host, known)
                # Running clones that wait for more go first: they hold a clone token.
                if not self._growing and self.memory.try_acquire(self._head):
                    memory, self._head = self._head, 0
                    return memory
                await self._changed.wait()

    async def need(self, lease: MemoryLease, nbytes: int) -> None:
        """Hold at least ``nbytes`` for ``lease``'s clone (its whole need from now on),
        at most the budget; without a budget, nothing. Always a checkpoint.

        What is free is taken at once. Otherwise the clone waits, in FIFO order with
        the other running clones that wait (ahead of clones not admitted yet). The
        first to wait keeps what it holds; those behind it give theirs back and wait
        for their whole figure: two waiters that both held could each wait for what
        the other holds, while the head can only wait for clones that run, which end
        or join the queue. The pages a clone behind the head already uses go
        uncounted while it waits (what it held: its opening or first-pass figure).
        """
        memory, estimates = self.memory, self.estimates
        if memory is None or estimates is None:
            await trio.lowlevel.checkpoint()
            return
        wanted = max(1, min(estimates.ceiling, math.ceil(nbytes / MiB)))
        if wanted <= lease.memory:
            await trio.lowlevel.checkpoint()
            return
        if not self._growing and memory.try_acquire(wanted - lease.memory):
            self._hold(lease, wanted)
            await trio.lowlevel.checkpoint()
            return
        logger.debug("a clone waits for %d MiB of memory (held %d)", wanted, lease.memory)
        if self._growing:  # behind another: wait holding nothing (see the docstring)
            self._release_memory(lease.memory)
            self._hold(lease, 0)
        self._growing[lease.ticket] = wanted  # in order of arrival
        try:
            # Taken and booked in one step (no checkpoint between): the statistics
            # never show MiB held that no entry holds.
            while next(iter(self._growing)) != lease.ticket or not memory.try_acquire(
                wanted - lease.memory
            ):
                await self._changed.wait()
            self._hold(lease, wanted)
        finally:
            del self._growing[lease.ticket]
            self.changed()  # the next one waiting, or the head of the admissions

    def _hold(self, lease: MemoryLease, memory: int) -> None:
        lease.memory = memory
        url, index, weight, _, since = self._active[lease.ticket]
        self._active[lease.ticket] = (url, index, weight, memory, since)

    def _release_memory(self, memory: int) -> None:
        if self.memory is not None and memory:
            self.memory.release(memory)
            self.changed()

    def changed(self) -> None:
        """Wake the clone at the head of the memory queue to estimate and try again."""
        self._changed.set()
        self._changed = trio.Event()

    def learn(self, host: str, peak_memory: int | None, *, exceeded: bool = False) -> None:
        """A clone from ``host`` used ``peak_memory`` bytes at most (``None``: unknown);
        ``exceeded``: it failed for lack of memory."""
        if self.estimates is not None and peak_memory is not None:
            if exceeded:
                self.estimates.exceeded(host, peak_memory)
            else:
                self.estimates.record(host, peak_memory)
            self.changed()

    def heaviest(self) -> int:
        """The largest memory reservation running, wanted by a running clone or by the
        head of the queue (MiB): the controller's floor, so that the clone that waits
        can always run."""
        running = [e[3] for e in self._active.values()]
        return max(running + list(self._growing.values()) + [self._head, 1])

    async def watch_for_stuck(
        self, threshold: float, on_stuck: Callable[[GateEntry], None]
    ) -> None:
        """Call ``on_stuck(entry)`` once for each clone that holds its slot ``threshold``
        seconds or more. Runs until cancelled; checks at most once a second."""
        warned: set[tuple[int, str]] = set()
        while True:
            await trio.sleep(min(threshold / 4, 1.0))
            for entry in self.statistics().active:
                if entry.seconds >= threshold and (entry.index, entry.url) not in warned:
                    warned.add((entry.index, entry.url))
                    on_stuck(entry)

    def statistics(self) -> CloneGateStatistics:
        # Entries exist only inside trio.run; an idle gate may be asked from outside.
        now = trio.current_time() if self._queued or self._active else 0.0

        def entries(table: dict[int, tuple[str, int, int, int, float]]) -> tuple[GateEntry, ...]:
            return tuple(GateEntry(u, i, w, now - t, m) for u, i, w, m, t in table.values())

        memory, estimates = self.memory, self.estimates

        return CloneGateStatistics(
            size=self._semaphore.size,
            held=self._semaphore.held,
            queued=entries(self._queued),
            active=entries(self._active),
            acquired=self._acquired,
            released=self._released,
            done=self._done,
            failed=self._failed,
            memory_budget=estimates.ceiling if estimates is not None else None,
            memory_size=memory.size if memory is not None else None,
            memory_held=memory.held if memory is not None else 0,
            memory_estimate=estimates.estimate() if estimates is not None else None,
        )

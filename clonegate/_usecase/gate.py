"""The clone gate: the use case's weighted semaphores, with live bookkeeping (seeds 000,
003): one counts clones, with a memory budget a second one counts MiB (ADR 0014), and
shared limits per host and for a whole cluster may follow (ADR 0015), and a rate per
host (ADR 0019)."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import trio

from .._domain.adaptive import Signal, signal_of
from .._domain.errors import CloneError
from .._domain.limits import Expiring, HeldDeadline, Limiter, held_deadline
from .._domain.rate import TokenBucket
from .._domain.semaphore import WeightedSemaphore
from .._domain.urls import redact
from .._domain.work_clock import waiting_for_slot
from .admission import MemoryAdmission, MemoryLease
from .analysis_memory import AnalysisMemory
from .estimates import MemoryEstimates

__all__ = ["CloneGate", "CloneGateStatistics", "GateEntry", "MemoryLease"]


@runtime_checkable
class _Reported(Protocol):
    """A permit that learns how its clone ended (``AdaptiveLimit``'s; ADR 0019)."""

    def report(self, signal: Signal) -> object: ...


@dataclass(slots=True)
class _HeldPermits:
    """The permits one clone attempt holds that take a report, and the report."""

    permits: list[_Reported] = field(default_factory=list)

    @contextmanager
    def reporting(self) -> Iterator[None]:
        """Tell each permit how the body (the clone attempt) ended, once: returned
        (cloned) or what it raised (:func:`signal_of`). Inside the slot, so a decrease
        applies before the permit goes back and a waiter takes it. A push-back a
        permit took as its limit's own is marked on the error (``limit_probe``): the
        retry loop does not charge it (ADR 0019). Never a checkpoint."""
        try:
            yield
        except BaseException as exc:
            if self._report(signal_of(exc)) and isinstance(exc, CloneError):
                exc.limit_probe = True
            raise
        self._report(signal_of(None))

    def _report(self, signal: Signal) -> bool:
        # Every permit hears it; a report that returns no True (a cluster's) took nothing.
        took = [permit.report(signal) is True for permit in self.permits]
        return any(took)


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
    hold none) and ``memory_analyses`` (what analysis jobs hold), never more than
    ``memory_budget``, and every admission fitted ``memory_size`` when it was made.
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
    memory_held: int = 0  # MiB reserved by running clones and analysis jobs
    memory_estimate: int | None = None  # MiB a clone from a host not seen yet reserves
    memory_analyses: int = 0  # of memory_held, MiB that running analysis jobs hold


@dataclass(slots=True)
class _Counts:
    """The gate's counters: ``acquired == released + active``, ``released == done + failed``."""

    acquired: int = 0
    released: int = 0
    done: int = 0  # clones that finished with a clone in hand
    failed: int = 0  # clones that raised (error, timeout, cancellation)

    @contextmanager
    def outcome(self) -> Iterator[None]:
        """Count the body's end: done if it returned, failed if it raised."""
        succeeded = False
        try:
            yield
            succeeded = True
        finally:
            self.released += 1
            if succeeded:
                self.done += 1
            else:
                self.failed += 1


@dataclass(slots=True)
class _Holder:
    """One slot() call: queued, then active."""

    url: str  # redacted
    index: int
    weight: int
    since: float  # queued or active since
    lease: MemoryLease | None = None  # with a budget, once admitted

    def entry(self, now: float) -> GateEntry:
        memory = self.lease.memory if self.lease is not None else 0
        return GateEntry(self.url, self.index, self.weight, now - self.since, memory)


class CloneGate:
    """A :class:`WeightedSemaphore` that also knows who waits and who clones, since when;
    with a memory budget, its :class:`MemoryAdmission` admits the clones last."""

    def __init__(
        self,
        size: int,
        estimates: MemoryEstimates | None = None,
        *,
        host_limiter: Callable[[str], Limiter] | None = None,
        global_limiter: Limiter | None = None,
        history: Callable[[str], Awaitable[int | None]] | None = None,
        host_rate: Callable[[str], TokenBucket] | None = None,
    ) -> None:
        self._semaphore = WeightedSemaphore(size)
        self._host_limiter = host_limiter
        self._host_rate = host_rate
        self._host_limiters: dict[str, Limiter] = {}
        self._global_limiter = global_limiter
        # With a budget: ``history`` gives the bytes a repository's clone used in an
        # earlier run, by key.
        self.admission = MemoryAdmission(estimates, history) if estimates is not None else None
        # Analysis jobs hold their share of the same budget while they run (issue 46).
        self.analyses = AnalysisMemory(self.admission) if self.admission is not None else None
        self.keeps_workers = False  # a clone's worker may wait for the next (idle_workers)
        # Keyed by a ticket per slot() call: the same index may be in flight twice
        # when a library user calls execute() concurrently.
        self._queued: dict[int, _Holder] = {}
        self._active: dict[int, _Holder] = {}
        self._tickets = itertools.count()
        self._counts = _Counts()

    @property
    def size(self) -> int:
        return self._semaphore.size

    @property
    def memory(self) -> WeightedSemaphore | None:
        """The memory budget's semaphore, in MiB; None without a budget."""
        return self.admission.semaphore if self.admission is not None else None

    @asynccontextmanager
    async def slot(
        self,
        index: int,
        url: str,
        weight: int,
        host: str = "",
        key: str = "",
    ) -> AsyncIterator[MemoryLease]:
        """Hold ``weight`` clone tokens, and with a budget the MiB expected for ``host``
        (or for the repository ``key``, if an earlier run measured its clone), for the
        body: FIFO, cancellable while waiting, nothing held if cancelled.

        The memory comes after the clone token and the shared limits (per host, then
        global), if any: MiB held by clones that wait for a token or a permit would
        keep the running ones from growing (:meth:`need`), and those hold what they
        wait for. The host's rate token, if any, comes last of all, when nothing else
        can hold the clone back: a token taken and then held while waiting for the
        rest would let clones start together, a burst (ADR 0019). The entry counts
        as queued until it holds all.

        Yields the clone's :class:`MemoryLease` (0 MiB without a budget): :meth:`need`
        raises it. How the body ends is reported to each permit that takes a report
        (a host's adaptive limit: returned is ``success``, else :func:`signal_of` its
        exception; ADR 0019), before the permits go back.
        """
        ticket = next(self._tickets)
        holder = _Holder(url, index, weight, trio.current_time())
        self._queued[ticket] = holder
        try:
            await self._semaphore.acquire(weight)
        except BaseException:
            del self._queued[ticket]
            raise
        try:
            held = _HeldPermits()
            async with self._shared_and_memory(ticket, holder, host, key, held) as expiring:
                # The worker processes of this clone end themselves at its permits'
                # deadline if no renewal comes (ADR 0015): a paused process cannot
                # renew, nor stop them.
                deadline = held_deadline.set(HeldDeadline(expiring) if expiring else None)
                try:
                    with self._counts.outcome(), held.reporting():
                        yield holder.lease if holder.lease is not None else MemoryLease(-1, 0)
                finally:
                    held_deadline.reset(deadline)
                    del self._active[ticket]
        finally:
            self._semaphore.release(weight)
            if holder.lease is not None and self.admission is not None:
                self.admission.release(holder.lease)

    @asynccontextmanager
    async def _shared_and_memory(
        self, ticket: int, holder: _Holder, host: str, key: str, held: _HeldPermits
    ) -> AsyncIterator[list[Expiring]]:
        """The shared limits' permits, then the memory (into ``holder.lease``), then the
        host's rate token; moves the holder from queued to active once it holds all.
        Yields the expiring permits; the reported ones go into ``held``."""
        # The shared limits come in one fixed order (host, then global) for every
        # client, so two clients never wait for each other's permits (seed 003's
        # acquire_all); a host permit held while waiting for a global one keeps out
        # only clones of the same host. Released in reverse order.
        async with AsyncExitStack() as shared:
            expiring: list[Expiring] = []
            try:
                for limiter in self._shared_limiters(host):
                    # Shared with other machines: the wait (their clones, an outage
                    # ridden out) is no repository's own time (issue 39).
                    with waiting_for_slot():
                        permit = await shared.enter_async_context(limiter.hold(holder.weight))
                    if isinstance(permit, Expiring):
                        expiring.append(permit)
                    if isinstance(permit, _Reported):
                        held.permits.append(permit)
                # The memory next: only running clones hold any, so a clone that
                # waits to grow never waits for one that waits for a permit.
                if self.admission is not None:
                    holder.lease = await self.admission.admit(host, key)
                if self._host_rate is not None:
                    with waiting_for_slot():  # the host's pace, not the repository's
                        await self._host_rate(host).take()
            finally:
                del self._queued[ticket]
            self._counts.acquired += 1
            holder.since = trio.current_time()
            self._active[ticket] = holder
            yield expiring

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

    async def need(
        self, lease: MemoryLease, nbytes: int, reclaimable: int = 0, *, refusable: bool = False
    ) -> bool:
        """Hold at least ``nbytes`` for ``lease``'s clone (``reclaimable`` of them file
        pages), at most the budget; ``refusable``: False rather than wait behind
        another (:meth:`MemoryAdmission.need`); without a budget, nothing (True).
        Always a checkpoint."""
        if self.admission is None:
            await trio.lowlevel.checkpoint()
            return True
        return await self.admission.need(lease, nbytes, reclaimable, refusable=refusable)

    def changed(self) -> None:
        """Wake the clone at the head of the memory queue to estimate and try again."""
        if self.admission is not None:
            self.admission.changed()

    def learn(
        self,
        host: str,
        peak_memory: int | None,
        *,
        exceeded: bool = False,
        lease: MemoryLease | None = None,
    ) -> None:
        """A clone from ``host`` used ``peak_memory`` bytes at most (``None``: unknown);
        ``exceeded``: it failed for lack of memory; ``lease``: the one it held (its
        forecasts, which the peak corrects for the clones after it)."""
        if self.admission is not None and peak_memory is not None:
            self.admission.learn(host, peak_memory, exceeded=exceeded, lease=lease)

    def heaviest(self) -> int:
        """The controller's floor, in MiB (:meth:`MemoryAdmission.heaviest`); 1 without
        a budget."""
        return self.admission.heaviest() if self.admission is not None else 1

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
        figures = self.admission.figures() if self.admission is not None else None
        return CloneGateStatistics(
            size=self._semaphore.size,
            held=self._semaphore.held,
            queued=tuple(holder.entry(now) for holder in self._queued.values()),
            active=tuple(holder.entry(now) for holder in self._active.values()),
            acquired=self._counts.acquired,
            released=self._counts.released,
            done=self._counts.done,
            failed=self._counts.failed,
            memory_budget=figures.budget if figures is not None else None,
            memory_size=figures.size if figures is not None else None,
            memory_held=figures.held if figures is not None else 0,
            memory_estimate=figures.estimate if figures is not None else None,
            memory_analyses=figures.analyses if figures is not None else 0,
        )

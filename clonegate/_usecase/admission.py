"""Memory admission (ADR 0014): the memory budget's weighted semaphore, in MiB, with the
FIFO queue of clones that wait to start and of running clones that wait to grow."""

from __future__ import annotations

import itertools
import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import trio

from .._domain.semaphore import WeightedSemaphore
from .._domain.urls import redact
from .estimates import MemoryEstimates, MiB
from .first_passes import FirstPasses

__all__ = ["MemoryAdmission", "MemoryFigures", "MemoryLease"]

logger = logging.getLogger("clonegate")


class MemoryLease:
    """The MiB of the memory budget one clone holds (0 without a budget); its VCS may
    raise them as it learns what the clone needs (:meth:`MemoryAdmission.need`)."""

    __slots__ = (
        "analysis",
        "bounds",
        "first_pass",
        "forecasts",
        "host",
        "known",
        "memory",
        "pages",
        "refused",
        "ticket",
    )

    def __init__(self, ticket: int, memory: int, host: str = "", known: int | None = None) -> None:
        self.ticket, self.memory, self.host = ticket, memory, host
        self.known = known  # bytes its repository's clone used in an earlier run
        self.forecasts: list[int] = []  # the bytes its VCS forecast, in order
        # How many of them (the first ones) are bounds made before its pack's first
        # pass counted anything; ``refused``: the last was refusable, and refused.
        self.bounds, self.refused = 0, False
        # Its first pass, if its VCS asks refusably (see FirstPasses): "" not yet,
        # "records" (asked for those first), "dense" (went past them), "counted"
        # (needed no more), "bound" (asked for its bound first).
        self.first_pass = ""
        self.pages = 0  # MiB of its pack's pages left out of ``memory`` (see need())
        self.analysis = False  # an analysis job's (hold()), not a clone's


@dataclass(frozen=True, slots=True)
class MemoryFigures:
    """A snapshot of the budget, in MiB."""

    budget: int  # configured
    size: int  # what it admits now (the controller moves it)
    held: int  # reserved by running clones and analysis jobs
    estimate: int  # what a clone from a host not seen yet reserves
    analyses: int = 0  # of ``held``, reserved by analysis jobs


class MemoryAdmission:
    """Admits clones into a memory budget one at a time, in order, each with the MiB its
    host's (or its own stored) estimate says, and lets a running clone raise its share."""

    # A stored figure is one indexed read; more than this, and the store is stuck.
    HISTORY_SECONDS = 2.0

    def __init__(
        self,
        estimates: MemoryEstimates,
        history: Callable[[str], Awaitable[int | None]] | None = None,
    ) -> None:
        self.estimates = estimates
        # Its size starts at the estimates' ceiling; the pressure controller moves it.
        self.semaphore = WeightedSemaphore(estimates.ceiling)
        # MiB of pack pages the leases may leave out, in all: 2/3 of the budget (for
        # ``auto`` at 3/4, half of what was available when it was made). Issue 46:
        # where -j 2 fits (a cgroup of 1.6x one delta-heavy clone, 216 MiB available)
        # two walks leave 102 MiB out; a third of the budget would keep them one at a
        # time. Beyond the room, pages reclaimed would be read again from disk, and the
        # controller could only stop admitting: it takes nothing back.
        self.page_room = 2 * estimates.ceiling // 3
        # Bytes a repository's clone used in an earlier run, by key.
        self._history = history
        self._admission = trio.Lock()  # FIFO: clones reach the memory check in order
        self._changed = trio.Event()
        self._head = 0  # MiB the clone at the head of the memory queue wants
        self._growing: dict[int, int] = {}  # MiB that running clones wait for, by ticket
        self._keeping: set[int] = set()  # of those, the ones that keep what they hold
        self._leases: dict[int, MemoryLease] = {}  # the admitted clones', by ticket
        self._tickets = itertools.count()
        self.first_passes = FirstPasses()

    async def admit(self, host: str, key: str) -> MemoryLease:
        """Wait for this clone's turn and for its estimate to fit, then reserve it.

        The clone at the head estimates its memory when it gets there and again
        whenever something changes (a clone ends, an estimate learns, the controller
        resizes): an estimate made when the clone was queued would miss what the
        clones ahead of it taught. Cancellable while waiting, nothing held if cancelled.
        """
        async with self._admission:
            # Asked in the queue's order: a lookup outside it would let the clones
            # whose answers came first overtake the others.
            known = await self._known(key)
            while True:
                self._head = self.estimates.estimate(host, known)
                # Running clones that wait for more go first: they hold a clone token.
                if not self._growing and self.semaphore.try_acquire(self._head):
                    lease = MemoryLease(next(self._tickets), self._head, host, known)
                    self._leases[lease.ticket] = lease
                    self._head = 0
                    return lease
                await self._changed.wait()

    def release(self, lease: MemoryLease) -> None:
        """Give back all ``lease`` holds, once its clone ended. Not a checkpoint."""
        del self._leases[lease.ticket]
        self._give_back(lease)

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

    async def need(
        self, lease: MemoryLease, nbytes: int, reclaimable: int = 0, *, refusable: bool = False
    ) -> bool:
        """Hold ``nbytes`` for ``lease``'s clone (its whole need from now on), at most
        the budget, but for the share of them that ``reclaimable`` (file pages it maps)
        is, within :attr:`page_room`: what it holds beyond that goes back at once.
        True once held. Always a checkpoint.

        What is free is taken at once. Otherwise the clone waits, in FIFO order with
        the other running clones that wait (ahead of clones not admitted yet). The
        first to wait keeps what it holds; those behind it give theirs back and wait
        for their whole figure: two waiters that both held could each wait for what
        the other holds, while the head can only wait for clones that run, which end
        or join the queue. The pages a clone behind the head already uses go
        uncounted while it waits (what it held: its opening or first-pass figure).
        ``refusable``: a first pass's questions (issue 46). Its first (its records and a
        few deltas) is refused at once if its host's packs need their bound
        (:class:`FirstPasses`): it then asks for that first. A later one (the bound,
        once past them) holds memory it can drop (its records, in its reservation):
        it waits keeping what it holds, even behind others, as long as every clone
        that waits so can still be served by what is free and what running clones
        hold (:meth:`_safe`); once that no longer holds it is refused (False, what it
        held unchanged): it drops them, and asks again.

        ``nbytes`` is a forecast: corrected by what the clones of the same host and
        shape measured against theirs in this run (:meth:`MemoryEstimates.corrected`).
        A clone's first figures are bounds made before its first pass counted anything
        (its first, a refusable one, and the one after a refusal); the next is
        made from that count, and says what the bounds were worth at once.
        The whole figure is what a clone's peak is measured against (its resident
        size counts the pages it maps); the pages are left out of the reservation
        (issue 46) as long as all the leases' left-out pages fit in :attr:`page_room`:
        the kernel reclaims them before it kills anything, but a walk reads them
        again, so beyond some room they would thrash. Reserved, they kept a second
        delta walk out of a cgroup where two fit (a 52 MiB pack: half of its walk's
        107 MiB).
        """
        first = not lease.forecasts or refusable or lease.refused
        if not first and lease.bounds == len(lease.forecasts) and nbytes < lease.forecasts[-1]:
            # Its first pass counted what the bound before it could not: the share of
            # the bound this pack needs corrects its host's and shape's next bounds now,
            # those of the clones that wait too, not only once it ends (issue 46).
            bound = lease.forecasts[-1]
            self.estimates.measured(lease.host, bound, nbytes, first=True, exceeded=False)

        def wanted() -> int:  # again whenever it waits and something changed
            corrected = self.estimates.corrected(lease.host, nbytes, first=first, known=lease.known)
            lease.pages = self._pages_left_out(lease, corrected, nbytes, reclaimable)
            return max(1, min(self.estimates.ceiling, math.ceil(corrected / MiB) - lease.pages))

        if not self._first_pass_goes_on(lease, refusable, first):
            lease.refused = True
            await trio.lowlevel.checkpoint()
            return False
        pages = lease.pages
        keep = refusable and bool(lease.forecasts)  # holding records it can drop
        if not await self._grow(lease, wanted(), wanted, keep=keep):
            lease.pages, lease.refused = pages, True
            return False
        lease.refused = False
        lease.forecasts.append(nbytes)
        lease.bounds += first
        return True

    def _first_pass_goes_on(self, lease: MemoryLease, refusable: bool, first: bool) -> bool:
        """What ``lease``'s question says of its host's packs (:class:`FirstPasses`);
        False if it is a first pass's first question that should ask for its bound."""
        if refusable and not lease.forecasts and not lease.first_pass:
            if self.first_passes.bound_first(lease.host):
                lease.first_pass = "bound"
                return False
            lease.first_pass = "records"
        elif refusable and lease.first_pass == "records":
            lease.first_pass = "dense"
            self.first_passes.learned(lease.host, dense=True)
        elif not first and lease.first_pass == "records":  # counted: it needed no more
            lease.first_pass = "counted"
            self.first_passes.learned(lease.host, dense=False)
        return True

    async def hold(self, wanted: int) -> MemoryLease:
        """``wanted`` MiB (at most the budget) for one analysis job, until
        :meth:`release`. Always a checkpoint; cancellable while it waits, nothing held
        then. It waits as a running clone that grows does: in FIFO order with them,
        ahead of clones not admitted yet. An analysis waits for no clone that waits
        for it: clones end, or grow, without analyses (issue 46)."""
        lease = MemoryLease(next(self._tickets), 0)
        lease.analysis = True
        self._leases[lease.ticket] = lease
        try:
            await self._grow(lease, max(1, min(self.estimates.ceiling, wanted)))
        except BaseException:
            self.release(lease)
            raise
        return lease

    async def _grow(
        self,
        lease: MemoryLease,
        wanted: int,
        again: Callable[[], int] | None = None,
        *,
        keep: bool = False,
    ) -> bool:
        """Set ``lease`` to ``wanted`` MiB: what it holds beyond goes back at once; what
        it lacks is taken, waiting in order if it is not free (:meth:`need`'s rules),
        ``again()`` the figure after each change while it waits. ``keep``: it keeps
        what it holds behind others while that is safe, and is refused (False) once it
        is not. True once set. Always a checkpoint."""
        if wanted <= lease.memory or (
            not self._growing and self.semaphore.try_acquire(wanted - lease.memory)
        ):
            self._set(lease, wanted)
            await trio.lowlevel.checkpoint()
            return True
        logger.debug("a job waits for %d MiB of memory (held %d)", wanted, lease.memory)
        if self._growing and not keep:  # behind another: wait holding nothing (see need())
            self._give_back(lease)
        self._growing[lease.ticket] = wanted  # in order of arrival
        if keep:
            self._keeping.add(lease.ticket)
        try:
            # Taken and booked in one step (no checkpoint between): the statistics
            # never show MiB held that no lease holds.
            while next(iter(self._growing)) != lease.ticket or not (
                wanted <= lease.memory or self.semaphore.try_acquire(wanted - lease.memory)
            ):
                if keep and not self._safe(lease.ticket):
                    await trio.lowlevel.checkpoint()
                    return False
                await self._changed.wait()
                if again is not None:
                    wanted = self._growing[lease.ticket] = again()
            self._set(lease, wanted)
            return True
        finally:
            del self._growing[lease.ticket]
            self._keeping.discard(lease.ticket)
            self.changed()  # the next one waiting, or the head of the admissions

    def _safe(self, ticket: int) -> bool:
        """Whether the waiting lease ``ticket``, keeping what it holds, and every lease
        that waits keeping its own ahead of it (the first always does) can all be
        served from what is free and what the leases that do not wait hold: those end,
        or give it back when they wait. Otherwise each could wait for what another
        keeps (ADR 0014). The first to wait is always safe."""
        first, missing = next(iter(self._growing)), 0
        if ticket == first:
            return True
        for waiting, wanted in self._growing.items():
            if waiting == first or waiting in self._keeping:
                missing += max(0, wanted - self._leases[waiting].memory)
            if waiting == ticket:
                break
        running = sum(held.memory for t, held in self._leases.items() if t not in self._growing)
        return missing <= self.semaphore.available + running

    def _set(self, lease: MemoryLease, wanted: int) -> None:
        """``lease`` at ``wanted`` MiB, what it held beyond them given back; what it
        lacked is taken already."""
        if wanted < lease.memory:
            self.semaphore.release(lease.memory - wanted)
            lease.memory = wanted
            self.changed()
        lease.memory = wanted

    def _pages_left_out(
        self, lease: MemoryLease, corrected: int, nbytes: int, reclaimable: int
    ) -> int:
        """MiB of ``lease``'s pack pages to leave out of its reservation: their share
        of its ``corrected`` forecast (the correction scales them too), within what
        the other leases left out of :attr:`page_room`."""
        if nbytes <= 0:
            return 0
        share = corrected * min(reclaimable, nbytes) // nbytes // MiB
        others = sum(held.pages for held in self._leases.values() if held is not lease)
        return max(0, min(share, self.page_room - others))

    def _give_back(self, lease: MemoryLease) -> None:
        memory, lease.memory = lease.memory, 0
        if memory:
            self.semaphore.release(memory)
            self.changed()

    def changed(self) -> None:
        """Wake the clone at the head of the memory queue to estimate and try again."""
        self._changed.set()
        self._changed = trio.Event()

    def learn(
        self,
        host: str,
        peak_memory: int,
        *,
        exceeded: bool = False,
        lease: MemoryLease | None = None,
    ) -> None:
        """A clone from ``host`` used ``peak_memory`` bytes at most; ``exceeded``: it
        failed for lack of memory; ``lease``: what it held, and its largest forecast."""
        if exceeded:
            self.estimates.exceeded(host, peak_memory)
        else:
            self.estimates.record(host, peak_memory)
        if lease is not None:
            # A forecast a larger one followed was not a forecast of the peak (a first
            # pass's, before a walk): only those that held to the end are measured.
            later = 0
            for number in reversed(range(len(lease.forecasts))):
                forecast = lease.forecasts[number]
                if forecast >= later:
                    first = number < lease.bounds
                    self.estimates.measured(
                        host, forecast, peak_memory, first=first, exceeded=exceeded
                    )
                later = max(later, forecast)
        self.changed()

    def heaviest(self) -> int:
        """The largest memory reservation running, wanted by a running clone or by the
        head of the queue (MiB): the controller's floor, so that the clone that waits
        can always run."""
        running = [lease.memory for lease in self._leases.values()]
        return max(running + list(self._growing.values()) + [self._head, 1])

    def figures(self) -> MemoryFigures:
        return MemoryFigures(
            budget=self.estimates.ceiling,
            size=self.semaphore.size,
            held=self.semaphore.held,
            estimate=self.estimates.estimate(),
            analyses=sum(lease.memory for lease in self._leases.values() if lease.analysis),
        )

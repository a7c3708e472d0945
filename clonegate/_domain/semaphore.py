"""A FIFO weighted semaphore for trio: Go's ``x/sync/semaphore.Weighted`` under trio's rules.

ADR 0002 records the port and every place it departs from Go.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from types import TracebackType
from typing import final

import trio
from trio.lowlevel import Abort, RaiseCancelT, Task, enable_ki_protection

__all__ = ["WeightedSemaphore", "WeightedSemaphoreStatistics"]


@dataclass(frozen=True, slots=True)
class WeightedSemaphoreStatistics:
    """A snapshot of a :class:`WeightedSemaphore`, as returned by its ``statistics()``.

    Attributes:
      size: the number of tokens the semaphore hands out.
      held: tokens currently acquired and not yet released (may exceed ``size``
        right after a shrink).
      available: ``max(size - held, 0)``.
      tasks_waiting: tasks blocked in :meth:`WeightedSemaphore.acquire`.
      weight_waiting: the sum of the weights those tasks asked for.
    """

    size: int
    held: int
    available: int
    tasks_waiting: int
    weight_waiting: int


def _checked(value: object, name: str) -> int:
    # bool is an int subclass, but acquire(True) is a bug, never a weight.
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return value


@final
class _Waiter:
    __slots__ = ("arrival", "task", "weight")

    def __init__(self, task: Task, weight: int, arrival: int) -> None:
        self.task = task
        self.weight = weight
        self.arrival = arrival


@final
class _Hold:
    """The async context manager returned by :meth:`WeightedSemaphore.hold`."""

    __slots__ = ("_semaphore", "_weight")

    def __init__(self, semaphore: WeightedSemaphore, weight: int) -> None:
        self._semaphore = semaphore
        self._weight = weight

    @enable_ki_protection
    async def __aenter__(self) -> None:
        await self._semaphore.acquire(self._weight)

    @enable_ki_protection
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._semaphore.release(self._weight)


@final
class WeightedSemaphore:
    """A semaphore of ``size`` tokens where each acquisition takes a chosen number of them.

    Waiters are served first in, first out, as in Go's
    ``golang.org/x/sync/semaphore.Weighted``: a release grants tokens to the head of
    the queue, then to the next, and stops at the first waiter whose weight does not
    fit. A heavy request is therefore never starved by a stream of light ones, at the
    price of light requests waiting behind a heavy head (head-of-line blocking).
    A new request never overtakes the queue, even when enough tokens are free.

    Args:
      size: the number of tokens; an ``int`` >= 0 (``TypeError``, ``ValueError``).
        Assign :attr:`size` later to resize.

    Weights are ``int`` >= 0 everywhere: a ``bool`` or any other type raises
    ``TypeError``, a negative weight raises ``ValueError``, and validation happens
    before any state changes.

    :meth:`acquire` is a checkpoint on every path. :meth:`try_acquire`,
    :meth:`acquire_nowait`, :meth:`release`, :meth:`statistics`, resizing and leaving
    :meth:`hold` never are. Any task may release tokens that another task acquired.
    Public methods are protected from ``KeyboardInterrupt`` landing mid-update.

    ``async with semaphore:`` holds one token; ``async with semaphore.hold(n):``
    holds ``n``.
    """

    __slots__ = ("_arrivals", "_held", "_oversized", "_queue", "_size", "_weight_waiting")

    # Invariants, true whenever no method of this object is running:
    # - 0 <= _held, and _held is the sum of all tokens acquired and not released;
    # - every waiter in _queue weighs <= _size, every one in _oversized weighs > _size;
    # - _queue is in order of arrival;
    # - the head of _queue, if any, weighs more than `available` (nobody who could be
    #   granted is left waiting);
    # - _weight_waiting == the sum of the weights in _queue and _oversized.

    def __init__(self, size: int) -> None:
        self._size = _checked(size, "size")
        self._held = 0
        # OrderedDict rather than deque or dict: O(1) removal of a cancelled waiter
        # from anywhere, and O(1) access to the head even after many removals.
        self._queue: OrderedDict[_Waiter, None] = OrderedDict()
        # Requests heavier than the whole semaphore. Go lets them wait for their
        # context only; they stay out of the queue so they never block anyone, and
        # keep their arrival number so a resize that makes them fit puts them back
        # where they belong.
        self._oversized: OrderedDict[_Waiter, None] = OrderedDict()
        self._weight_waiting = 0
        self._arrivals = itertools.count()

    def __repr__(self) -> str:
        return (
            f"<WeightedSemaphore size={self._size} held={self._held} "
            f"waiting={len(self._queue) + len(self._oversized)} at {id(self):#x}>"
        )

    @property
    def size(self) -> int:
        """The number of tokens. Assigning it resizes the semaphore.

        Growing grants, in FIFO order, the waiters that now fit. Shrinking below
        :attr:`held` takes nothing back: holders finish, and nobody is admitted until
        enough is released. Waiters heavier than the size step aside while it lasts:
        they are neither granted nor in anyone's way, and when a resize makes them fit
        again they wait in their order of arrival, as if never set aside. A negative
        size raises ``ValueError``. Not a checkpoint.
        """
        return self._size

    @size.setter
    @enable_ki_protection
    def size(self, new_size: int) -> None:
        self._size = _checked(new_size, "size")
        fitting = [w for w in self._oversized if w.weight <= new_size]
        for waiter in [w for w in self._queue if w.weight > new_size]:
            # Left at the head, a waiter that can never fit would block the queue.
            del self._queue[waiter]
            self._oversized[waiter] = None
        if fitting:
            for waiter in fitting:
                del self._oversized[waiter]
            # O(n log n), but only when a resize lets set-aside waiters back in.
            merged = sorted([*self._queue, *fitting], key=lambda w: w.arrival)
            self._queue = OrderedDict.fromkeys(merged)
        # Growth frees tokens; shrinkage may have set aside a blocking head.
        self._grant_from_head()

    @property
    def held(self) -> int:
        """Tokens acquired and not yet released."""
        return self._held

    @property
    def available(self) -> int:
        """``max(size - held, 0)``: free tokens (not necessarily free to take: see FIFO)."""
        return max(self._size - self._held, 0)

    def statistics(self) -> WeightedSemaphoreStatistics:
        """Return a frozen :class:`WeightedSemaphoreStatistics`. Not a checkpoint."""
        return WeightedSemaphoreStatistics(
            size=self._size,
            held=self._held,
            available=self.available,
            tasks_waiting=len(self._queue) + len(self._oversized),
            weight_waiting=self._weight_waiting,
        )

    @enable_ki_protection
    def try_acquire(self, n: int = 1) -> bool:
        """Take ``n`` tokens if that needs no waiting; return whether it did (Go's TryAcquire).

        Fails when fewer than ``n`` tokens are free or when any task is queued, even
        if ``n`` tokens are free: queued tasks come first. ``n == 0`` succeeds
        whenever the queue is empty. Never a checkpoint.
        """
        return self._take_if_free(_checked(n, "n"))

    @enable_ki_protection
    def acquire_nowait(self, n: int = 1) -> None:
        """Like :meth:`try_acquire`, but raise :exc:`trio.WouldBlock` instead of returning False."""
        if not self._take_if_free(_checked(n, "n")):
            raise trio.WouldBlock

    @enable_ki_protection
    async def acquire(self, n: int = 1) -> None:
        """Wait until ``n`` tokens are granted to this task, in FIFO order.

        Always a checkpoint: in a cancelled scope it raises :exc:`trio.Cancelled`
        even when the tokens are free, and when they are taken at once it still
        yields to the scheduler.

        If cancelled while waiting (a cancel scope, a deadline, a nursery teardown),
        the task leaves the queue with nothing held, and if it was at the head, the
        waiters behind it that now fit are granted at once. Tokens are assigned when
        a waiter is woken, so the wake-up cannot be lost to a later cancellation or
        taken by another task: once granted, ``acquire`` returns normally.

        A request heavier than :attr:`size` neither queues ahead of others nor blocks
        them: it waits until cancelled, or until a resize makes it fit, at which point
        it takes its place in the queue by order of arrival.
        """
        _checked(n, "n")
        # Go issue 63615: a cancellation that happened before the call wins over free tokens.
        await trio.lowlevel.checkpoint_if_cancelled()
        if self._take_if_free(n):
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        waiter = _Waiter(trio.lowlevel.current_task(), n, next(self._arrivals))
        if n > self._size:
            self._oversized[waiter] = None
        else:
            self._queue[waiter] = None
        self._weight_waiting += n

        def abort(_: RaiseCancelT) -> Abort:
            self._withdraw(waiter)
            return Abort.SUCCEEDED

        # Returns only after _grant_from_head() counted our tokens as held and
        # rescheduled us; after that, trio never calls abort() for this wait.
        await trio.lowlevel.wait_task_rescheduled(abort)

    @enable_ki_protection
    def release(self, n: int = 1) -> None:
        """Return ``n`` tokens and grant them to the head of the queue. Not a checkpoint.

        Raises ``ValueError`` ("released more than held") if ``n`` exceeds
        :attr:`held`, and then changes nothing. Go panics, after corrupting its count.
        """
        _checked(n, "n")
        if n > self._held:
            raise ValueError(
                f"semaphore released more than held: release({n}) with {self._held} held"
            )
        self._held -= n
        self._grant_from_head()

    def hold(self, n: int = 1) -> AbstractAsyncContextManager[None]:
        """An async context manager that acquires ``n`` tokens on entry and releases them on exit.

        ``n`` is validated here, when ``hold`` is called. Entering is a checkpoint
        (see :meth:`acquire`); leaving is not.
        """
        return _Hold(self, _checked(n, "n"))

    @enable_ki_protection
    async def __aenter__(self) -> None:
        await self.acquire(1)

    @enable_ki_protection
    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.release(1)

    def _take_if_free(self, n: int) -> bool:
        # No barging: free tokens belong to the queue's head before any newcomer.
        if self._queue or n > self.available:
            return False
        self._held += n
        return True

    def _grant_from_head(self) -> None:
        queue = self._queue
        while queue:
            head = next(iter(queue))
            if head.weight > self.available:
                # Stop at the first waiter that does not fit, even if one further back
                # would. Skipping ahead would let a steady stream of light requests
                # starve a heavy one forever (a writer among readers).
                break
            del queue[head]
            self._weight_waiting -= head.weight
            # Count the tokens as held before waking the task, so nobody else can take
            # them between now and the moment it runs.
            self._held += head.weight
            trio.lowlevel.reschedule(head.task)

    def _withdraw(self, waiter: _Waiter) -> None:
        self._weight_waiting -= waiter.weight
        if waiter in self._oversized:
            del self._oversized[waiter]
            return
        was_head = next(iter(self._queue)) is waiter
        del self._queue[waiter]
        # Go issue 37852: a cancelled head may have been the only thing stopping the
        # waiters behind it; without this they would sleep until the next release.
        if was_head:
            self._grant_from_head()

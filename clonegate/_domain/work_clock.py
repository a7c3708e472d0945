"""Deadlines that stop while a repository only waits for a slot it shares (issue 38).

A repository's deadline and its analysis's time limit bound what the repository
does. Waiting for an analysis process is not its doing: two hostile repositories
that hold every CPU until their own deadline used to take the deadline of every
repository queued behind them too. A :class:`WorkClock` runs the limits made with
:meth:`WorkClock.limit` only while the repository works, and stops them while all
its work waits for a shared slot. The wait stays bounded: whoever holds the slot is
under its own limits, and the slots are handed out first come, first served.

The use case makes one clock per repository and makes it current
(:meth:`WorkClock.current`); an analyzer marks its waits with :func:`waiting_for_slot`
and its work with :func:`holding_slot`. An analyzer that marks nothing is timed
throughout, as before.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import trio

__all__ = ["WorkClock", "holding_slot", "waiting_for_slot"]


class _Limit:
    __slots__ = ("remaining", "scope")

    def __init__(self, scope: trio.CancelScope, remaining: float) -> None:
        self.scope = scope
        self.remaining = remaining  # what is left, read while the clock is stopped


class WorkClock:
    """Cancel scopes whose time runs only while the repository's work is not all waiting.

    Stopped while at least one task of the repository waits for a slot and none
    holds one; running otherwise (a part that waits while another works is the
    repository's own pace). Not thread-safe; none of its methods is a checkpoint.
    """

    def __init__(self) -> None:
        self._limits: list[_Limit] = []
        self._waiting = 0
        self._holding = 0

    @property
    def stopped(self) -> bool:
        return self._waiting > 0 and self._holding == 0

    @contextmanager
    def limit(self, seconds: float) -> Iterator[trio.CancelScope]:
        """A cancel scope that expires after ``seconds`` of this clock's time."""
        scope = trio.CancelScope()
        limit = _Limit(scope, seconds)
        if not self.stopped:
            scope.deadline = trio.current_time() + seconds
        self._limits.append(limit)
        try:
            with scope:
                yield scope
        finally:
            self._limits.remove(limit)

    @contextmanager
    def current(self) -> Iterator[None]:
        """Make this the clock that :func:`waiting_for_slot` and :func:`holding_slot`
        mark, in this task and the tasks it starts."""
        token = _current.set(self)
        try:
            yield
        finally:
            _current.reset(token)

    @contextmanager
    def waiting(self) -> Iterator[None]:
        with self._counted(waiting=1):
            yield

    @contextmanager
    def holding(self) -> Iterator[None]:
        with self._counted(holding=1):
            yield

    @contextmanager
    def _counted(self, waiting: int = 0, holding: int = 0) -> Iterator[None]:
        self._change(waiting, holding)
        try:
            yield
        finally:
            self._change(-waiting, -holding)

    def _change(self, waiting: int, holding: int) -> None:
        was = self.stopped
        self._waiting += waiting
        self._holding += holding
        if was == self.stopped:
            return
        now = trio.current_time()
        for limit in self._limits:
            if self.stopped:
                limit.remaining = limit.scope.deadline - now
                limit.scope.deadline = math.inf
            else:
                # A limit that had expired before it stopped expires now.
                limit.scope.deadline = now + limit.remaining


_current: ContextVar[WorkClock | None] = ContextVar("clonegate_work_clock", default=None)


@contextmanager
def waiting_for_slot() -> Iterator[None]:
    """Around a wait for a slot other repositories share (an analysis process): the
    current repository's limits stop while all its work waits. Outside any
    repository's clock, nothing."""
    clock = _current.get()
    if clock is None:
        yield
        return
    with clock.waiting():
        yield


@contextmanager
def holding_slot() -> Iterator[None]:
    """Around work done while holding such a slot: the limits run, whatever else of
    the repository still waits."""
    clock = _current.get()
    if clock is None:
        yield
        return
    with clock.holding():
        yield

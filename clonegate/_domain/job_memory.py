"""Analysis jobs inside the memory budget (issue 46, ADR 0014).

An analysis runs in worker processes that the budget used to leave outside, to a
share of memory it kept for them. Measured, a real repository's analysis job peaks at
7-21 MiB, but a test file the analyzer accepts (under 10 MiB and 500,000 punctuation
marks) takes a worker up to its cap, 1 GiB, from a pack of a few KiB: no share fixed
in advance covers that. With a budget, each analysis job now holds a share of it while
it runs, learned from the jobs' measured peaks.

The use case makes its budget current (:func:`counted_in`) around an analysis; an
analyzer wraps each job in :func:`held_for_job` and says the job's peak. An analyzer
that does neither runs outside the budget, as before.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import Protocol

import trio

from .work_clock import waiting_for_slot

__all__ = ["JobMemory", "JobPeak", "counted_in", "held_for_job"]


class JobMemory(Protocol):
    """Where analysis jobs hold memory. ``hold`` waits for one job's share and returns
    it (always a checkpoint); ``release`` gives it back, with the bytes the job used
    at most (``None``: not measured, it failed); not a checkpoint."""

    async def hold(self) -> object: ...

    def release(self, held: object, peak: int | None) -> None: ...


class JobPeak:
    """What the analyzer measured of a job: ``bytes``, once it replied (else ``None``)."""

    __slots__ = ("bytes",)

    def __init__(self) -> None:
        self.bytes: int | None = None

    def measured(self, nbytes: int) -> None:
        """The job replied, having used ``nbytes`` at most. Not a checkpoint."""
        self.bytes = nbytes


_current: ContextVar[JobMemory | None] = ContextVar("clonegate_job_memory", default=None)


@contextmanager
def counted_in(memory: JobMemory | None) -> Iterator[None]:
    """Make ``memory`` where :func:`held_for_job` holds, in this task and the tasks it
    starts (``None``: nowhere, outside any budget)."""
    token = _current.set(memory)
    try:
        yield
    finally:
        _current.reset(token)


@asynccontextmanager
async def held_for_job() -> AsyncIterator[JobPeak]:
    """Around one analysis job: waits for its share of the current budget (a wait for
    a shared slot: the repository's limits stop, :func:`waiting_for_slot`), and gives
    it back on every way out, with the peak set on what it yields. Always a
    checkpoint on entry; without a budget, nothing else."""
    memory = _current.get()
    peak = JobPeak()
    if memory is None:
        await trio.lowlevel.checkpoint()
        yield peak
        return
    with waiting_for_slot():
        held = await memory.hold()
    try:
        yield peak
    finally:
        memory.release(held, peak.bytes)

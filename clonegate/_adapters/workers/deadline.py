"""A job's lease deadline, shared between the parent and its worker (ADR 0015, "A clone
never outlives its lease"; ADR 0003).

A job run while its caller holds an expiring permit (a Redis lease) must not outlive
it: if the parent is paused (SIGSTOP, a debugger, a stalled VM) it cannot renew the
lease, and cannot stop the job either, while another machine may be granted the
permit. So the worker stops itself. Each worker has a :class:`Cell`, a page of
shared memory (a memfd the zygote makes at the fork and both sides map) holding the
deadline on CLOCK_MONOTONIC, which on Linux is one clock for every process of the
machine. The parent writes it before each job and again at each renewal; while a
job with a deadline runs, a :func:`watching` thread in the worker ends the process
(``os._exit``: the kernel closes every connection it holds, and its ssh child dies
with it) once the deadline passes with no renewal.

No trio here: the zygote and the workers import this module.
"""

from __future__ import annotations

import math
import os
import struct
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from mmap import mmap

from ..._domain.limits import held_deadline

__all__ = ["LEASE_ENDED", "Cell", "ended_at_deadline", "follow", "watching"]

# A worker's exit status when its job's deadline passed (EX_TEMPFAIL): the parent
# reports the lease lost, not the repository's failure.
LEASE_ENDED = 75
# Two copies of the deadline in nanoseconds (0: none): the parent writes one, then the
# other; a reader takes a value only when both agree, so it never acts on a half-
# written one (8-byte copies are not promised to be atomic).
_SLOT = struct.Struct("=qq")
_THREAD = "clonegate-deadline"
_STACK = 256 << 10
SIZE = _SLOT.size
_NONE = 0


class Cell:
    """The deadline of one worker's current job, in memory both processes map."""

    __slots__ = ("_map",)

    def __init__(self, fd: int) -> None:
        self._map = mmap(fd, SIZE)  # the mapping outlives the descriptor

    @staticmethod
    def create() -> int:
        """A new cell's descriptor, zeroed (no deadline). Inherited by a fork."""
        fd = os.memfd_create("clonegate-deadline", os.MFD_CLOEXEC)
        try:
            os.ftruncate(fd, SIZE)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def write(self, deadline: float | None) -> None:
        """Set the deadline (``time.monotonic()`` seconds; None or inf: none). Not atomic as a
        whole: the reader waits for the two copies to agree."""
        if deadline is None or not math.isfinite(deadline):  # math.inf: never
            value = _NONE
        else:
            value = max(1, int(deadline * 1e9))
        struct.pack_into("=q", self._map, 0, value)
        struct.pack_into("=q", self._map, 8, value)

    def read(self) -> float | None:
        """The deadline, or None; a value being written is read again."""
        while True:
            first, second = _SLOT.unpack_from(self._map)
            if first == second:
                return None if first == _NONE else first / 1e9
            time.sleep(0)  # the writer is between its two copies: let it finish

    def close(self) -> None:
        self._map.close()


def follow(cell: Cell) -> Callable[[], None] | None:
    """The parent's side, before it sends a job: write into the worker's cell the
    deadline of the expiring permits the calling task holds (``held_deadline``, set by
    the use case's gate), and again after each of their renewals. Returns what stops
    the renewals' writes, or None if the caller holds nothing that expires (the cell
    then says so, and the job runs without a watchdog)."""
    held = held_deadline.get()
    if held is None:
        cell.write(None)
        return None
    cell.write(held.expires_at)
    return held.on_renewal(lambda: cell.write(held.expires_at))


def ended_at_deadline(status: int | None) -> bool:
    """Whether a worker's wait status says its watchdog ended it (see :func:`watching`)."""
    return status is not None and os.WIFEXITED(status) and os.WEXITSTATUS(status) == LEASE_ENDED


@contextmanager
def watching(cell: Cell) -> Iterator[None]:
    """Run the body (a job) under the cell's deadline, if it has one: a thread ends
    the process with :data:`LEASE_ENDED` once the deadline passes, re-reading the cell
    each time it wakes (a renewal moves it later). Stopped and joined on leaving, so
    no thread outlives the job."""
    if cell.read() is None:
        yield
        return
    stop, started = threading.Event(), threading.Event()
    thread = threading.Thread(target=_watch, args=(cell, stop, started), name=_THREAD)
    # A small stack: the thread only compares numbers. It still gets a malloc arena
    # (reserved, not resident), so it starts before the job's memory allowance is
    # counted from the worker's address space (the zygote enters this first).
    default = threading.stack_size(_STACK)
    try:
        thread.start()
    finally:
        threading.stack_size(default)
    started.wait()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _watch(cell: Cell, stop: threading.Event, started: threading.Event) -> None:
    started.set()
    while True:
        deadline = cell.read()
        if deadline is None:
            return  # the parent took the deadline away: nothing expires
        left = deadline - time.monotonic()
        if left <= 0:
            os._exit(LEASE_ENDED)
        # Event.wait times out on CLOCK_MONOTONIC; waking early only reads again.
        if stop.wait(min(left, 3600.0)):
            return

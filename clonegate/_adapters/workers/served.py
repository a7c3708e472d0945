"""Workers that serve one job after another, and where they wait in between (ADR 0003).

A job may ask for a served worker: one that waits for another job of the same kind
after replying, instead of ending. Forking a worker and tearing it down cost more
CPU than the jobs clonegate runs by the hundred: a HEAD listing is ~1 ms of work, a
shallow clone of a small repository ~10 ms, its analysis ~5 ms, and a fresh worker
each costs 3-11 ms more (bench/README.md). A served worker ends, and the next job of
its kind forks a new one, when a job raised, when the worker says so in its reply
(its memory grew, or the job asked for it after a failure: see
``zygote.end_after_reply``), after :data:`MAX_JOBS` jobs, or with the pool; so a
clone that took a worker's memory high never leaves it to the next one.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import trio

from . import deadline, wire
from .deadline import Cell

__all__ = ["MAX_JOBS", "IdleWorkers", "ServedWorker", "kill"]

# A served worker ends after this many jobs, so that whatever a job leaves behind
# (a cache entry, a fragment of the heap) stays bounded.
MAX_JOBS = 256
# Idle workers kept per kind of job; beyond that the one idle longest is ended.
MAX_IDLE = 8


@dataclass
class ServedWorker:
    """One worker process, seen from the parent: its pid, the stream of its jobs, a
    pidfd (readable once it has ended) and the cell of its job's deadline."""

    pid: int
    stream: trio.SocketStream
    pidfd: int
    cell: Cell
    jobs: int = 0
    followed: bool = False  # its last job ran under the caller's lease deadline
    unread: bytearray = field(default_factory=bytearray)  # received past the last frame

    async def run(
        self,
        job: bytes | None,
        on_question: Callable[[Any], Awaitable[object]] | None,
        on_note: Callable[[Any], object] | None = None,
    ) -> wire.Reply | None:
        """Send ``job`` (a pickle; None: sent already, a first job) and return its
        reply; None if the worker ended first.
        Meanwhile its cell follows the deadline of the caller's expiring permits, if it
        holds any (:func:`deadline.follow`), so the worker ends itself at that deadline
        when no renewal comes: a paused parent can neither renew nor stop it."""
        stop = deadline.follow(self.cell)
        self.followed = stop is not None
        try:
            if job is not None:
                await self.stream.send_all(wire.frame(job))
            return await self.reply(on_question, on_note)
        except trio.BrokenResourceError:
            return None  # it ended before or while reading the job
        finally:
            if stop is not None:
                stop()

    def alive(self) -> bool:
        readable, _, _ = select.select([self.pidfd], [], [], 0)
        return not readable

    async def receive(self) -> bytes | None:
        """One frame from the worker, or None if it closed its end first. Always a
        checkpoint.

        What one read returns past the frame is kept for the next call: a job's notes
        and its reply are sent back to back, and the kernel may hand several frames
        (or a frame and the start of the next) over in one read. Dropping that tail
        would lose a frame and read the next length from the middle of a pickle: the
        parent would wait forever for a served worker that waits for its next job.
        """
        while (frame := wire.take_frame(self.unread)) is None:
            chunk = await self.stream.receive_some(1 << 20)
            if not chunk:
                return None
            self.unread += chunk
        await trio.lowlevel.checkpoint()
        return frame

    async def reply(
        self,
        on_question: Callable[[Any], Awaitable[object]] | None,
        on_note: Callable[[Any], object] | None = None,
    ) -> wire.Reply | None:
        """The job's reply, once its questions are answered (``None`` for a caller
        that takes none) and its notes given to ``on_note`` (dropped without it); None
        if the worker ended. A worker that dies while its question is being answered
        stops the answer: its caller may be waiting for something (memory) that the
        dead worker no longer needs."""
        while (payload := await self.receive()) is not None:
            message = wire.load_reply(payload)
            if isinstance(message, wire.Reply):
                return message
            if isinstance(message, wire.Note):
                if on_note is not None:
                    on_note(message.value)
                continue
            answer = None
            if on_question is not None:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._cancel_at_exit, nursery.cancel_scope)
                    answer = await on_question(message.value)
                    nursery.cancel_scope.cancel()
            if not self.alive():
                return None
            await self.stream.send_all(wire.frame(wire.dump(answer)))
        return None

    async def _cancel_at_exit(self, scope: trio.CancelScope) -> None:
        await trio.lowlevel.wait_readable(self.pidfd)
        scope.cancel()

    def close(self) -> None:
        """Close its stream (a served worker waiting for a job reads end-of-file and
        exits; the zygote reaps it) and the pidfd. Not a checkpoint."""
        self.stream.socket.close()
        os.close(self.pidfd)
        self.cell.close()


class IdleWorkers:
    """Served workers between jobs, by kind; a kind is any hashable the pool chooses."""

    def __init__(self) -> None:
        self._idle: dict[Hashable, list[ServedWorker]] = {}

    def take(self, kind: Hashable) -> ServedWorker | None:
        """The worker of ``kind`` that finished last, if one is idle and alive."""
        waiting = self._idle.get(kind, [])
        while waiting:
            worker = waiting.pop()
            if worker.alive():
                return worker
            worker.close()  # killed while idle (the OOM killer, an operator)
        return None

    def put(self, kind: Hashable, worker: ServedWorker) -> None:
        waiting = self._idle.setdefault(kind, [])
        waiting.append(worker)
        if len(waiting) > MAX_IDLE:
            waiting.pop(0).close()

    def count(self) -> int:
        return sum(len(waiting) for waiting in self._idle.values())

    def close_all(self) -> None:
        for waiting in self._idle.values():
            for worker in waiting:
                worker.close()
        self._idle.clear()


def kill(pidfd: int) -> None:
    """SIGKILL to the worker of ``pidfd``, if it has not ended yet. Not a checkpoint."""
    with contextlib.suppress(ProcessLookupError):  # already gone
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)

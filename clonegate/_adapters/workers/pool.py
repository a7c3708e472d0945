"""clonegate's worker processes, seen from the parent: a pool around one zygote (ADR 0003).

:meth:`WorkerPool.run` runs a function in a worker process forked from the
zygote (see :mod:`.zygote`), waits for its reply, and kills the worker if the caller
is cancelled. A pool lives as long as its :func:`open_worker_pool` scope, and is
passed to the adapters that use it; an adapter made without one uses
:func:`run_pool`, which lives as long as the ``trio.run``.
"""

from __future__ import annotations

import errno
import os
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import trio

from ..._domain.limits import LeaseLostError
from ..preloads import ZYGOTE_PRELOAD
from . import deadline, first_job, oom, spawn, wire, zygote_process
from .cpus import default_worker_limiter as default_worker_limiter
from .died import WorkerDied as WorkerDied  # re-exported: the pool raises it
from .served import MAX_JOBS, IdleWorkers, ServedWorker
from .served import kill as _kill

T = TypeVar("T")

_LEASE_ENDED = (
    "the lease on a shared limit ended, with no renewal, while a worker process ran for "
    "its holder (this process paused?): the worker stopped itself at its deadline"
)
# Cleanup, shielded, may take this long: a killed worker is gone in milliseconds.
_CLEANUP_SECONDS = 10.0


@dataclass(frozen=True)
class WorkerPoolStatistics:
    """What a pool has done: workers forked so far, those alive now, the largest peak
    resident memory of an ended worker (the kernel's, at its exit), the zygote's pid."""

    workers_started: int
    workers_running: frozenset[int]
    largest_peak_rss_bytes: int
    zygote_pid: int | None


@dataclass
class _Exit:
    done: trio.Event = field(default_factory=trio.Event)
    status: int | None = None
    peak_kib: int = 0


class WorkerPool:
    """A zygote and the workers it forked; see the module docstring."""

    def __init__(
        self,
        preload: Sequence[str],
        init: Callable[[], object] | None,
        start_task: Callable[[Callable[[], Any]], object],
    ) -> None:
        # start_task runs the pool's own task (zygote and its messages): a scope's
        # nursery, or trio's system nursery for a pool that lives as long as the run.
        self._start_task = start_task
        self._preload = list(preload)
        self._init = init
        self._control: trio.socket.SocketType | None = None
        self._zygote: spawn.StartedZygote | None = None
        self._first: spawn.FirstJob | None = None  # the adopted zygote's (first_job.py)
        self._started = trio.Event()
        # Set with _started, or once the zygote told of the first job's worker (issue 47).
        self._first_told = trio.Event()
        self._starting = False
        self._broken: BaseException | None = None
        self._next_request = 0
        self._forks: dict[int, trio.MemorySendChannel[tuple[int, int, int, int] | OSError]] = {}
        self._busy = 0  # workers doing a job for this pool now
        self._a_job_ended = trio.Event()  # set, and replaced, as each job ends
        self._exits: dict[int, _Exit] = {}
        self._started_count = 0
        self._running: set[int] = set()
        self._largest_peak_kib = 0
        self._idle = IdleWorkers()

    def statistics(self) -> WorkerPoolStatistics:
        """A snapshot; never a checkpoint."""
        return WorkerPoolStatistics(
            workers_started=self._started_count,
            workers_running=frozenset(self._running),
            largest_peak_rss_bytes=self._largest_peak_kib * 1024,
            zygote_pid=self._zygote.process.pid if self._zygote is not None else None,
        )

    async def run(
        self,
        function: Callable[..., T],
        *args: object,
        on_ready: Callable[[], object] | None = None,
        memory_allowance: int = 0,
        reuse: str | None = None,
        on_question: Callable[[Any], Awaitable[object]] | None = None,
        on_note: Callable[[Any], object] | None = None,
        first: spawn.FirstJob | None = None,
    ) -> tuple[T, int]:
        """Run ``function(*args)`` in a new worker; return its value and the job's peak
        memory: the most resident memory the worker had above what it started with.

        ``on_ready`` is called once the worker is running, before the job is sent to
        it. ``memory_allowance`` (bytes, 0 for none) caps the address space the job
        may add to the worker's (``RLIMIT_AS``): past it, allocations fail with
        ``MemoryError`` inside the job. The function's own exceptions are re-raised;
        :class:`WorkerDied` if the worker ends without a reply. On cancellation the
        worker is killed, and this returns only once it is dead.

        ``reuse``: a kind of job whose workers serve one job after another (see
        :mod:`.served`): the job goes to an idle worker of that kind (and the same
        allowance) if there is one, and its worker then waits for the next. The job
        still gets its whole allowance, above the address space the worker has when
        it starts (the worker's hard cap adds ``zygote.RETIRE_ADDRESS_SPACE``), and
        its own peak: the high-water mark is reset when it starts, and its worker's
        memory left by earlier jobs counts (at most ``zygote.RETIRE_GROWTH``).

        ``on_question``: what answers the job's questions (``zygote.ask_parent``), in
        this task, while the job waits; the job gets ``None`` without it. A question
        comes from the worker: it is plain data, to be checked before it is believed.
        ``on_note`` hears the job's notes (``zygote.tell_parent``), plain data too, in
        this task and without a checkpoint: it must be quick.

        A caller that holds expiring permits (``held_deadline``: a Redis lease) gets a
        worker that ends itself at their deadline unless renewed: :exc:`LeaseLostError`.

        ``first``: the first job this caller claimed (:meth:`claim_first`), the same as
        ``function(*args)``: its worker, which has the job already, is the one waited
        for. Any other call first ends a first job nobody claimed (first_job.py).
        """
        worker = first_job.take(first) if first is not None else None
        if first is None:
            await self._ensure_started()
            if self._first is not None and self._first.state == "open":
                await first_job.end(self._first, _CLEANUP_SECONDS)
        oom_kills = oom.baseline()
        kind = (reuse, memory_allowance) if reuse is not None else None
        if worker is None and kind is not None:
            worker = self._idle.take(kind)
        if worker is None:
            worker = ServedWorker(*await self._fork_when_possible(memory_allowance, kind))
        keep, self._busy = False, self._busy + 1
        try:
            if on_ready is not None:
                on_ready()
            job = wire.dump((function, args)) if first is None else None
            reply = await worker.run(job, on_question, on_note)
            if reply is None:  # it ended without a reply: why
                died = await self._exit_of(worker.pid)
                if worker.followed and deadline.ended_at_deadline(died.status):
                    raise LeaseLostError(_LEASE_ENDED)
                killed = oom_kills is not None and (oom.kills() or 0) > oom_kills
                raise WorkerDied(
                    died.status,
                    died.peak_kib * 1024,
                    out_of_memory=killed,
                    allowance=memory_allowance,
                )
            worker.jobs += 1
            keep = kind is not None and reply.serving and worker.jobs < MAX_JOBS
        except BaseException:
            with trio.CancelScope(shield=True, deadline=trio.current_time() + _CLEANUP_SECONDS):
                _kill(worker.pidfd)
                await trio.lowlevel.wait_readable(worker.pidfd)
            raise
        finally:
            self._busy -= 1
            if keep:
                self._idle.put(kind, worker)
            else:
                worker.close()
            self._a_job_ended.set()
            self._a_job_ended = trio.Event()
        if reply.error is not None:
            raise reply.error
        return reply.value, reply.job_peak_bytes

    async def claim_first(
        self, reuse: str | None, memory_allowance: int, same: Callable[[object], bool]
    ) -> spawn.FirstJob | None:
        """The first job the program sent this pool's zygote before the pool existed
        (``spawn.send_first``), if its worker runs with this ``reuse`` kind and
        ``memory_allowance`` and ``same(job)`` says it is the caller's: claimed, for the
        :meth:`run` (``first=``) the caller makes next, with no checkpoint between.
        Otherwise None; the next :meth:`run` without it ends it. Always a checkpoint."""
        try:
            await self._ensure_started(first=True)
        except RuntimeError:
            return None  # a pool that cannot start: the caller's run() says why
        first = self._first
        if first is None or first.state != "open" or first.pid is None or first.job is None:
            return None
        if first.kind != reuse or first.allowance != memory_allowance or not same(first.job):
            return None
        first.state = "claimed"
        return first

    async def _ensure_started(self, *, first: bool = False) -> None:
        """Start (or adopt) the zygote if not yet; wait until it can fork (``first``:
        until it has told of its first job's worker, which is all a claim needs)."""
        if self._broken is not None:
            raise RuntimeError("the worker pool is closed or broken") from self._broken
        if not self._starting:
            self._starting = True
            self._start_task(self._serve)
        await (self._first_told if first else self._started).wait()
        if self._broken is not None:
            raise RuntimeError("the worker pool could not start") from self._broken

    async def _serve(self) -> None:
        """Starts (or adopts) the zygote, then reads its messages until the pool closes."""
        try:
            if self._init is None:
                self._zygote = spawn.adopt(self._preload)
                self._first = self._zygote.first if self._zygote is not None else None
            if self._zygote is None:
                self._zygote = spawn.start(self._preload)
                await zygote_process.write_init(self._zygote, self._init)
            self._control = trio.socket.from_stdlib_socket(self._zygote.control)
            await self._read_messages()
        except BaseException as exc:
            self._broken = self._broken or exc
            raise
        finally:
            self._started.set()
            self._first_told.set()
            self._idle.close_all()
            for waiter in self._forks.values():
                waiter.close()  # a fork never answered: its requester learns why
            if self._zygote is not None:
                await zygote_process.stop(self._zygote, _CLEANUP_SECONDS)
            if self._first is not None and self._first.state == "open":
                await first_job.end(self._first, _CLEANUP_SECONDS)  # killed with the zygote

    async def _read_messages(self) -> None:
        assert self._control is not None
        fd_space = wire.FD_SPACE
        while True:
            data, ancillary, _flags, _address = await self._control.recvmsg(64, fd_space)
            fds = wire.fds_of(ancillary)
            if not data:
                for fd in fds:
                    os.close(fd)
                raise RuntimeError("the worker zygote ended")
            if data[:1] == b"R":
                self._started.set()
                self._first_told.set()
            elif data[:1] == b"W":
                _, request, pid = wire.FORKED.unpack(data)
                self._started_count += 1
                self._running.add(pid)
                if request == wire.FIRST_REQUEST:
                    first_job.forked(self._first, pid, fds)
                    self._first_told.set()
                    continue
                waiter = self._forks.pop(request, None)
                if waiter is None or len(fds) != 3:
                    if len(fds) >= 2:
                        _kill(fds[1])  # its requester was cancelled
                    for fd in fds:
                        os.close(fd)
                    if waiter is not None:  # dropped: no descriptor free (its worker ends)
                        waiter.send_nowait(OSError(errno.EMFILE, os.strerror(errno.EMFILE)))
                    continue
                waiter.send_nowait((pid, fds[0], fds[1], fds[2]))
            elif data[:1] == b"E":
                _, request, error = wire.FORK_FAILED.unpack(data)
                if (waiter := self._forks.pop(request, None)) is not None:
                    waiter.send_nowait(OSError(error, os.strerror(error)))
            elif data[:1] == b"X":
                _, pid, status, peak_kib = wire.EXITED.unpack(data)
                self._running.discard(pid)
                self._largest_peak_kib = max(self._largest_peak_kib, peak_kib)
                ended = self._exits.setdefault(pid, _Exit())
                ended.status, ended.peak_kib = status, peak_kib
                ended.done.set()
                self._forget_old_exits()

    def _forget_old_exits(self) -> None:
        # An exit is kept for a job that finds its worker's stream closed and asks why;
        # workers that replied are never asked about, so old records are dropped.
        if len(self._exits) > 1024:
            for pid in [pid for pid, ended in self._exits.items() if ended.done.is_set()][:512]:
                del self._exits[pid]

    async def _fork_when_possible(self, allowance: int, kind: object) -> tuple[Any, ...]:
        """A new worker; out of file descriptors (EMFILE), once some are free (ADR 0003):
        idle workers let go, or a running job ended. With neither, the OSError is raised."""
        while True:
            try:
                return await self._fork(allowance, serve=kind is not None)
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE):
                    raise
                if self._idle.count():
                    self._idle.close_all()  # their descriptors are free at once
                elif self._busy:
                    await self._a_job_ended.wait()
                else:
                    raise

    async def _fork(
        self, allowance: int, serve: bool
    ) -> tuple[int, trio.SocketStream, int, deadline.Cell]:
        assert self._control is not None
        request = self._next_request = self._next_request + 1
        send, receive = trio.open_memory_channel[tuple[int, int, int, int] | OSError](1)
        self._forks[request] = send
        try:
            await self._control.send(wire.FORK.pack(b"F", request, allowance, serve))
            answer = await receive.receive()
        except trio.EndOfChannel:
            raise RuntimeError("the worker zygote ended") from self._broken
        finally:
            self._forks.pop(request, None)
        if isinstance(answer, OSError):
            raise answer
        pid, conn_fd, pidfd, cell_fd = answer
        stream = trio.SocketStream(trio.socket.from_stdlib_socket(socket.socket(fileno=conn_fd)))
        try:
            cell = deadline.Cell(cell_fd)  # mapped: the descriptor is not kept
        except BaseException:
            _kill(pidfd)  # no worker without its deadline; the zygote reaps it
            stream.socket.close()
            os.close(pidfd)
            raise
        finally:
            os.close(cell_fd)
        return pid, stream, pidfd, cell

    async def _exit_of(self, pid: int) -> _Exit:
        ended = self._exits.setdefault(pid, _Exit())
        with trio.move_on_after(_CLEANUP_SECONDS):
            await ended.done.wait()
        return self._exits.pop(pid, ended)


_run_pool: trio.lowlevel.RunVar[WorkerPool] = trio.lowlevel.RunVar("clonegate_run_pool")


@asynccontextmanager
async def open_worker_pool(
    *, preload: Sequence[str] = ZYGOTE_PRELOAD, init: Callable[[], object] | None = None
) -> AsyncIterator[WorkerPool]:
    """A pool whose zygote and workers live until this scope ends; pass it to the
    adapters that run jobs in it (``DulwichVCS(pool=...)``).

    ``preload``: modules the zygote imports before forking any worker (default: the
    declared list, :data:`~clonegate._adapters.preloads.ZYGOTE_PRELOAD`);
    ``"module:function"`` also calls that function. ``init``: a picklable callable the
    zygote runs after them, so every worker starts from its effect. The zygote starts
    with the first job. On leaving, the zygote and every worker still running are
    killed and waited for.
    """
    async with trio.open_nursery() as nursery:
        pool = WorkerPool(preload, init, nursery.start_soon)
        try:
            yield pool
        finally:
            nursery.cancel_scope.cancel()


def run_pool() -> WorkerPool:
    """The pool of an adapter made without one: this ``trio.run``'s own, which lives as
    long as the run, with the declared preloads."""
    try:
        return _run_pool.get()
    except LookupError:
        pool = WorkerPool(ZYGOTE_PRELOAD, None, trio.lowlevel.spawn_system_task)
        _run_pool.set(pool)
        return pool


async def run_in_worker(
    pool: WorkerPool,
    function: Callable[..., T],
    *args: object,
    on_ready: Callable[[], object] | None = None,
    memory_allowance: int = 0,
    reuse: str | None = None,
    on_peak: Callable[[int], object] | None = None,
) -> T:
    """:meth:`WorkerPool.run` on ``pool``; the job's peak goes to ``on_peak``, if any."""
    value, peak = await pool.run(
        function, *args, on_ready=on_ready, memory_allowance=memory_allowance, reuse=reuse
    )
    if on_peak is not None:
        on_peak(peak)  # the analyses' memory shares learn from it (ADR 0014)
    return value

"""The pool's side of a first job: a job the command line sent to its zygote before
any pool existed (``spawn.send_first``; ADR 0003, issue 47).

The pool that adopts the zygote learns the job's worker from the zygote (its pid,
pidfd and cell, as request ``wire.FIRST_REQUEST``), hands it to the caller whose job
is the same (``WorkerPool.claim_first``), and otherwise kills it, and removes the
directory it wrote in, before it runs anything else: a first job never runs beside
a job the caller's limits did not count it against.
"""

from __future__ import annotations

import os
from pathlib import Path

import trio

from ..clones import discard
from . import deadline
from .served import ServedWorker, kill
from .spawn import FirstJob

__all__ = ["end", "forked", "take"]


def forked(first: FirstJob | None, pid: int, fds: list[int]) -> None:
    """Note the zygote's news of the first job's worker: ``pid`` and ``fds``, its pidfd
    and cell. A worker this pool has no first job for is killed (the zygote reaps it)."""
    if first is not None and first.pid is None and first.state == "open" and len(fds) == 2:
        first.pid, (first.pidfd, first.cell) = pid, fds
        return
    if fds:
        kill(fds[0])
    for fd in fds:
        os.close(fd)


def take(first: FirstJob) -> ServedWorker:
    """The worker of a claimed first job, as the pool runs any: its stream, pidfd and
    cell move to it. Never a checkpoint; a worker whose cell cannot be mapped is
    killed (no worker without its deadline), and the error raised."""
    assert first.pid is not None
    assert first.pidfd is not None
    assert first.cell is not None
    pidfd, cell_fd, first.pidfd, first.cell = first.pidfd, first.cell, None, None
    try:
        cell = deadline.Cell(cell_fd)
    except BaseException:
        kill(pidfd)  # the zygote reaps it
        os.close(pidfd)
        first.stream.close()
        raise
    finally:
        os.close(cell_fd)
    stream = trio.SocketStream(trio.socket.from_stdlib_socket(first.stream))
    return ServedWorker(first.pid, stream, pidfd, cell)


async def end(first: FirstJob, bound: float) -> None:
    """Kill a first job's worker, wait until it is dead (at most ``bound`` seconds),
    and remove the directory it wrote in. Shielded: the caller's slot, or the pool's
    end, waits for it. Always a checkpoint."""
    first.state = "ended"
    with trio.CancelScope(shield=True, deadline=trio.current_time() + bound):
        if first.pidfd is not None:
            kill(first.pidfd)
            await trio.lowlevel.wait_readable(first.pidfd)
        else:
            await trio.lowlevel.checkpoint()
    for fd in (first.pidfd, first.cell):
        if fd is not None:
            os.close(fd)
    first.pidfd = first.cell = None
    first.stream.close()
    if first.leftover is not None:
        await discard(Path(first.leftover))

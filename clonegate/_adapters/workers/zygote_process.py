"""The pool's zygote process, from trio: its init written, and its end awaited."""

from __future__ import annotations

import os
from collections.abc import Callable

import trio

from . import spawn, wire
from .served import kill

__all__ = ["stop", "write_init"]


async def write_init(zygote: spawn.StartedZygote, init: Callable[[], object] | None) -> None:
    # Through a pipe, not the command line, which anyone can read; the zygote reads it
    # only after its imports, so a large init must not block the run's thread.
    assert zygote.process.stdin is not None
    stream = trio.lowlevel.FdStream(os.dup(zygote.process.stdin.fileno()))
    zygote.process.stdin.close()
    async with stream:
        await stream.send_all(wire.dump(init))


async def stop(zygote: spawn.StartedZygote, bound: float) -> None:
    """Close the control socket; the zygote kills its workers and exits. Bounded."""
    spawn.close(zygote)
    process = zygote.process
    pidfd = os.pidfd_open(process.pid)
    try:
        with trio.CancelScope(shield=True, deadline=trio.current_time() + bound):
            await trio.lowlevel.wait_readable(pidfd)
        if process.poll() is None:  # pragma: no cover  (a zygote that does not answer)
            kill(pidfd)
    finally:
        os.close(pidfd)
    process.wait()

"""Hold analysis parts inside their worker processes until the test lets them go.

A test that must know "both parts are running in workers right now" cannot learn it by
sampling a limiter from the parent: a busy machine can make any sample miss. Instead,
a pool's zygote started with :meth:`WorkerGate.init` replaces the analyzer's
``scan_part`` (in every worker it forks) with one that first checks in with the test
over loopback (sending its pid) and then waits for the test's go. What the test sees
is what the workers did, in the order they did it.
"""

from __future__ import annotations

import contextlib
import functools
import os
import socket
from collections.abc import Callable
from typing import Any

import trio

from clonegate._adapters.analysis import scan


def _hold_scan_parts(port: int) -> None:
    """Zygote init: each ``scan_part`` checks in on 127.0.0.1:``port``, then waits for a byte."""
    real = scan.scan_part

    def held(*args: Any) -> Any:
        with socket.create_connection(("127.0.0.1", port)) as conn:
            conn.sendall(b"%d\n" % os.getpid())
            conn.recv(1)  # the go, or end of file when the test is over
        return real(*args)

    # Jobs are pickled by name, so the worker resolves the name to this replacement.
    scan.scan_part = held  # type: ignore[assignment]


# A repository whose tree holds this file: its listing is held (hold_marked_listings).
HOLD_MARK = b"HOLD"


def _hold_marked_listings(port: int) -> None:
    """Zygote init: ``list_or_scan`` of a commit whose tree holds :data:`HOLD_MARK`
    checks in on 127.0.0.1:``port``, then waits; other repositories are analyzed."""
    from dulwich.repo import Repo

    real = scan.list_or_scan

    def held(path: str, commit: str, *rest: Any) -> Any:
        with Repo(path) as repo:
            marked = HOLD_MARK in repo[repo[commit.encode()].tree]  # type: ignore[attr-defined,operator]
        if marked:
            with socket.create_connection(("127.0.0.1", port)) as conn:
                conn.sendall(b"%d\n" % os.getpid())
                conn.recv(1)
        return real(path, commit, *rest)

    scan.list_or_scan = held  # type: ignore[assignment]


class WorkerGate:
    """The test's side: who checked in (worker pids, in order), and the go."""

    def __init__(self) -> None:
        self.port = 0
        self.checked_in: list[int] = []
        self.opened = False
        self._held: list[trio.SocketStream] = []
        self._changed = trio.Event()

    @property
    def init(self) -> Callable[[], None]:
        """The ``init`` for ``open_worker_pool``; needs :meth:`serve` started."""
        assert self.port, "start serve() first"
        return functools.partial(_hold_scan_parts, self.port)

    @property
    def init_for_marked_listings(self) -> Callable[[], None]:
        """The ``init`` that holds the listings of repositories marked with
        :data:`HOLD_MARK` (and no scan part); needs :meth:`serve` started."""
        assert self.port, "start serve() first"
        return functools.partial(_hold_marked_listings, self.port)

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._handle, listeners)

    async def wait_checked_in(self, count: int) -> list[int]:
        """Wait until ``count`` parts have checked in; the pids of those that did.

        The bound only turns a hang (the parts never overlap) into a failure.
        """
        await trio.lowlevel.checkpoint()
        with trio.fail_after(120):
            while len(self.checked_in) < count:
                await self._changed.wait()
        return self.checked_in[:count]

    async def open(self) -> None:
        """Let every held part go, and every later one through at once."""
        await trio.lowlevel.checkpoint()
        self.opened = True
        held, self._held = self._held, []
        for stream in held:
            with contextlib.suppress(trio.BrokenResourceError):
                await stream.send_all(b"g")

    async def _handle(self, stream: trio.SocketStream) -> None:
        line = b""
        while not line.endswith(b"\n"):
            chunk = await stream.receive_some(64)
            if not chunk:
                return
            line += chunk
        self.checked_in.append(int(line))
        if not self.opened:
            self._held.append(stream)
        self._changed.set()
        self._changed = trio.Event()
        with contextlib.suppress(trio.BrokenResourceError):  # the worker was killed
            if self.opened:
                await stream.send_all(b"g")
            # Keep the connection until the worker ends it (it finished, or was killed).
            while await stream.receive_some(64):
                pass

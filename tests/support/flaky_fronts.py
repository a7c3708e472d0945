"""Servers on 127.0.0.1 that fail the way hosts under load do, then serve (issue 43):
run in the test's trio loop, in front of a real git server, recording what they saw.

- :class:`RecoveringHttp`: its port refuses every connection (bound, not listening:
  the kernel answers the SYN with a reset) until :meth:`RecoveringHttp.recover`, which
  is synchronous (the kernel queues connections from that call on); then it relays to
  a smart-HTTP git server and records each request.
- :class:`FlakyGit`: a git:// front whose first ``failures`` connections per
  repository end one way (``behaviour``): ``rate_limited`` answers an ``ERR`` line
  saying it rate-limits, as forges do over git:// and ssh; ``silent`` says nothing
  until the client gives up; ``hang_up`` closes without a word. Later connections
  are relayed to a real ``git daemon``.
"""

from __future__ import annotations

import contextlib
import socket
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import trio

from .servers import git_daemon, http_git_server
from .throttling_http import ThrottlingHttp

RATE_LIMITED_ERR = b"ERR rate limit exceeded: too many requests, try again later\n"


class RecoveringHttp(ThrottlingHttp):
    """A :class:`ThrottlingHttp` (no throttling) whose port refuses until :meth:`recover`."""

    def __init__(self, upstream_port: int) -> None:
        super().__init__(upstream_port)
        self._socket = _bound_socket()
        self.port = self._socket.getsockname()[1]
        self._up = trio.Event()

    def recover(self) -> None:
        """Listen from now on (sync: the kernel accepts into the backlog at once)."""
        if not self._up.is_set():
            self._socket.listen(128)
            self._up.set()

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        self._started = trio.current_time()
        task_status.started()
        try:
            await self._up.wait()
            listener = trio.SocketListener(trio.socket.from_stdlib_socket(self._socket))
            await trio.serve_listeners(self._handle, [listener])
        finally:
            self._socket.close()


def _bound_socket() -> socket.socket:
    """A socket bound to a free port of 127.0.0.1 without "404" in it (the classifier
    would read it in a message), not listening: connections to it are refused."""
    while True:
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        if "404" not in str(sock.getsockname()[1]):
            return sock
        sock.close()


@asynccontextmanager
async def recovering_http(base: Path) -> AsyncIterator[RecoveringHttp]:
    """Every ``*.git`` in ``base``, behind a port that refuses until ``recover()``."""
    with http_git_server(base) as upstream:
        server = RecoveringHttp(upstream.port)
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            yield server
            nursery.cancel_scope.cancel()


@dataclass
class FlakyGit:
    """The git:// front (module docstring); ``seen`` counts connections per repository."""

    upstream_port: int
    behaviour: str
    failures: int = 1
    seen: Counter[str] = field(default_factory=Counter)
    port: int = 0
    _failing: Counter[str] = field(default_factory=Counter)

    def fail_next(self, name: str, n: int = 1) -> None:
        """Fail the next ``n`` connections for ``name`` (after its first ``failures``)."""
        self._first(name)
        self._failing[name] += n

    def _first(self, name: str) -> None:
        if name not in self.seen:
            self.seen[name] = 0
            self._failing[name] = self.failures

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}.git"

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        while "404" in str(listeners[0].socket.getsockname()[1]):  # see _bound_socket
            await listeners[0].aclose()
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, client: trio.SocketStream) -> None:
        async with client:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                request = await _read_request(client)
                if request is None:
                    return
                path = request[4:].split(b"\0", 1)[0].rsplit(b"/", 1)[-1]
                name = path.decode("latin-1").removesuffix(".git")
                self._first(name)
                self.seen[name] += 1
                if self._failing[name] <= 0:
                    await _relay(client, self.upstream_port, request)
                    return
                self._failing[name] -= 1
                if self.behaviour == "rate_limited":
                    await client.send_all(b"%04x" % (len(RATE_LIMITED_ERR) + 4) + RATE_LIMITED_ERR)
                elif self.behaviour == "silent":
                    while await client.receive_some():  # until the client gives up
                        pass
                # hang_up: closed without a word


async def _read_request(client: trio.SocketStream) -> bytes | None:
    """The git:// request pkt-line, with its length prefix; None if the client left."""
    data = b""
    while len(data) < 4 or len(data) < int(data[:4], 16):
        piece = await client.receive_some(65536)
        if not piece:
            return None
        data += piece
    return data


async def _relay(client: trio.SocketStream, port: int, request: bytes) -> None:
    upstream = await trio.open_tcp_stream("127.0.0.1", port)
    async with upstream, trio.open_nursery() as nursery:
        await upstream.send_all(request)

        async def back() -> None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                while data := await upstream.receive_some(65536):
                    await client.send_all(data)
            nursery.cancel_scope.cancel()

        nursery.start_soon(back)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await client.receive_some(65536):
                await upstream.send_all(data)
        # The client half-closed: the answer still comes back.


@asynccontextmanager
async def flaky_git(base: Path, behaviour: str, failures: int = 1) -> AsyncIterator[FlakyGit]:
    with git_daemon(base) as daemon:
        server = FlakyGit(daemon.port, behaviour, failures)
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            yield server
            nursery.cancel_scope.cancel()

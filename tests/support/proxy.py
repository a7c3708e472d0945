"""A throttling, recording TCP proxy for the tests, run in the test's own trio loop: it
makes a transfer slow enough to interrupt, and records what went through it (ADR 0010)."""

from __future__ import annotations

import contextlib
import re
import sys
from dataclasses import dataclass

import trio


@dataclass
class _Connection:
    client: trio.SocketStream
    path: str = "?"  # the repository, once the client's request has been read
    request: bytes = b""
    asked_all: bool = False  # the client half-closed: no request will follow
    wanted: bool = False  # the client asked for objects: a pack transfer, not a listing
    sent: bytes = b""  # the end of what the client sent, for a want line cut in two
    gone: bool = False  # the server finished answering, or a side broke the connection


class OnLoopback:
    """A TCP server of a test's own on 127.0.0.1 and a free port (``port`` once started
    with ``nursery.start(server.serve)``); a subclass answers each connection in
    ``_handle``."""

    port = 0

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        task_status.started()
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, client: trio.SocketStream) -> None:
        raise NotImplementedError


class ThrottlingProxy(OnLoopback):
    """A TCP proxy, run in the test's trio loop, that forwards at most ``rate`` bytes/s.

    It reads from the server only as fast as it forwards. A killed server's kernel
    may still hold megabytes it had sent (socket buffers outlive the process), so
    ``cut()`` ends every connection before its next chunk, as the server's death
    would without those buffers. ``forwarded`` counts bytes sent to the client;
    ``wait_forwarded(n)`` returns once n bytes went through.

    What happened is recorded in order. A connection counts as open (``active``,
    ``max_active``, ``timeline``) from its accept until the server has finished
    answering (or either side broke it); ``log`` has ("request", path) for each
    git:// request, ("want", path) when its client asks for objects (a pack
    transfer, which a bare ref listing never does), and ("closed", path) for each
    end. Once the client has half-closed (git clients do, after their last
    request), the proxy holds back the latest chunk
    of the answer until the next one or the server's end of file: the close is
    recorded before the client can have the whole answer, so a client cannot finish
    its clone, and let the next one start, before its close is on record, however
    the event loop orders its tasks.

    With ``hold=(limit, total)``, the server's answers flow only while ``limit``
    connections are open, or once ``total`` connections have been made (nothing is
    left to come): a client that leaves a slot idle while work is queued stalls.
    """

    def __init__(
        self,
        upstream_port: int,
        rate: int = 256 * 1024,
        chunk: int = 16 * 1024,
        hold: tuple[int, int] | None = None,
    ) -> None:
        self.upstream_port = upstream_port
        self.rate = rate
        self.chunk = chunk
        self.hold = hold
        self.forwarded = 0
        self.connections = 0
        self.active = 0
        self.max_active = 0
        self.timeline: list[tuple[float, int]] = []  # (trio time, connections open after)
        self.log: list[tuple[str, str]] = []  # ("request" | "want" | "closed", repository path)
        self._progress = trio.Event()
        self._changed = trio.Event()
        self._cut = False
        self.port = 0

    def cut(self) -> None:
        """Forward nothing more: each connection closes before its next chunk."""
        self._cut = True

    def pause(self) -> None:
        """Forward nothing from the server until :meth:`release`: each answer waits
        before its next chunk (connections stay open, and counted)."""
        self.hold = (sys.maxsize, sys.maxsize)

    def release(self) -> None:
        """Let everything flow from now on, whatever ``hold`` said."""
        self.hold = None
        self._changed.set()
        self._changed = trio.Event()

    async def wait_forwarded(self, n: int) -> None:
        while self.forwarded < n:
            await self._progress.wait()

    async def wait_idle(self) -> None:
        """Return once no connection is open."""
        while self.active:
            await self._changed.wait()

    async def _handle(self, client: trio.SocketStream) -> None:
        connection = _Connection(client)
        self.connections += 1
        self._count(+1)
        try:
            try:
                server = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
            except OSError:
                await client.aclose()
                return
            async with client, server, trio.open_nursery() as nursery:
                nursery.start_soon(self._upload, connection, server, nursery.cancel_scope)
                nursery.start_soon(self._download, server, connection, nursery.cancel_scope)
        finally:
            self._gone(connection)

    def _gone(self, connection: _Connection) -> None:
        if not connection.gone:
            connection.gone = True
            self.log.append(("closed", connection.path))
            self._count(-1)

    def _count(self, change: int) -> None:
        self.active += change
        self.max_active = max(self.max_active, self.active)
        self.timeline.append((trio.current_time(), self.active))
        self._changed.set()
        self._changed = trio.Event()

    async def _flowing(self) -> None:
        while self.hold is not None:  # None again once released
            limit, total = self.hold
            if self.active >= limit or self.connections >= total:
                return
            await self._changed.wait()

    async def _upload(
        self, connection: _Connection, server: trio.SocketStream, scope: trio.CancelScope
    ) -> None:
        try:
            while True:
                try:
                    data = await connection.client.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    # The client reset the connection (killed with data it had not
                    # read): no end of file reaches the server, which would wait for
                    # wants that never come, the connection open and counted.
                    scope.cancel()
                    return
                if not data:
                    break
                if connection.path == "?":
                    self._read_request(connection, data)
                elif not connection.wanted:
                    self._read_wants(connection, data)
                await server.send_all(data)
            connection.asked_all = True
            await server.send_eof()  # the client half-closes after its last request
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the server is done or gone: _download forwards what it sent, then ends

    def _read_request(self, connection: _Connection, data: bytes) -> None:
        # A git:// request: pkt-line "git-upload-pack /name.git\0host=...\0".
        connection.request += data
        found = re.search(rb"git-upload-pack (\S+?)\x00", connection.request)
        if found or len(connection.request) > 4096:
            connection.path = found.group(1).decode() if found else "-"
            self.log.append(("request", connection.path))

    def _read_wants(self, connection: _Connection, data: bytes) -> None:
        # A pkt-line "want <sha>": the client fetches objects. A ref listing alone
        # (ls-remote, an incremental run's HEAD check) sends none, only a flush.
        connection.sent = connection.sent[-64:] + data
        if re.search(rb"[0-9a-f]{4}want [0-9a-f]{40}", connection.sent):
            connection.wanted = True
            self.log.append(("want", connection.path))

    async def _download(
        self, server: trio.SocketStream, connection: _Connection, scope: trio.CancelScope
    ) -> None:
        held = b""  # maybe the answer's last chunk: sent once the next one (or the end) came
        try:
            while data := await server.receive_some(self.chunk):
                if held:
                    await self._flowing()
                    await self._forward(connection.client, held)
                    held = b""
                if connection.asked_all:
                    held = data
                else:  # more requests may follow, waiting for this answer: no holding back
                    await self._flowing()
                    await self._forward(connection.client, data)
            self._gone(connection)  # recorded before the client can have everything
            if held:  # not held back by `hold`: this connection no longer counts
                await self._forward(connection.client, held)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        scope.cancel()  # the server is done or gone: close both sides

    async def _forward(self, client: trio.SocketStream, data: bytes) -> None:
        await trio.sleep(len(data) / self.rate)  # the throttle itself
        if self._cut:
            raise trio.BrokenResourceError("cut")  # _download closes both sides
        await client.send_all(data)
        self.forwarded += len(data)
        self._progress.set()
        self._progress = trio.Event()


class RedisRelay(OnLoopback):
    """A TCP relay to Redis that sets ``seen`` once a client's requests hold ``watch``;
    with ``hold_at``, it forwards nothing more from the request that brings the count of
    ``watch`` to ``hold_at`` on (that request never reaches Redis, the client waits)."""

    def __init__(self, upstream_port: int, watch: bytes, *, hold_at: int | None = None) -> None:
        self.upstream_port = upstream_port
        self.watch = watch
        self.hold_at = hold_at
        self.count = 0
        self.seen = trio.Event()
        self.held = trio.Event()
        self.port = 0

    async def _handle(self, client: trio.SocketStream) -> None:
        upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
        async with client, upstream, trio.open_nursery() as nursery:
            nursery.start_soon(self._pump, client, upstream, True)
            nursery.start_soon(self._pump, upstream, client, False)

    async def _pump(
        self, source: trio.SocketStream, sink: trio.SocketStream, requests: bool
    ) -> None:
        # The client may be killed at any moment: a broken side ends the relay's pump.
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await source.receive_some():
                if requests and (found := data.upper().count(self.watch)):
                    self.count += found
                    self.seen.set()
                    if self.hold_at is not None and self.count >= self.hold_at:
                        self.held.set()
                        await trio.sleep_forever()
                await sink.send_all(data)
            await sink.send_eof()


class FaultyRelay(OnLoopback):
    """A TCP relay to Redis for one client, that a test partitions: ``blackhole()``
    forwards nothing more either way while connections stay open and new ones are
    accepted (a network dropping packets: the client hears nothing until its own
    timeouts); ``cut()`` closes every connection, and each new one at once (a route
    that refuses); ``restore()`` relays again, on new connections. ``refused`` counts
    the connections closed at once while cut."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.mode = "relay"
        self.refused = 0
        self._changed = trio.Event()
        self._open: set[trio.CancelScope] = set()
        self.port = 0

    def blackhole(self) -> None:
        self.mode = "blackhole"

    def cut(self) -> None:
        self.mode = "cut"
        for scope in self._open:
            scope.cancel()

    def restore(self) -> None:
        self.mode = "relay"

    async def wait_refused(self, n: int) -> None:
        while self.refused < n:
            await self._changed.wait()

    async def _handle(self, client: trio.SocketStream) -> None:
        async with client:
            if self.mode == "cut":
                self.refused += 1
                self._changed.set()
                self._changed = trio.Event()
                return
            with trio.CancelScope() as scope:
                self._open.add(scope)
                try:
                    if self.mode == "blackhole":
                        await self._drop(client)
                        return
                    upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
                    async with upstream, trio.open_nursery() as nursery:
                        nursery.start_soon(self._pump, client, upstream)
                        nursery.start_soon(self._pump, upstream, client)
                finally:
                    self._open.discard(scope)

    async def _drop(self, client: trio.SocketStream) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while await client.receive_some():
                pass

    async def _pump(self, source: trio.SocketStream, sink: trio.SocketStream) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await source.receive_some():
                if self.mode == "relay":  # else dropped, as by a blackhole
                    await sink.send_all(data)
            await sink.send_eof()

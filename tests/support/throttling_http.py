"""A smart-HTTP git server that pushes back as forges do (issue 43), on 127.0.0.1, run
in the test's own trio loop in front of dulwich's smart-HTTP app
(:func:`.servers.http_git_server`). It records what it saw in trio time (ADR 0010).

Every connection carries one request: the app behind answers HTTP/1.0 and closes, and
every answer of the server's own says ``Connection: close``. A request, in order, is

1. for a repository given a permanent error (``fail(name, 404 | 401)``): answered so;
2. past the request budget (``budget`` requests per ``window`` seconds, in fixed
   windows from the server's start; every request that gets past this step counts):
   429, ``Retry-After`` and ``RateLimit-Reset`` the seconds left in the window,
   ``X-RateLimit-Reset`` its end in Unix time (GitHub's header);
3. with ``limit`` requests already in flight: ``refuse_status`` (429, or 503), with
   ``Retry-After: retry_after`` (whole seconds, rounded up; an HTTP date with
   ``retry_after_date``; no header when ``retry_after`` is None);
4. otherwise admitted, and in flight until its answer is sent. An answer that holds a
   pack is reset (a TCP RST) after its signature and half of what follows when it
   is the ``reset_every``-th pack answer, or when a choice seeded by (``seed``, the
   repository, how many pack answers it had before) falls under ``reset_fraction``:
   never a matter of timing, and the same repositories whatever the order of arrival.

A request counts as in flight from its admission until its answer's last byte but one
has gone: the record is made before a client can have the whole answer and send its
next request, however the event loop orders its tasks (see proxy.py).

Run it on trio's real clock or a ``MockClock`` without autojump (then a window or a
``service_time`` passes when the test jumps). Its port never holds "404": today's
classifier reads that in a message as ``not_found``, a 429 included (issue 43).
"""

from __future__ import annotations

import math
import random
import re
import socket
import struct
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http import HTTPStatus
from pathlib import Path
from typing import Any

import trio

from .http_bits import read_head as _read_head
from .http_bits import relay as _relay
from .http_bits import request_line as _request_line
from .http_bits import status_of as _status
from .proxy import OnLoopback
from .servers import http_git_server

RATE_LIMITED = b"This request was rate-limited due to too many requests.\n"
# A pack's signature, in a side-band packet (dulwich sends it in one of its own) or not.
_PACK_HEADER = re.compile(rb"(?:\x01|NAK\n)PACK")
_REPOSITORY = re.compile(r"/([^/?]+?)\.git(?:[/?]|$)")
_DRAIN_BOUND = 30.0  # seconds a refused client has to close: a safety net, not a sync


@dataclass(frozen=True)
class Throttling:
    """How the server pushes back (the module docstring says in which order)."""

    limit: int | None = None  # requests in flight at most; None: no limit
    refuse_status: int = 429  # or 503
    retry_after: float | None = 1.0
    retry_after_date: bool = False
    budget: int | None = None  # requests per window; None: no budget
    window: float = 60.0
    reset_every: int = 0  # reset every n-th pack answer; 0: none
    reset_fraction: float = 0.0
    seed: int = 0
    service_time: float = 0.0  # trio seconds an admitted request takes at least


@dataclass(frozen=True)
class Request:
    """One request and what the server did with it, in trio time.

    ``repository`` is the client: every request of a clone asks for its one repository.
    ``outcome`` is ``served``, ``reset`` (mid-pack), ``limited`` (step 3),
    ``over_budget`` (step 2), ``permanent`` (step 1), or ``gone`` (the client or the app
    behind broke the connection first). ``admitted`` is None unless it was in flight.
    """

    repository: str
    method: str
    target: str
    arrived: float
    ended: float
    status: int
    outcome: str
    admitted: float | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class Return:
    """A refused request, and when its client asked again (None: it never did)."""

    refused: Request
    came_back: float | None

    @property
    def waited(self) -> float | None:
        """Seconds from the refusal's answer to the client's next request."""
        return None if self.came_back is None else self.came_back - self.refused.ended


@dataclass
class _Exchange:
    repository: str
    method: str
    target: str
    arrived: float
    admitted: float | None = None
    done: bool = False


@dataclass
class ThrottlingHttp(OnLoopback):
    """The server; ``serve`` it in a nursery (or use :func:`throttling_http`)."""

    upstream_port: int
    throttling: Throttling = field(default_factory=Throttling)
    requests: list[Request] = field(default_factory=list)  # in the order they ended
    timeline: list[tuple[float, int]] = field(default_factory=list)  # (time, in flight)
    in_flight: int = 0
    max_in_flight: int = 0
    port: int = 0
    _failing: dict[str, int] = field(default_factory=dict)
    _held: bool = False
    _hold_after: int = 0  # pack bytes an answer sends before it waits (0: none)
    _changed: trio.Event = field(default_factory=trio.Event)
    _started: float = 0.0
    _windows: Counter[int] = field(default_factory=Counter)
    _packs: int = 0
    _packs_of: Counter[str] = field(default_factory=Counter)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}.git"

    def fail(self, repository: str, status: int) -> None:
        """Answer every request for ``repository`` with ``status`` (404 or 401) from now on."""
        self._failing[repository] = status

    def configure(self, **changes: Any) -> None:
        """Change how the server pushes back, from the next request on."""
        self.throttling = replace(self.throttling, **changes)

    def hold(self, *, pack_bytes: int = 0) -> None:
        """Admitted requests wait before they are answered, until :meth:`release`; with
        ``pack_bytes``, only an answer that holds a pack waits, after its signature and
        that many bytes of what follows (a clone caught mid-pack)."""
        self._held, self._hold_after = True, pack_bytes

    def release(self) -> None:
        self._held = False
        self._signal()

    async def wait_in_flight(self, n: int) -> None:
        while self.in_flight < n:
            await self._changed.wait()

    async def wait_requests(self, n: int) -> None:
        """Return once ``n`` requests have ended."""
        while len(self.requests) < n:
            await self._changed.wait()

    def intervals(self) -> list[tuple[float, float]]:
        """(admitted, ended) of every request that was in flight, in the order they ended."""
        return [(r.admitted, r.ended) for r in self.requests if r.admitted is not None]

    def returns(self) -> list[Return]:
        """Each refusal (429 or 503) and when that client (repository) asked again."""
        ordered = sorted(self.requests, key=lambda r: r.arrived)
        found = []
        for i, refused in enumerate(ordered):
            if refused.status in (429, 503):
                later = (r.arrived for r in ordered[i + 1 :] if r.repository == refused.repository)
                found.append(Return(refused, next(later, None)))
        return found

    def resets(self) -> list[Request]:
        return [r for r in self.requests if r.outcome == "reset"]

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        while "404" in str(listeners[0].socket.getsockname()[1]):  # see the module docstring
            await listeners[0].aclose()
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        self._started = trio.current_time()
        task_status.started()
        await trio.serve_listeners(self._handle, listeners)

    async def _handle(self, client: trio.SocketStream) -> None:
        async with client:
            arrived = trio.current_time()
            request = await _read_head(client)
            if request is None:
                return
            method, target = _request_line(request)
            found = _REPOSITORY.search(target)
            exchange = _Exchange(found[1] if found else "", method, target, arrived)
            if len(request) > 65536:
                await self._refuse(client, exchange, 431, "permanent", {})
            elif exchange.repository in self._failing:
                status = self._failing[exchange.repository]
                challenge = {"WWW-Authenticate": 'Basic realm="git"'} if status == 401 else {}
                await self._refuse(client, exchange, status, "permanent", challenge)
            elif (wait := self._over_budget(arrived)) is not None:
                await self._refuse(client, exchange, 429, "over_budget", self._budget(wait), wait)
            elif self.throttling.limit is not None and self.in_flight >= self.throttling.limit:
                wait = self.throttling.retry_after
                headers = {} if wait is None else {"Retry-After": self._retry_after(wait)}
                status = self.throttling.refuse_status
                await self._refuse(client, exchange, status, "limited", headers, wait)
            else:
                await self._admit(client, exchange, request)

    def _over_budget(self, now: float) -> float | None:
        """Seconds left in the window when its budget is spent; else counts the request."""
        budget = self.throttling.budget
        if budget is None:
            return None
        index = math.floor((now - self._started) / self.throttling.window)
        if self._windows[index] >= budget:
            return self._started + (index + 1) * self.throttling.window - now
        self._windows[index] += 1
        return None

    def _budget(self, wait: float) -> dict[str, str]:
        seconds = str(max(1, math.ceil(wait)))
        return {
            "Retry-After": self._retry_after(wait),
            "RateLimit-Limit": str(self.throttling.budget),
            "RateLimit-Remaining": "0",
            "RateLimit-Reset": seconds,  # the IETF draft's: seconds from now
            "X-RateLimit-Reset": str(math.ceil(time.time() + wait)),  # GitHub's: Unix time
        }

    def _retry_after(self, seconds: float) -> str:
        if not self.throttling.retry_after_date:
            return str(max(0, math.ceil(seconds)))
        # Rounded up to the next whole second: the date's resolution never shortens the wait.
        when = datetime.now(UTC) + timedelta(seconds=seconds)
        if when.microsecond:
            when = when.replace(microsecond=0) + timedelta(seconds=1)
        return format_datetime(when, usegmt=True)

    async def _refuse(
        self,
        client: trio.SocketStream,
        exchange: _Exchange,
        status: int,
        outcome: str,
        headers: dict[str, str],
        retry_after: float | None = None,
    ) -> None:
        body = RATE_LIMITED if status in (429, 503) else f"{HTTPStatus(status).phrase}\n".encode()
        lines = [
            f"HTTP/1.1 {status} {HTTPStatus(status).phrase}",
            *(f"{k}: {v}" for k, v in headers.items()),
        ]
        lines += ["Content-Type: text/plain", f"Content-Length: {len(body)}", "Connection: close"]
        try:
            await client.send_all("\r\n".join(lines).encode() + b"\r\n\r\n" + body)
            self._record(exchange, status, outcome, retry_after)
            await client.send_eof()
            # Read what the client still sends (a POST's body) until it closes: a socket
            # closed with unread data sends a reset, which may destroy the answer.
            with trio.move_on_after(_DRAIN_BOUND):
                while await client.receive_some():
                    pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self._record(exchange, status, "gone", retry_after)

    async def _admit(self, client: trio.SocketStream, exchange: _Exchange, request: bytes) -> None:
        exchange.admitted = trio.current_time()
        self._count(+1)
        status = 0
        try:
            await trio.sleep(self.throttling.service_time)
            response = await self._ask_upstream(client, request)
            sent = self._before_hold(response)
            await client.send_all(response[:sent])
            while self._held and (sent or not self._hold_after):  # see hold()
                await self._changed.wait()
            status = _status(response)
            cut = self._reset_at(exchange.repository, response)
            if cut is None:
                await client.send_all(response[sent:-1])
                self._record(exchange, status, "served")
                await client.send_all(response[-1:])
            else:
                await client.send_all(response[sent : max(cut, sent)])
                self._record(exchange, status, "reset")
                linger = struct.pack("ii", 1, 0)  # close with a reset
                client.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass
        finally:
            self._record(exchange, status, "gone")  # a no-op once recorded

    async def _ask_upstream(self, client: trio.SocketStream, request: bytes) -> bytes:
        """The app's whole answer to ``request`` and the rest of its body from ``client``."""
        upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
        response = bytearray()
        async with upstream, trio.open_nursery() as nursery:
            await upstream.send_all(request)
            nursery.start_soon(_relay, client, upstream)
            while data := await upstream.receive_some(65536):
                response += data
            nursery.cancel_scope.cancel()
        return bytes(response)

    def _before_hold(self, response: bytes) -> int:
        """Bytes of ``response`` sent before a hold: up to ``_hold_after`` bytes past
        a pack's signature (never its last byte), else none."""
        pack = _PACK_HEADER.search(response) if self._held and self._hold_after else None
        if pack is None:
            return 0
        return min(pack.end() + self._hold_after, len(response) - 1)

    def _reset_at(self, repository: str, response: bytes) -> int | None:
        """Where to cut ``response`` (a pack answer chosen for a reset), else None."""
        pack = _PACK_HEADER.search(response)
        if pack is None:
            return None
        self._packs += 1
        before = self._packs_of[repository]
        self._packs_of[repository] += 1
        every = self.throttling.reset_every
        chosen = bool(every) and self._packs % every == 0
        fraction = self.throttling.reset_fraction
        if fraction and not chosen:
            choice = random.Random(f"{self.throttling.seed}/{repository}/{before}")
            chosen = choice.random() < fraction
        if not chosen:
            return None
        return pack.end() + (len(response) - pack.end()) // 2

    def _record(
        self, exchange: _Exchange, status: int, outcome: str, retry_after: float | None = None
    ) -> None:
        if exchange.done:
            return
        exchange.done = True
        e, now = exchange, trio.current_time()
        made = (e.repository, e.method, e.target, e.arrived, now, status, outcome, e.admitted)
        self.requests.append(Request(*made, retry_after))
        if exchange.admitted is not None:
            self._count(-1)
        self._signal()

    def _count(self, change: int) -> None:
        self.in_flight += change
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        self.timeline.append((trio.current_time(), self.in_flight))
        self._signal()

    def _signal(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


@asynccontextmanager
async def throttling_http(base: Path, **settings: Any) -> AsyncIterator[ThrottlingHttp]:
    """Every ``*.git`` in ``base``, served with :class:`Throttling` ``settings``."""
    with http_git_server(base) as upstream:
        server = ThrottlingHttp(upstream.port, Throttling(**settings))
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            yield server
            nursery.cancel_scope.cancel()

"""The HTTP/1.1 server the four forges share, on 127.0.0.1, in the test's trio loop.

Each connection carries one request and is closed after its answer (``Connection:
close``): a client sees a forge that does not keep connections alive, and the record
holds each request once, in the order the answers were made. A subclass answers in
:meth:`ForgeServer.answer` (synchronous: nothing a forge decides waits on anything).

Time is trio's: a rate window ends ``window`` trio seconds after it began, so a test on
a ``MockClock`` (without autojump) moves past a reset with ``clock.jump``. Headers that
carry Unix time map trio time onto ``epoch`` (the Unix time the server started, or the
test's own fixed value): ``unix(t) = epoch + (t - started)``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from email.utils import formatdate
from http import HTTPStatus
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlencode, urlsplit

import trio

_HEAD_CAP = 65536  # bytes of request line and headers; past it: 431
_DRAIN_BOUND = 30.0  # seconds a refused client has to close: a safety net, not a sync


@dataclass(frozen=True)
class Seen:
    """One request as the server read it, and the status it was answered with.

    ``headers`` has lower-cased names (the last of a repeated header); ``query`` every
    value of each parameter, in order. ``at`` is trio time at arrival."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    at: float
    status: int = 0

    @property
    def host(self) -> str:
        return self.headers.get("host", "")

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")

    def param(self, name: str, default: str | None = None) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else default

    def page_key(self) -> tuple[str, str]:
        """The page asked for: the path and the query in a canonical order."""
        return self.path, urlencode(sorted((k, v) for k, vs in self.query.items() for v in vs))


@dataclass
class Answer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


def json_answer(status: int, value: Any, headers: dict[str, str] | None = None) -> Answer:
    body = json.dumps(value, separators=(",", ":")).encode()  # compact, as forges send
    return Answer(
        status, {"Content-Type": "application/json; charset=utf-8", **(headers or {})}, body
    )


@dataclass
class Budget:
    """A primary rate limit: ``limit`` requests per window of ``window`` trio seconds,
    the window starting at the first request after the last one ended (GitHub's and
    GitLab's: the reset is a moment, not a sliding count)."""

    limit: int
    window: float = 3600.0
    used: int = 0
    reset_at: float | None = None

    def refresh(self, now: float) -> float:
        """Start a new window when the last one is over; the current one's end."""
        if self.reset_at is None or now >= self.reset_at:
            self.reset_at, self.used = now + self.window, 0
        return self.reset_at

    def take(self, now: float) -> bool:
        """Count a request at ``now``; False (and nothing counted) when none is left."""
        self.refresh(now)
        if self.used >= self.limit:
            return False
        self.used += 1
        return True

    @property
    def remaining(self) -> int:
        return self.limit - self.used


@dataclass
class Refusals:
    """The next ``count`` requests are refused with ``status`` and ``Retry-After``
    (a secondary limit, a 429 of a forge without a budget): armed by the test."""

    count: int = 0
    status: int = 429
    retry_after: int | None = 60

    def take(self) -> bool:
        if self.count <= 0:
            return False
        self.count -= 1
        return True


Tamper = Callable[[Seen, Answer, int], Answer]
S = TypeVar("S", bound="ForgeServer")


def failing_from(n: int, answer: Answer) -> Tamper:
    """A tamper that answers ``answer`` from the ``n``-th request on (counted from 1,
    every request counted): a listing that breaks midway, the pages before it served."""

    def tamper(request: Seen, served: Answer, index: int) -> Answer:
        return replace(answer, headers=dict(answer.headers)) if index >= n else served

    return tamper


def on_request(n: int, change: Tamper) -> Tamper:
    """A tamper that changes the ``n``-th answer only (counted from 1)."""

    def tamper(request: Seen, served: Answer, index: int) -> Answer:
        return change(request, served, index) if index == n else served

    return tamper


def with_headers(served: Answer, **headers: str | None) -> Answer:
    """``served`` with headers set (a value) or removed (None); ``_`` in a name is ``-``."""
    changed = dict(served.headers)
    for name, value in headers.items():
        name = name.replace("_", "-")
        changed = {k: v for k, v in changed.items() if k.lower() != name.lower()}
        if value is not None:
            changed[name] = value
    return replace(served, headers=changed)


def rewrite(change: Callable[[Any], None]) -> Tamper:
    """A tamper that changes each answer's JSON body in place with ``change``."""

    def tamper(request: Seen, served: Answer, index: int) -> Answer:
        body = json.loads(served.body)
        change(body)
        return replace(served, body=json.dumps(body).encode())

    return tamper


async def serving(nursery: trio.Nursery, server: S) -> S:
    """``server``, started in ``nursery``."""
    await nursery.start(server.serve)
    return server


class ForgeServer:
    """A forge's API on 127.0.0.1; ``serve`` it in a nursery. Every request is in
    ``seen``, in the order answered. ``tamper`` (the test's) sees each request, the
    forge's answer and the request's number (from 1), and returns what is sent instead:
    a hostile or failing forge without a server of its own."""

    def __init__(self, *, epoch: float | None = None) -> None:
        self.seen: list[Seen] = []
        self.tamper: Tamper | None = None
        self.port = 0
        self.started = 0.0
        self.epoch = epoch
        self.tls: ssl.SSLContext | None = None  # set before serve(): https on loopback
        self._changed = trio.Event()

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    def unix(self, when: float) -> float:
        """Unix time of trio time ``when`` (see the module docstring)."""
        assert self.epoch is not None, "serve() sets it"
        return self.epoch + (when - self.started)

    def http_date(self, when: float) -> str:
        return formatdate(self.unix(when), usegmt=True)

    def answer(self, request: Seen) -> Answer:
        raise NotImplementedError

    def served_pages(self) -> list[tuple[str, str]]:
        """Each page answered 200 (path and canonical query), once per time it was."""
        return [s.page_key() for s in self.seen if s.status == 200]

    async def wait_seen(self, n: int) -> None:
        """Return once ``n`` requests have been answered."""
        await trio.lowlevel.checkpoint()
        while len(self.seen) < n:
            await self._changed.wait()

    async def serve(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        self.started = trio.current_time()
        if self.epoch is None:
            self.epoch = math.floor(time.time())
        task_status.started()
        if self.tls is None:
            await trio.serve_listeners(self._handle, listeners)
        else:
            secure = [trio.SSLListener(one, self.tls, https_compatible=True) for one in listeners]
            await trio.serve_listeners(self._handle, secure)

    async def _handle(self, client: trio.abc.Stream) -> None:
        async with client:
            head = await _read_head(client)
            if head is None:
                return
            request = _parse(head, trio.current_time())
            if request is None:
                answer = Answer(431 if len(head) > _HEAD_CAP else 400)
                request = Seen("", "", {}, {}, trio.current_time())
            else:
                answer = self.answer(request)
            if self.tamper is not None:
                answer = self.tamper(request, answer, len(self.seen) + 1)
            self.seen.append(replace(request, status=answer.status))
            self._changed.set()
            self._changed = trio.Event()
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                date = self.http_date(trio.current_time())
                await client.send_all(_encode(answer, date, head_only=request.method == "HEAD"))
                if answer.status == 431:
                    await _drain(client)


async def _drain(client: trio.abc.Stream) -> None:
    """Read what a refused client still sends until it closes: a socket closed with
    unread data sends a reset, which may destroy the answer before it is read."""
    if isinstance(client, trio.abc.HalfCloseableStream):
        await client.send_eof()
    with trio.move_on_after(_DRAIN_BOUND):
        while await client.receive_some(65536):
            pass


def etag_of(body: bytes) -> str:
    """A weak validator of ``body``, as GitHub sends (``W/"…"``)."""
    return 'W/"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def conditional(request: Seen, answer: Answer) -> Answer:
    """``answer`` with its ETag; a 304 without a body when the client already has it."""
    tag = etag_of(answer.body)
    answer.headers["ETag"] = tag
    if request.headers.get("if-none-match") in (tag, tag.removeprefix("W/")):
        keep = {k: v for k, v in answer.headers.items() if k != "Content-Type"}
        return Answer(304, keep)
    return answer


def link_header(links: list[tuple[str, str]]) -> str:
    """RFC 8288's ``Link``: ``<url>; rel="name"``, comma-separated, in the given order."""
    return ", ".join(f'<{url}>; rel="{rel}"' for rel, url in links)


def with_query(base: str, request: Seen, **changes: object) -> str:
    """The request's own URL on ``base`` with some query parameters changed: a forge's
    next-page link keeps every parameter the client gave."""
    query = {k: vs[-1] for k, vs in request.query.items()}
    query.update({k: str(v) for k, v in changes.items()})
    return f"{base}{request.path}?{urlencode(query)}"


def int_param(request: Seen, name: str, default: int, *, low: int, high: int) -> int | None:
    """A whole-number parameter clamped into [low, high] (what forges do with a page
    size past their maximum); None when it is not a number (the forge's 400/422)."""
    raw = request.param(name)
    if raw is None or raw == "":
        return default
    try:
        return min(high, max(low, int(raw)))
    except ValueError:
        return None


async def _read_head(client: trio.abc.Stream) -> bytes | None:
    data = b""
    with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
        while b"\r\n\r\n" not in data and len(data) <= _HEAD_CAP:
            piece = await client.receive_some(65536)
            if not piece:
                return None
            data += piece
        return data
    return None


def _parse(head: bytes, at: float) -> Seen | None:
    if len(head) > _HEAD_CAP:
        return None
    lines = head.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return None
    target = urlsplit(parts[1])
    headers = {}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            return None
        headers[name.strip().lower()] = value.strip()
    query = parse_qs(target.query, keep_blank_values=True)
    return Seen(parts[0], target.path, query, headers, at)


def _encode(answer: Answer, date: str, *, head_only: bool) -> bytes:
    """The answer on the wire. ``Date`` is the server's clock (trio time on ``epoch``),
    so a client that reads a reset against it waits the same on a MockClock."""
    phrase = HTTPStatus(answer.status).phrase
    lines = [f"HTTP/1.1 {answer.status} {phrase}", f"Date: {date}"]
    lines += [f"{k}: {v}" for k, v in answer.headers.items()]
    if answer.status != 304:  # a 304 has no body, and no length of one
        lines.append(f"Content-Length: {len(answer.body)}")
    lines.append("Connection: close")
    body = b"" if head_only or answer.status == 304 else answer.body
    return "\r\n".join(lines).encode() + b"\r\n\r\n" + body

"""The https side of a clone, in the worker: where credentials go, which redirects are followed.

dulwich sends every HTTP request through the pool manager it is given; this one
wraps urllib3's and decides, request by request (ADR 0013):

- Credentials go only to the repository URL's own origin (scheme, host, port), and
  only once that origin asked for them with a 401, as git does: a server that
  serves the repository anonymously never sees them. After the first challenge
  they go with every request to that origin, so a request body is never sent twice.
- Redirects are followed on GET requests only, that is on the first request of a
  clone (git's ``http.followRedirects=initial``): at most ``MAX_REDIRECTS`` hops,
  never from https to http, never to a URL with user-info or a host that is not a
  host name; a loop is an error. A redirect to another origin carries no
  credentials, since they belong to the first one.
- A server that answers the first request but is not a smart git server (a web
  page, a dumb HTTP server) is told apart from an empty repository.
- Every request asks for its answer uncompressed (``Accept-Encoding: identity``):
  the envelope's limits count what the server sends, and a compressed answer
  expands by up to a thousand times (one the server compresses anyway is counted as
  it expands, ``envelope.py``).
- A server that pushes back (429, 502, 503, 504) fails the clone with a kind the use
  case retries (``throttled``, ``unavailable``; issue 43), carrying the seconds its
  ``Retry-After`` asks for: dulwich would call it an unexpected answer.

:func:`bound_tls_handshake` makes the TLS handshake of every https connection wait
no longer than a read would (issue 38): urllib3 bounds it by the connect timeout
alone, so a server that accepts and never answers held a clone for that long.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..._domain.backoff import parse_reset, parse_retry_after
from ..._domain.errors import ErrorKind
from ..._domain.urls import DEFAULT_PORTS, check_host, redact, visible
from .worker_errors import Failure

__all__ = ["MAX_REDIRECTS", "GuardedPool", "bound_tls_handshake", "origin_of"]

MAX_REDIRECTS = 5  # git's curl default is 20; forges use one or two
_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_SMART_ADVERTISEMENT = "application/x-git-upload-pack-advertisement"

Origin = tuple[str, str, int]
# What a server that pushes back answers, and the kind a clone fails with.
_PUSHBACK = {
    429: (ErrorKind.THROTTLED, "too many requests"),
    502: (ErrorKind.UNAVAILABLE, "bad gateway"),
    503: (ErrorKind.UNAVAILABLE, "service unavailable"),
    504: (ErrorKind.UNAVAILABLE, "gateway timeout"),
}


def origin_of(url: str) -> Origin:
    """(scheme, host, port) with the default port made explicit."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme, 0)


class GuardedPool:
    """A urllib3 pool manager for dulwich that applies the rules above.

    Only the parts dulwich uses: ``headers`` and ``request``.
    """

    def __init__(self, pool: Any, url: str, username: str | None, password: str | None) -> None:
        import urllib3.util

        self._pool = pool
        self._origin = origin_of(url)
        self._authorization: str | None = None
        if username is not None:
            basic = urllib3.util.make_headers(basic_auth=f"{username}:{password or ''}")
            self._authorization = basic["authorization"]
        self._challenged = False  # the origin answered 401: send credentials from now on
        self._first = True
        self.redirected_to = ""  # the last redirect's target, if the first request had any

    @property
    def headers(self) -> Any:
        return self._pool.headers

    def request(
        self, method: str, url: str, *, headers: dict[str, str] | None = None, **kwargs: Any
    ) -> Any:
        first, self._first = self._first, False
        # Credentials are this object's business only; a header given by a caller is dropped.
        clean = {
            k: v
            for k, v in (headers or {}).items()
            if k.lower() not in ("authorization", "accept-encoding")
        }
        clean["Accept-Encoding"] = "identity"  # see the module docstring
        seen = [url]
        while True:
            response = self._send(method, url, clean, kwargs)
            if response.status not in _REDIRECT_STATUSES:
                break
            if not first or method != "GET":
                return response  # dulwich reports the status; see _follow's rules
            url = self._follow(url, response, seen)
            self.redirected_to = url
        if response.status in _PUSHBACK:
            raise _pushed_back(response)
        if first and response.status == 200:
            self._check_smart(response)
        return response

    def _send(self, method: str, url: str, headers: dict[str, str], kwargs: dict[str, Any]) -> Any:
        ours = self._authorization is not None and origin_of(url) == self._origin
        if ours and self._challenged:
            headers = {**headers, "Authorization": self._authorization or ""}
        response = self._pool.request(
            method, url, headers=headers, redirect=False, retries=False, **kwargs
        )
        if response.status == 401 and ours and not self._challenged:
            # The challenge: answer it once. A second 401 means the credentials were
            # refused, and dulwich reports it. (Request bodies are bytes: replayable.)
            self._challenged = True
            _discard(response)
            return self._send(method, url, headers, kwargs)
        return response

    def _follow(self, url: str, response: Any, seen: list[str]) -> str:
        location: str = response.headers.get("Location", "")
        _discard(response)
        target = urljoin(url, location)
        shown = visible(redact(target))[:300]
        if not location:
            raise Failure(ErrorKind.PROTOCOL, f"HTTP {response.status} redirect with no Location")
        parts = urlsplit(target)
        if parts.scheme not in ("https", "http"):
            raise Failure(ErrorKind.PROTOCOL, f"redirect to a URL that is not http(s): {shown}")
        if urlsplit(url).scheme == "https" and parts.scheme == "http":
            raise Failure(ErrorKind.PROTOCOL, f"redirect from https to plain http refused: {shown}")
        if parts.username is not None or parts.password is not None:
            raise Failure(ErrorKind.PROTOCOL, f"redirect to a URL with user-info refused: {shown}")
        try:
            check_host((parts.hostname or "").lower())
            parts.port  # noqa: B018 (raises ValueError for a port out of range)
        except ValueError as exc:
            raise Failure(ErrorKind.PROTOCOL, f"redirect to {shown} refused: {exc}") from None
        if not target.isprintable():
            raise Failure(ErrorKind.PROTOCOL, f"redirect to a URL with control characters: {shown}")
        if target in seen:
            raise Failure(ErrorKind.PROTOCOL, f"redirect loop (back to {shown})")
        if len(seen) > MAX_REDIRECTS:
            raise Failure(
                ErrorKind.PROTOCOL, f"more than {MAX_REDIRECTS} redirects (last: {shown})"
            )
        seen.append(target)
        return target

    @staticmethod
    def _check_smart(response: Any) -> None:
        content_type = response.headers.get("Content-Type", "")
        if content_type.split(";")[0].strip().lower() != _SMART_ADVERTISEMENT:
            _discard(response)
            shown = visible(content_type[:80]) or "none"
            raise Failure(
                ErrorKind.PROTOCOL,
                "the server is not a smart git HTTP server (its answer's Content-Type is "
                f"{shown}); dumb HTTP servers and web pages cannot be cloned",
            )


def server_hint(headers: Any, wall_now: float) -> float | None:
    """The seconds the server asked a client to wait: the longest readable of
    ``Retry-After`` (seconds or an HTTP date), ``RateLimit-Reset`` (seconds) and
    ``X-RateLimit-Reset`` (a Unix time); ``None`` when it asked nothing readable."""
    hints = [
        parse_retry_after(headers.get("Retry-After"), wall_now=wall_now),
        parse_reset(headers.get("RateLimit-Reset"), wall_now=wall_now),
        parse_reset(headers.get("X-RateLimit-Reset"), wall_now=wall_now),
    ]
    readable = [hint for hint in hints if hint is not None]
    return max(readable) if readable else None


def _pushed_back(response: Any) -> Failure:
    """The failure of a clone the server answered 429, 502, 503 or 504."""
    kind, words = _PUSHBACK[response.status]
    wait = server_hint(response.headers, time.time())
    _discard(response)
    asked = f" (it asked for {wait:g} s)" if wait is not None else ""
    failure = Failure(kind, f"HTTP {response.status}: the server said {words}{asked}")
    failure.retry_after = wait
    return failure


def _discard(response: Any) -> None:
    """Drop a response we will not use: closed unread (a hostile server's body may never
    end), then handed back so that the pool opens a fresh connection in its place."""
    response.close()
    response.release_conn()


def bound_tls_handshake(manager: Any, seconds: float, which: str) -> None:
    """Make each https connection of ``manager`` (a urllib3 pool or proxy manager) wait
    at most ``seconds`` (the ``which`` timeout) for each answer of its TLS handshake,
    and fail with a ``timeout`` that says so."""
    import socket

    import urllib3.connection
    import urllib3.connectionpool

    class Connection(urllib3.connection.HTTPSConnection):
        def _new_conn(self) -> socket.socket:
            sock = super()._new_conn()  # connected, within the connect timeout
            sock.settimeout(seconds)  # what the handshake (and a proxy's CONNECT) waits
            return sock

        def connect(self) -> None:
            try:
                super().connect()
            except TimeoutError:  # socket's: urllib3's own are not TimeoutError
                what = "the proxy's CONNECT or " if self.proxy is not None else ""
                raise Failure(
                    ErrorKind.TIMEOUT,
                    f"no answer to {what}the TLS handshake within {seconds:g} s "
                    f"(the {which} timeout)",
                ) from None

    class Pool(urllib3.connectionpool.HTTPSConnectionPool):
        ConnectionCls = Connection

    manager.pool_classes_by_scheme = {**manager.pool_classes_by_scheme, "https": Pool}

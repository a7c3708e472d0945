"""What every forge's listing adapter shares (issue 45, ADR 0023): one GET with its caps,
timeouts and token check, rate-limit waits on trio's clock, and the walk that fetches
every URL once (reading the pages themselves: :mod:`.pages`).

- :class:`ForgeHttp` makes the requests of one forge (its :class:`Dialect`: headers,
  the token's header, which answers are rate limits). HTTP runs in trio worker threads
  on urllib3, as the clone worker's does; each request is bounded by ``timeout``, so no
  thread outlives a cancelled listing for long. No retries, no redirects (a 3xx is the
  listing's error: a redirect is never followed, with or without the token), a body
  read no further than ``MAX_PAGE_BYTES``.
- The token goes only where :meth:`ForgeTokens.for_request` binds it (https, its own
  host and port), decided for every request; plain http only to a loopback instance
  (ADR 0023's ``http://`` for tests), never with a token.
- Rate limits are waited out and announced through ``on_wait``, never the listing's
  failure unless the wait would pass the caller's deadline. A reset in Unix time is
  counted from the answer's ``Date``, the server's clock, not ours.
- ``ETag``s are kept per URL where the forge's :class:`Dialect` says so (GitHub): a
  re-list in the same process asks ``If-None-Match`` and reuses the page on a 304.
- :meth:`ForgeHttp.walk` hands out pages along a chain of next URLs, each URL once
  (a link back to a fetched page, or past ``MAX_PAGES``, is the listing's error, not
  a hang).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

import trio
import urllib3

from ..._domain.backoff import parse_reset, parse_retry_after
from ..._domain.forge_tokens import ForgeTokens
from ..._domain.listing import ListingError, Page, WaitNote
from ..._domain.sources import Source
from ..._domain.urls import visible
from .pages import SHOWN_CHARS, Got, Step, check_scheme, failure, same_origin, server_now, shown_url

__all__ = ["ETAG_BYTES", "MAX_PAGES", "MAX_PAGE_BYTES", "Dialect", "ForgeHttp", "HttpLister"]

MAX_PAGE_BYTES = 32 << 20  # 100 items are well under 1 MiB; past this, hostile
MAX_PAGES = 10_000  # a million repositories; past this a server's links never end
ETAG_BYTES = 64 << 20  # pages held for If-None-Match; past this, new ones are not kept
_LEAST_WAIT = 1.0  # seconds between two tries of one rate-limited page
_MISSING_HINT_WAIT = 60.0  # a 429 that says nothing of when (GitHub's own advice)
_JSON = MappingProxyType({"Accept": "application/json", "User-Agent": "clonegate"})


@dataclass(frozen=True)
class Dialect:
    """How one forge's API is spoken.

    Attributes:
      name: the forge as messages name it (``GitHub``).
      headers: sent with every request.
      token_header: the header that carries the token, and its value's prefix
        (``("Authorization", "Bearer ")``, ``("PRIVATE-TOKEN", "")``).
      limited: the statuses that may be a rate limit (GitHub: 403 and 429).
      rate_prefix: the rate-limit headers' prefix (``x-ratelimit-``, ``ratelimit-``).
      resource: the header that names the limit passed, if the forge sends one.
      retry_reason: what a wait for ``Retry-After`` is called.
      etags: whether pages are held for ``If-None-Match`` (GitHub's lists: a 304 is
        free there); elsewhere nothing is held, so that the pages held stay within
        ``ETAG_BYTES`` in all, not within that much per forge.
    """

    name: str
    token_header: tuple[str, str]
    headers: Mapping[str, str] = field(default_factory=lambda: _JSON)
    limited: frozenset[int] = frozenset({429})
    rate_prefix: str = "x-ratelimit-"
    resource: str | None = None
    retry_reason: str = ""
    etags: bool = False

    def limit_wait(self, got: Got) -> tuple[str, float] | None:
        """What a rate-limited answer asks to wait, or None when it is not one."""
        if got.status not in self.limited:
            return None
        wall_now = server_now(got.headers)
        retry = parse_retry_after(got.headers.get("retry-after"), wall_now=wall_now)
        if retry is not None:
            return self.retry_reason or f"{self.name}'s rate limit", retry
        if got.headers.get(f"{self.rate_prefix}remaining", "").strip() == "0":
            reset = parse_reset(got.headers.get(f"{self.rate_prefix}reset"), wall_now=wall_now)
            if reset is not None:
                named = got.headers.get(self.resource or "", "")
                which = f"{visible(named)[:40]} " if named else ""
                return f"{self.name}'s {which}rate limit", reset
        if got.status == 429:
            return f"{self.name}'s rate limit (no hint)", _MISSING_HINT_WAIT
        return None


class HttpLister:
    """A forge's listing adapter on :class:`ForgeHttp`: a subclass names its
    ``dialect`` and writes ``listing``. One per process keeps its ETags for a re-list."""

    dialect: ClassVar[Dialect]
    _http: ForgeHttp

    def __init__(
        self,
        tokens: ForgeTokens,
        *,
        on_wait: WaitNote,
        timeout: float = 30.0,
        pool: urllib3.PoolManager | None = None,
        etag_bytes: int = ETAG_BYTES,
    ) -> None:
        self._http = ForgeHttp(
            self.dialect, tokens, on_wait=on_wait, timeout=timeout, pool=pool, etag_bytes=etag_bytes
        )

    async def pages(self, source: Source, *, deadline: float) -> AsyncGenerator[Page, None]:
        """Every page of ``source``'s listing (the listing port, ADR 0023)."""
        await trio.lowlevel.checkpoint()  # even a source refused before any request
        async with aclosing(self.listing(source, deadline=deadline)) as pages:
            async for page in pages:  # closed now, not by the collector, if the caller stops
                yield page

    def listing(self, source: Source, *, deadline: float) -> AsyncGenerator[Page, None]:
        """The forge's walk of ``source``; a source it cannot list raises ListingError."""
        raise NotImplementedError


class ForgeHttp:
    """One forge's requests; one per lister keeps its ETags for a re-list."""

    def __init__(
        self,
        dialect: Dialect,
        tokens: ForgeTokens,
        *,
        on_wait: WaitNote,
        timeout: float,
        pool: urllib3.PoolManager | None,
        etag_bytes: int = ETAG_BYTES,
    ) -> None:
        self.dialect = dialect
        # Pages held for a re-list; 0 for a lister that lists each source once (a run's
        # feed): the pages would only be held, up to this, for nothing.
        self._etag_limit = etag_bytes
        self._tokens = tokens
        self._on_wait = on_wait
        self._timeout = timeout
        self._pool = pool if pool is not None else urllib3.PoolManager()
        self._etags: dict[str, tuple[str, bytes]] = {}  # URL -> (ETag, the body it tags)
        self._etag_bytes = 0

    async def walk(
        self,
        source: Source,
        url: str | None,
        step: Step,
        *,
        deadline: float,
        fetched: set[str] | None = None,
        passing: frozenset[int] = frozenset(),
        origin: str | None = None,
    ) -> AsyncGenerator[Page, None]:
        """The pages from ``url`` on, each URL once (``fetched`` may be shared by several
        walks of one listing); ``step`` reads each and names the next. With ``origin``,
        a next URL on another origin is the listing's error, after the page naming it."""
        await trio.lowlevel.checkpoint()  # even a source refused before any request
        fetched = set() if fetched is None else fetched
        while url is not None:
            if origin is not None and not same_origin(url, origin):
                raise ListingError(f"{source}: a next page on another origin: {shown_url(url)}")
            got = await self.once(source, url, fetched, deadline=deadline, passing=passing)
            page, url = step(url, got)
            if page is not None:
                yield page

    async def once(
        self,
        source: Source,
        url: str,
        fetched: set[str],
        *,
        deadline: float,
        passing: frozenset[int] = frozenset(),
    ) -> Got:
        """:meth:`fetch`, refusing a URL already in ``fetched`` and a walk past
        ``MAX_PAGES``."""
        if url in fetched:
            raise ListingError(f"{source}: the next page links back to {shown_url(url)}")
        if len(fetched) >= MAX_PAGES:
            raise ListingError(f"{source}: still a next page after {MAX_PAGES} pages")
        fetched.add(url)
        return await self.fetch(source, url, deadline=deadline, passing=passing)

    async def fetch(
        self, source: Source, url: str, *, deadline: float, passing: frozenset[int] = frozenset()
    ) -> Got:
        """One page, its rate limits waited out; 304 gives back the page held. A
        status other than 200 is the listing's error, unless in ``passing``."""
        check_scheme(source, url)
        while True:
            try:
                # What is held is read here, in trio's thread, once: listings running
                # side by side may replace it meanwhile, and a 304 is about the tag sent.
                held = self._etags.get(url)
                tag = None if held is None else held[0]
                got = await trio.to_thread.run_sync(self._request, url, tag)
            except ListingError as exc:
                raise ListingError(f"{source}: {exc}") from None
            if got.status == 304 and held is not None:
                return Got(200, got.headers, held[1])
            if got.status == 200:
                self._keep(url, got)
                return got
            if got.status in passing:
                return got
            wait = self.dialect.limit_wait(got)
            if wait is None:
                raise ListingError(f"{source}: {failure(got, url)}")
            reason, raw = wait
            # A reset already past (by the server's own Date) would retry at once, again
            # and again: at least a second between two tries of one page.
            seconds = max(raw, _LEAST_WAIT)
            if trio.current_time() + seconds > deadline:
                raise ListingError(f"{source}: {reason}, {seconds:.0f} s: past the deadline")
            self._on_wait(reason, seconds)
            await trio.sleep(seconds)

    def _keep(self, url: str, got: Got) -> None:
        """Hold the page for a re-list's If-None-Match, within ``ETAG_BYTES`` in all."""
        tag = got.headers.get("etag") if self.dialect.etags else None
        old = self._etags.pop(url, None)
        self._etag_bytes -= len(old[1]) if old else 0
        if tag is None or len(tag) > 256 or self._etag_bytes + len(got.body) > self._etag_limit:
            return
        self._etags[url] = (tag, got.body)
        self._etag_bytes += len(got.body)

    def _request(self, url: str, etag: str | None) -> Got:
        """In a worker thread: one GET, no retries, no redirects, body bounded."""
        headers = {**self.dialect.headers, "Accept-Encoding": "identity"}
        token = self._tokens.for_request(url)
        if token is not None:
            name, prefix = self.dialect.token_header
            headers[name] = prefix + token.token
        if etag is not None:  # a 304 is free with a GitHub token, and saves the body
            headers["If-None-Match"] = etag
        try:
            answer = self._pool.request(
                "GET",
                url,
                headers=headers,
                retries=False,
                redirect=False,
                timeout=self._timeout,
                preload_content=False,
            )
            try:
                body = answer.read(MAX_PAGE_BYTES + 1)
            finally:
                # A page cut short leaves its connection unusable: closed, not pooled.
                answer.close()
        except urllib3.exceptions.HTTPError as exc:
            raise ListingError(f"{shown_url(url)}: {visible(str(exc))[:SHOWN_CHARS]}") from None
        if len(body) > MAX_PAGE_BYTES:
            raise ListingError(f"{shown_url(url)}: a page over {MAX_PAGE_BYTES >> 20} MiB")
        names = {k.lower(): v for k, v in answer.headers.items()}
        return Got(answer.status, names, body)

"""GitHub's list APIs behind the listing port (issue 45, ADR 0023).

- ``/orgs/{org}/repos``, ``/users/{user}/repos`` and ``/search/repositories``, 100 per
  page, following ``Link: rel="next"`` to the end; a URL already fetched is never
  fetched again (a link that loops is the listing's error, not a hang).
- Rate limits are waited out on trio's clock and announced through ``on_wait``, never
  the listing's failure unless the wait would pass the caller's deadline: a secondary
  limit (403/429 with ``Retry-After``) and a primary one (403/429 with
  ``X-RateLimit-Remaining: 0``; ``X-RateLimit-Reset`` is counted from the answer's
  ``Date``, the server's clock, not ours: a skewed local clock would wait wrong).
- Search stops at GitHub's 1,000 reachable results and says so (``Page.capped``).
- The token goes only where :meth:`ForgeTokens.for_request` binds it (https, its own
  host and port, checked on every request); plain http only to a loopback instance
  (ADR 0023's ``http://`` for tests), never with a token.
- ``ETag``s are kept per URL in this object: a re-list in the same process asks
  ``If-None-Match`` and reuses the page it holds on a 304 (free with a token).

HTTP runs in trio worker threads on urllib3, as the clone worker's does; each request
is bounded by ``timeout``, so no thread outlives a cancelled listing for long.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

import trio
import urllib3

from ..._domain.backoff import parse_reset, parse_retry_after
from ..._domain.forge_tokens import ForgeTokens
from ..._domain.listing import ListingError, Page, WaitNote
from ..._domain.sources import Source, SourceKind
from ..._domain.urls import redact, visible
from .github_items import listed_of

__all__ = ["PER_PAGE", "SEARCH_CAP", "GitHubLister"]

PER_PAGE = 100  # GitHub's maximum
SEARCH_CAP = 1000  # search results GitHub lets anyone reach, whatever total_count says
MAX_PAGE_BYTES = 32 << 20  # 100 items are well under 1 MiB; past this, hostile
MAX_PAGES = 10_000  # a million repositories; past this a server's links never end
ETAG_BYTES = 64 << 20  # pages held for If-None-Match; past this, new ones are not kept
_LEAST_WAIT = 1.0  # seconds between two tries of one rate-limited page
_MISSING_HINT_WAIT = 60.0  # GitHub: "wait for at least one minute" without a hint
_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
_SHOWN = 200  # characters of a server's message an error quotes


@dataclass(frozen=True)
class _Got:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes


class GitHubLister:
    """Lists GitHub sources; one per process keeps its ETags for a re-list."""

    def __init__(
        self,
        tokens: ForgeTokens,
        *,
        on_wait: WaitNote,
        timeout: float = 30.0,
        pool: urllib3.PoolManager | None = None,
    ) -> None:
        self._tokens = tokens
        self._on_wait = on_wait
        self._timeout = timeout
        self._pool = pool if pool is not None else urllib3.PoolManager()
        self._etags: dict[str, tuple[str, bytes]] = {}  # URL -> (ETag, the body it tags)
        self._etag_bytes = 0

    async def pages(self, source: Source, *, deadline: float) -> AsyncIterator[Page]:
        """Every page of ``source`` (see the module's text)."""
        await trio.lowlevel.checkpoint()  # even a source refused before any request
        url: str | None = first_url(source)
        search = source.kind is SourceKind.SEARCH
        fetched: set[str] = set()
        results = 0
        while url is not None:
            if url in fetched:
                raise ListingError(f"{source}: the next page links back to {_shown_url(url)}")
            if len(fetched) >= MAX_PAGES:
                raise ListingError(f"{source}: still a next page after {MAX_PAGES} pages")
            fetched.add(url)
            got = await self._fetch(source, url, deadline)
            body = _json(source, got.body)
            items, total, incomplete = _items(source, body, search=search)
            listed, refused = [], []
            for index, item in enumerate(items):
                try:
                    listed.append(listed_of(item))
                except (ValueError, TypeError) as exc:
                    refused.append(f"{source}: item {index + 1} of {_shown_url(url)}: {exc}")
            results += len(items)
            url = _next_link(source, url, got.headers.get("link", ""))
            capped = search and results >= SEARCH_CAP and total > results
            if search and results >= SEARCH_CAP:
                url = None  # the next page would be GitHub's 422
            yield Page(tuple(listed), tuple(refused), capped=capped, incomplete=incomplete)

    async def _fetch(self, source: Source, url: str, deadline: float) -> _Got:
        """One page, its rate limits waited out; 304 gives back the page held."""
        while True:
            try:
                got = await trio.to_thread.run_sync(self._request, url)
            except ListingError as exc:
                raise ListingError(f"{source}: {exc}") from None
            if got.status == 304 and url in self._etags:
                return _Got(200, got.headers, self._etags[url][1])
            if got.status == 200:
                self._keep(url, got)
                return got
            wait = _limit_wait(got)
            if wait is None:
                raise ListingError(f"{source}: {_failure(got, url)}")
            reason, raw = wait
            # A reset already past (by the server's own Date) would retry at once, again
            # and again: at least a second between two tries of one page.
            seconds = max(raw, _LEAST_WAIT)
            if trio.current_time() + seconds > deadline:
                raise ListingError(f"{source}: {reason}, {seconds:.0f} s: past the deadline")
            self._on_wait(reason, seconds)
            await trio.sleep(seconds)

    def _keep(self, url: str, got: _Got) -> None:
        """Hold the page for a re-list's If-None-Match, within ``ETAG_BYTES`` in all."""
        tag = got.headers.get("etag")
        old = self._etags.pop(url, None)
        self._etag_bytes -= len(old[1]) if old else 0
        if tag is None or len(tag) > 256 or self._etag_bytes + len(got.body) > ETAG_BYTES:
            return
        self._etags[url] = (tag, got.body)
        self._etag_bytes += len(got.body)

    def _request(self, url: str) -> _Got:
        """In a worker thread: one GET, no retries, no redirects, body bounded."""
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "clonegate",
            "Accept-Encoding": "identity",
        }
        token = self._tokens.for_request(url)
        if token is not None:
            headers["Authorization"] = f"Bearer {token.token}"
        if url in self._etags:  # a 304 is free with a token, and saves the body without
            headers["If-None-Match"] = self._etags[url][0]
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
            raise ListingError(f"{_shown_url(url)}: {visible(str(exc))[:_SHOWN]}") from None
        if len(body) > MAX_PAGE_BYTES:
            raise ListingError(f"{_shown_url(url)}: a page over {MAX_PAGE_BYTES >> 20} MiB")
        names = {k.lower(): v for k, v in answer.headers.items()}
        return _Got(answer.status, names, body)


def first_url(source: Source) -> str:
    """The first page's URL; refuses an instance that is neither https nor loopback."""
    api = source.api_url
    _check_scheme(source, api)
    if source.kind is SourceKind.SEARCH:
        return f"{api}/search/repositories?q={quote(source.name, safe='')}&per_page={PER_PAGE}"
    kind = "orgs" if source.kind is SourceKind.ORG else "users"
    if source.kind not in (SourceKind.ORG, SourceKind.USER):
        raise ListingError(f"{source}: GitHub lists organisations, users and searches")
    return f"{api}/{kind}/{quote(source.name, safe='')}/repos?per_page={PER_PAGE}"


def _check_scheme(source: Source, url: str) -> None:
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ListingError(f"{source}: a page URL with user-info: {_shown_url(url)}")
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK):
        return
    raise ListingError(f"{source}: not https (http only on loopback): {_shown_url(url)}")


def _next_link(source: Source, url: str, link: str) -> str | None:
    """``rel="next"``'s target, resolved against ``url``; never from https to http."""
    for part in link.split(","):
        target, _, params = part.partition(";")
        rels = [p.strip() for p in params.split(";")]
        if 'rel="next"' in rels or "rel=next" in rels:
            following = urljoin(url, target.strip().removeprefix("<").removesuffix(">"))
            _check_scheme(source, following)
            if urlsplit(url).scheme == "https" and urlsplit(following).scheme != "https":
                raise ListingError(f"{source}: a next page over plain http refused")
            return following
    return None


def _json(source: Source, body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        raise ListingError(f"{source}: the page is not JSON") from None


def _items(source: Source, body: Any, *, search: bool) -> tuple[list[Any], int, bool]:
    """The page's items, the search's total_count and incomplete_results."""
    if not search:
        if not isinstance(body, list):
            raise ListingError(f"{source}: the page is not a list of repositories")
        return body, 0, False
    items = body.get("items") if isinstance(body, dict) else None
    total = body.get("total_count") if isinstance(body, dict) else None
    if not isinstance(items, list) or type(total) is not int:
        raise ListingError(f"{source}: the page is not a search result")
    return items, total, body.get("incomplete_results") is True


def _limit_wait(got: _Got) -> tuple[str, float] | None:
    """What a rate-limited answer asks to wait, or None when it is not one."""
    if got.status not in (403, 429):
        return None
    wall_now = _server_now(got.headers)
    retry = parse_retry_after(got.headers.get("retry-after"), wall_now=wall_now)
    if retry is not None:
        return "GitHub's secondary rate limit", retry
    if got.headers.get("x-ratelimit-remaining", "").strip() == "0":
        reset = parse_reset(got.headers.get("x-ratelimit-reset"), wall_now=wall_now)
        if reset is not None:
            resource = visible(got.headers.get("x-ratelimit-resource", "core"))[:40]
            return f"GitHub's {resource} rate limit", reset
    if got.status == 429:
        return "GitHub's rate limit (no hint)", _MISSING_HINT_WAIT
    return None


def _server_now(headers: dict[str, str]) -> float:
    """The answer's moment on the server's clock (``Date``); ours if it gives none."""
    try:
        return parsedate_to_datetime(headers["date"]).timestamp()
    except (KeyError, TypeError, ValueError, IndexError, OverflowError):
        return time.time()


def _failure(got: _Got, url: str) -> str:
    message = ""
    try:
        body = json.loads(got.body)
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            message = f": {visible(body['message'])[:_SHOWN]}"
    except (ValueError, RecursionError):
        pass
    return f"HTTP {got.status} for {_shown_url(url)}{message}"


def _shown_url(url: str) -> str:
    shown = visible(redact(url))
    return shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "…"

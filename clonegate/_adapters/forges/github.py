"""GitHub's list APIs behind the listing port (issue 45, ADR 0023).

- ``/orgs/{org}/repos``, ``/users/{user}/repos`` and ``/search/repositories``, 100 per
  page, following ``Link: rel="next"`` to the end, each URL once
  (:class:`.http.ForgeHttp` does the requests, the waits and the token check).
- Rate limits are waited out on trio's clock and announced through ``on_wait``, never
  the listing's failure unless the wait would pass the caller's deadline: a secondary
  limit (403/429 with ``Retry-After``) and a primary one (403/429 with
  ``X-RateLimit-Remaining: 0``; ``X-RateLimit-Reset`` is counted from the answer's
  ``Date``, the server's clock, not ours: a skewed local clock would wait wrong).
- A search past GitHub's 1,000 reachable results is split by creation date
  (:mod:`.github_search`); where a split cannot go finer it says so (``Page.capped``).
- The token goes only where :meth:`ForgeTokens.for_request` binds it, as
  ``Authorization: Bearer`` (gh's form).
- ``ETag``s are kept per URL in this object: a re-list in the same process asks
  ``If-None-Match`` and reuses the page it holds on a 304 (free with a token).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from urllib.parse import quote

from ..._domain.listing import ListingError, Page
from ..._domain.sources import Source, SourceKind
from .github_search import PER_PAGE, SEARCH_CAP, listed_of, search_pages, search_url
from .http import MAX_PAGE_BYTES, Dialect, HttpLister
from .pages import check_scheme, link_step

__all__ = [
    "GITHUB",
    "MAX_PAGE_BYTES",
    "PER_PAGE",
    "SEARCH_CAP",
    "GitHubLister",
    "first_url",
    "listed_of",
]

GITHUB = Dialect(
    name="GitHub",
    token_header=("Authorization", "Bearer "),
    headers={
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "clonegate",
    },
    limited=frozenset({403, 429}),  # GitHub documents both for either limit
    resource="x-ratelimit-resource",
    retry_reason="GitHub's secondary rate limit",
    etags=True,
)


class GitHubLister(HttpLister):
    """Lists GitHub sources; one per process keeps its ETags for a re-list."""

    dialect = GITHUB

    def listing(self, source: Source, *, deadline: float) -> AsyncGenerator[Page, None]:
        url = first_url(source)
        if source.kind is SourceKind.SEARCH:
            return search_pages(self._http, source, url, deadline=deadline)
        return self._http.walk(source, url, link_step(source, listed_of), deadline=deadline)


def first_url(source: Source) -> str:
    """The first page's URL; refuses an instance that is neither https nor loopback."""
    api = source.api_url
    check_scheme(source, api)
    if source.kind is SourceKind.SEARCH:
        return search_url(api, source.name)
    kind = "orgs" if source.kind is SourceKind.ORG else "users"
    if source.kind not in (SourceKind.ORG, SourceKind.USER):
        raise ListingError(f"{source}: GitHub lists organisations, users and searches")
    return f"{api}/{kind}/{quote(source.name, safe='')}/repos?per_page={PER_PAGE}"

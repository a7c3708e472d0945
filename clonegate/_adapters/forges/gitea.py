"""Gitea's and Forgejo's list APIs behind the listing port (issue 45, ADR 0023).

- ``orgs/:org/repos`` and ``users/:user/repos``, ``limit=50`` (the default
  ``MAX_RESPONSE_ITEMS``; an instance that allows fewer serves fewer, and its pages
  still follow each other), ``page`` from 1.
- ``Link: rel="next"`` says whether there is a next page, but the next page's URL is
  this one's with ``page`` + 1: Gitea writes its links from its configured
  ``ROOT_URL``, which is often not the address it is reached at (``http://localhost:3000``
  behind a proxy), and a listing never follows a page onto another origin.
- ``X-Total-Count``: a page without a next link, while fewer were listed than the
  count said, says the listing is incomplete (``Page.incomplete``); an instance that
  sends no ``Link`` at all is paged on by the count.
- A 429 with ``Retry-After`` (Gitea has no limit of its own; a proxy may) is waited out.
- The token as ``Authorization: token …``, as tea (Gitea's SDK) sends it, and only
  where :meth:`ForgeTokens.for_request` binds it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from urllib.parse import quote

from ..._domain.listing import ListingError, Page
from ..._domain.sources import Forge, Source, SourceKind
from .http import Dialect, HttpLister
from .items import reader
from .pages import Got, check_scheme, items_list, link_target, page_of

__all__ = ["LIMIT", "GiteaLister", "page_url"]

listed_of = reader(Forge.GITEA)

LIMIT = 50  # Gitea's default MAX_RESPONSE_ITEMS
_MAX_COUNT = 1 << 40  # an X-Total-Count past this is no count


class GiteaLister(HttpLister):
    """Lists Gitea and Forgejo organisations and users."""

    dialect = Dialect("Gitea", ("Authorization", "token "))

    def listing(self, source: Source, *, deadline: float) -> AsyncGenerator[Page, None]:
        counted = _Counted(source)
        return self._http.walk(source, page_url(source, 1), counted.step, deadline=deadline)


def page_url(source: Source, page: int) -> str:
    """The URL of page ``page`` (from 1) of ``source``."""
    api = source.api_url
    check_scheme(source, api)
    if source.kind not in (SourceKind.ORG, SourceKind.USER):
        raise ListingError(f"{source}: Gitea lists organisations and users")
    kind = "orgs" if source.kind is SourceKind.ORG else "users"
    return f"{api}/{kind}/{quote(source.name, safe='')}/repos?limit={LIMIT}&page={page}"


class _Counted:
    """Pages on by number, counting what was listed against ``X-Total-Count``."""

    def __init__(self, source: Source) -> None:
        self._source = source
        self._page = 0
        self._listed = 0

    def step(self, url: str, got: Got) -> tuple[Page, str | None]:
        items = items_list(self._source, got)
        self._page += 1
        self._listed += len(items)
        total = _count(got.headers.get("x-total-count"))
        if "link" in got.headers:
            more = link_target(got) is not None
        else:  # no Link at all: the count alone says whether pages remain
            more = total is not None and self._listed < total
        following = page_url(self._source, self._page + 1) if more and items else None
        short = following is None and total is not None and self._listed < total
        return page_of(self._source, url, items, listed_of, incomplete=short), following


def _count(value: str | None) -> int | None:
    if value is None or not value.strip().isdigit():
        return None
    count = int(value.strip()[:20])
    return count if count < _MAX_COUNT else None

"""Bitbucket Cloud's list API behind the listing port (issue 45, ADR 0023).

- ``/2.0/repositories/{workspace}?pagelen=100`` (Bitbucket's maximum): a page is an
  object whose ``values`` are the repositories and whose ``next`` is the next page's
  URL, left out on the last. ``next`` is followed only on the first page's origin: a
  page that names another is the listing's error, after that page's repositories.
- A 429 is Bitbucket's rate limit; it may come without ``Retry-After``, and is then
  waited a minute and tried again (announced).
- The token, when one is bound to the API's origin, as ``Authorization: Bearer``
  (Bitbucket's access tokens); the environment binds none (no Bitbucket CLI variable
  to follow: ADR 0023), so a library caller's :class:`ForgeTokens` may.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any
from urllib.parse import quote, urljoin

from ..._domain.listing import ListingError, Page
from ..._domain.sources import Forge, Source, SourceKind
from .http import Dialect, HttpLister
from .items import reader
from .pages import Got, check_scheme, page_of

__all__ = ["PAGELEN", "BitbucketLister", "first_url"]

listed_of = reader(Forge.BITBUCKET)

PAGELEN = 100  # Bitbucket's maximum


class BitbucketLister(HttpLister):
    """Lists Bitbucket Cloud workspaces."""

    dialect = Dialect("Bitbucket", ("Authorization", "Bearer "))

    def listing(self, source: Source, *, deadline: float) -> AsyncGenerator[Page, None]:
        first = first_url(source)

        def step(url: str, got: Got) -> tuple[Page, str | None]:
            values, following = _values(source, got.json(source))
            after = None if following is None else urljoin(url, following)
            return page_of(source, url, values, listed_of), after

        return self._http.walk(source, first, step, deadline=deadline, origin=first)


def first_url(source: Source) -> str:
    api = source.api_url
    check_scheme(source, api)
    if source.kind is not SourceKind.WORKSPACE:
        raise ListingError(f"{source}: Bitbucket lists workspaces")
    return f"{api}/repositories/{quote(source.name, safe='')}?pagelen={PAGELEN}"


def _values(source: Source, body: Any) -> tuple[list[Any], str | None]:
    """The page's repositories and its ``next``."""
    values = body.get("values") if isinstance(body, dict) else None
    if not isinstance(values, list):
        raise ListingError(f"{source}: the page is not a page of repositories")
    following = body.get("next")
    if following is not None and not isinstance(following, str):
        raise ListingError(f"{source}: the page's next is not a URL")
    return values, following

"""GitLab's list APIs behind the listing port (issue 45, ADR 0023).

- ``groups/:id/projects?include_subgroups=true&with_shared=false`` (a group's projects
  and its subgroups', not projects other groups share with it) and
  ``users/:id/projects``, ``:id`` the URL-encoded path; 100 a page.
- Keyset pages (``pagination=keyset&order_by=id&sort=asc``, the next page only in
  ``Link: rel="next"``): no offset to drift while projects are added, and no 50,000
  offset cap. An instance that refuses keyset for the request (GitLab's 405, "Keyset
  pagination is not yet available for this type of request") is asked again with offset
  pages, from the first; a 405 anywhere else is the listing's error. Either way the
  ``Link`` is followed, whatever pagination the instance chose to answer with.
- Rate limits: a 429 with ``Retry-After``, or ``RateLimit-Remaining: 0`` with
  ``RateLimit-Reset`` (Unix time, read against the answer's ``Date``).
- The token as ``PRIVATE-TOKEN``, the header GitLab's Go client (which glab uses) sends
  for a personal access token, and only where :meth:`ForgeTokens.for_request` binds it.
- A GitLab under a path (``@https://host/gitlab``) is ``…/gitlab/api/v4``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from urllib.parse import quote

from ..._domain.listing import ListingError, Page
from ..._domain.sources import Forge, Source, SourceKind
from .http import Dialect, HttpLister
from .items import reader
from .pages import Got, check_scheme, failure, link_step

__all__ = ["PER_PAGE", "GitLabLister", "first_url"]

listed_of = reader(Forge.GITLAB)

PER_PAGE = 100  # GitLab's maximum
# A group's projects and its subgroups', not those other groups share with it.
_GROUP = "include_subgroups=true&with_shared=false"
_KEYSET = "&pagination=keyset&order_by=id&sort=asc"
_KEYSET_REFUSED = 405  # GitLab's answer to keyset pages it does not serve


class GitLabLister(HttpLister):
    """Lists GitLab groups (subgroups included) and users."""

    dialect = Dialect(
        "GitLab", ("PRIVATE-TOKEN", ""), rate_prefix="ratelimit-", resource="ratelimit-name"
    )

    def listing(self, source: Source, *, deadline: float) -> AsyncGenerator[Page, None]:
        offset = first_url(source)
        keyset = offset + _KEYSET
        read = link_step(source, listed_of)

        def step(url: str, got: Got) -> tuple[Page | None, str | None]:
            if got.status != _KEYSET_REFUSED:
                return read(url, got)
            if url == keyset:  # the first request: nothing listed yet
                return None, offset
            raise ListingError(f"{source}: {failure(got, url)}")

        refused = frozenset({_KEYSET_REFUSED})
        return self._http.walk(source, keyset, step, deadline=deadline, passing=refused)


def first_url(source: Source) -> str:
    """The first offset page's URL (keyset adds its parameters)."""
    api = source.api_url
    check_scheme(source, api)
    name = quote(source.name, safe="")
    if source.kind is SourceKind.GROUP:
        return f"{api}/groups/{name}/projects?{_GROUP}&per_page={PER_PAGE}"
    if source.kind is SourceKind.USER:
        return f"{api}/users/{name}/projects?per_page={PER_PAGE}"
    raise ListingError(f"{source}: GitLab lists groups and users")

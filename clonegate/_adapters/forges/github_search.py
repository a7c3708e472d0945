"""GitHub's repository search past its 1,000 reachable results (issue 45, ADR 0023).

GitHub answers a search's first 1,000 results, whatever ``total_count`` says; the next
page is a 422. A search whose total is larger is split by creation date: the query
with ``created:FIRST..LAST`` (days, both ends included) is asked again, and a range
whose ``total_count`` is still over 1,000 is cut in two, until each slice's total is
within reach. A slice of one day still over 1,000 cannot be cut finer: its first
1,000 are listed and its last page says so (``Page.capped``), as does a query that
names its own ``created:`` range (a second range would be a guess at how the two
combine). Results are kept once per forge id: a repository counted in two slices
(the index moves while we page) is listed once. A slice whose last page leaves it short
of its ``total_count`` (or of the cap) says so with ``Page.incomplete``: GitHub served
fewer than it said matched.

The ranges run from 2007-10-01 (GitHub's oldest repositories) to the day after today,
by the first answer's ``Date`` (the server's clock) or ours, whichever is later.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import quote

from ..._domain.listing import ListingError, Page
from ..._domain.sources import Forge, Source
from .http import ForgeHttp
from .items import reader
from .pages import Got, link_next, page_of, server_now

__all__ = ["PER_PAGE", "SEARCH_CAP", "listed_of", "search_pages", "search_url"]

listed_of = reader(Forge.GITHUB)

PER_PAGE = 100  # GitHub's maximum
SEARCH_CAP = 1000  # search results GitHub lets anyone reach, whatever total_count says
_FIRST_DAY = date(2007, 10, 1)  # no GitHub repository was created before
# A query that already ranges over creation: a split would AND a second range to it.
_OWN_RANGE = re.compile(r"(?:^|\s)-?created:", re.IGNORECASE)


def search_url(api: str, query: str) -> str:
    return f"{api}/search/repositories?q={quote(query, safe='')}&per_page={PER_PAGE}"


async def search_pages(
    http: ForgeHttp, source: Source, url: str, *, deadline: float
) -> AsyncGenerator[Page, None]:
    """Every page of the search ``source`` (first page ``url``), split as the module says."""
    search = _Search(http, source, deadline)
    got = await search.get(url)
    whole = _total(source, got) <= SEARCH_CAP or _OWN_RANGE.search(source.name)
    walk = search.slice(url, got) if whole else search.days(_FIRST_DAY, _last_day(got))
    async with aclosing(walk) as pages:  # closed now, not by the collector, if we are
        async for page in pages:
            yield page


def _last_day(got: Got) -> date:
    """The day after today by the server's clock (``Date``) or ours, whichever is later:
    a server's date years behind would leave the newest repositories out of every
    range, and one at the end of time must not overflow."""
    ours = time.time()
    try:
        theirs = datetime.fromtimestamp(max(server_now(got.headers), ours), UTC).date()
    except (OverflowError, OSError, ValueError):
        theirs = datetime.fromtimestamp(ours, UTC).date()
    return theirs if theirs == date.max else theirs + timedelta(days=1)


class _Search:
    """One search's walk: the URLs fetched and the forge ids listed, across slices."""

    def __init__(self, http: ForgeHttp, source: Source, deadline: float) -> None:
        self._http = http
        self._source = source
        self._deadline = deadline
        self._fetched: set[str] = set()
        self._ids: set[str] = set()

    async def get(self, url: str) -> Got:
        return await self._http.once(self._source, url, self._fetched, deadline=self._deadline)

    async def days(self, first: date, last: date) -> AsyncGenerator[Page, None]:
        """The results created from ``first`` to ``last``, cut in two while over the cap."""
        query = f"{self._source.name} created:{first.isoformat()}..{last.isoformat()}"
        url = search_url(self._source.api_url, query)
        got = await self.get(url)
        if _total(self._source, got) > SEARCH_CAP and first < last:
            middle = first + (last - first) // 2
            parts = [self.days(first, middle), self.days(middle + timedelta(days=1), last)]
        else:
            parts = [self.slice(url, got)]
        for part in parts:  # each closed now, not by the collector, if we are
            async with aclosing(part) as pages:
                async for page in pages:
                    yield page

    async def slice(self, url: str, got: Got) -> AsyncGenerator[Page, None]:
        """The pages of one query, its first already fetched, up to the cap."""
        step = _Slice(self._source, self._ids)
        page, following = step(url, got)
        yield page
        walk = self._http.walk(
            self._source, following, step, deadline=self._deadline, fetched=self._fetched
        )
        async with aclosing(walk) as pages:
            async for page in pages:
                yield page


class _Slice:
    """Reads the pages of one query: at most ``SEARCH_CAP`` results, each id once."""

    def __init__(self, source: Source, ids: set[str]) -> None:
        self._source = source
        self._ids = ids
        self._results = 0

    def __call__(self, url: str, got: Got) -> tuple[Page, str | None]:
        items, total, incomplete = _items(self._source, got.json(self._source))
        self._results += len(items)
        reached = self._results >= SEARCH_CAP  # the next page would be GitHub's 422
        following = None if reached else link_next(self._source, url, got)
        # The last page, short of what total_count said matched: GitHub served less.
        short = following is None and self._results < min(total, SEARCH_CAP)
        capped = reached and total > self._results
        flags = {"capped": capped, "incomplete": incomplete or short}
        page = page_of(self._source, url, items, listed_of, **flags)
        fresh = []
        for record in page.listed:
            if record.forge_id not in self._ids:
                self._ids.add(record.forge_id)
                fresh.append(record)
        return replace(page, listed=tuple(fresh)), following


def _total(source: Source, got: Got) -> int:
    return _items(source, got.json(source))[1]


def _items(source: Source, body: Any) -> tuple[list[Any], int, bool]:
    """The page's items, the search's total_count and incomplete_results."""
    items = body.get("items") if isinstance(body, dict) else None
    total = body.get("total_count") if isinstance(body, dict) else None
    if not isinstance(items, list) or type(total) is not int:
        raise ListingError(f"{source}: the page is not a search result")
    return items, total, body.get("incomplete_results") is True

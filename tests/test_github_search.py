"""GitHub's search past its 1,000 reachable results (clonegate/_adapters/forges/
github_search.py) against the loopback GitHub API, which counts ``total_count`` per
``created:`` range: a search over the cap is split by creation date until each slice is
within reach, a day still over it is listed to the cap and says so, and a repository
met in two slices is listed once (issue 45, ADR 0023)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import pytest
import trio

from clonegate._adapters.forges.github import GitHubLister
from clonegate._domain.forge_tokens import ForgeTokens
from clonegate._domain.listing import ListingError, Page
from clonegate._domain.sources import Source, entry_of

from .support.forges.catalogue import Made, made
from .support.forges.core import Answer, Seen
from .support.forges.github import GitHubApi

GIT = "http://127.0.0.1:9418"
EPOCH = 1_700_000_000  # 2023-11-14 on the server's clock: every made() repository is older
_RANGE = re.compile(r"created:(\S+)\.\.(\S+)$")


async def _search(
    nursery: trio.Nursery, repos: list[Made], query: str, **options: Any
) -> tuple[GitHubApi, list[Page]]:
    """The pages of ``query`` from a new loopback GitHub serving ``repos`` (``options``
    its own: ``epoch``, ``search_total``)."""
    settings: dict[str, Any] = {"epoch": EPOCH, "search_limit": 10_000, **options}
    server = GitHubApi(repos, git_base=GIT, prefix="/api/v3", **settings)
    await nursery.start(server.serve)
    source = entry_of(f'github:search/"{query}"@{server.base_url}')
    assert isinstance(source, Source)
    lister = GitHubLister(ForgeTokens(), on_wait=lambda why, seconds: None)
    pages = [page async for page in lister.pages(source, deadline=float("inf"))]
    return server, pages


async def _collect(lister: GitHubLister, source: Source, pages: list[Page]) -> None:
    async for page in lister.pages(source, deadline=float("inf")):
        pages.append(page)


def _ids(pages: list[Page]) -> list[str]:
    return [record.forge_id for page in pages for record in page.listed]


async def test_a_search_past_the_cap_is_split_by_creation_date(nursery: trio.Nursery) -> None:
    repos = made("acme", 2500)  # one created a day, 2016 to 2022
    server, pages = await _search(nursery, repos, "language:python")
    assert sorted(_ids(pages)) == sorted(str(repo.id) for repo in repos)
    assert not any(page.capped for page in pages)
    assert all(page.refused == () for page in pages)
    # Every page fetched once; every slice listed is within reach.
    assert len(server.served_pages()) == len(set(server.served_pages())) == len(server.seen)
    assert all(seen.status == 200 for seen in server.seen)
    ranges = [_RANGE.search(seen.param("q") or "") for seen in server.seen[1:]]
    assert all(found is not None for found in ranges)
    assert server.seen[0].param("q") == "language:python"
    assert all((seen.param("q") or "").startswith("language:python") for seen in server.seen)
    # Pages past the first are only asked of a slice GitHub lets reach whole.
    past_first = [seen for seen in server.seen if seen.param("page") not in (None, "1")]
    assert past_first
    for seen in past_first:
        found = _RANGE.search(seen.param("q") or "")
        assert found is not None
        first, last = found.groups()
        assert sum(first <= repo.created_at[:10] <= last for repo in repos) <= 1000


async def test_one_day_over_the_cap_is_listed_to_the_cap_and_says_so(
    nursery: trio.Nursery,
) -> None:
    repos = [replace(repo, created_at="2021-06-01T12:00:00Z") for repo in made("acme", 1500)]
    repos += made("acme", 200, first_id=9000, prefix="other")  # created on other days
    server, pages = await _search(nursery, repos, "stars:>1")
    ids = _ids(pages)
    assert len(ids) == len(set(ids)) == 1200
    assert {str(repo.id) for repo in repos[1500:]} <= set(ids)
    assert [page.capped for page in pages].count(True) == 1
    capped = next(page for page in pages if page.capped)
    assert any("created:2021-06-01..2021-06-01" in (s.param("q") or "") for s in server.seen)
    assert capped.listed[-1].full_name.startswith("acme/repo-")
    assert all(seen.status == 200 for seen in server.seen)


async def test_a_repository_met_in_two_slices_is_listed_once(nursery: trio.Nursery) -> None:
    repos = made("acme", 1500)
    # The index moved while we paged: one repository is found on two creation days.
    twice = replace(repos[0], created_at="2016-01-01T00:00:00Z")
    _, pages = await _search(nursery, [*repos, twice], "stars:>1")
    ids = _ids(pages)
    assert sorted(ids) == sorted(str(repo.id) for repo in repos)
    assert str(repos[0].id) in ids


async def test_a_slice_that_fails_keeps_the_slices_before(nursery: trio.Nursery) -> None:
    repos = made("acme", 2500)
    server = GitHubApi(repos, git_base=GIT, prefix="/api/v3", epoch=EPOCH, search_limit=10_000)
    await nursery.start(server.serve)
    source = entry_of(f'github:search/"stars:>1"@{server.base_url}')
    assert isinstance(source, Source)

    def fail_late(request: Seen, served: Answer, index: int) -> Answer:
        return replace(served, status=502, body=b"bad gateway") if index == 12 else served

    server.tamper = fail_late
    lister = GitHubLister(ForgeTokens(), on_wait=lambda why, seconds: None)
    pages: list[Page] = []
    with pytest.raises(ListingError, match="HTTP 502"):
        await _collect(lister, source, pages)
    assert len(server.seen) == 12
    assert 0 < len(_ids(pages)) == len(set(_ids(pages)))


@pytest.mark.parametrize("epoch", [1_000_000_000, 253_402_300_000], ids=["2001", "year-9999"])
async def test_a_server_clock_far_off_still_covers_every_repository(
    nursery: trio.Nursery, epoch: int
) -> None:
    # The ranges end at the later of the server's Date and ours: a server years behind
    # leaves nothing out, one at the end of time overflows nothing.
    repos = made("acme", 1500)
    _, pages = await _search(nursery, repos, "stars:>1", epoch=epoch)
    assert sorted(_ids(pages)) == sorted(str(repo.id) for repo in repos)
    assert not any(page.capped for page in pages)


async def test_a_search_served_short_of_its_total_says_incomplete(
    nursery: trio.Nursery,
) -> None:
    _, pages = await _search(nursery, made("acme", 150), "stars:>1", search_total=180)
    assert len(_ids(pages)) == 150
    assert [page.incomplete for page in pages] == [False, True]
    assert not any(page.capped for page in pages)

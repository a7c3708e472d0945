"""The GitHub listing adapter (clonegate/_adapters/forges/github.py) against the loopback
GitHub API (tests/support/forges/github.py): pages walked once each, rate limits waited
out on trio's clock (MockClock, autojump: the server's record shows the wait in trio
time), the token only to its API host over https, malformed items one error each, a
failure mid-way after the pages already given (issue 45, ADR 0023)."""

from __future__ import annotations

import json
import ssl
from dataclasses import replace
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate._adapters.forges.github import MAX_PAGE_BYTES, GitHubLister, first_url
from clonegate._adapters.forges.http import HttpLister
from clonegate._domain.forge_tokens import ApiToken, ForgeTokens
from clonegate._domain.listed import Listed
from clonegate._domain.listing import ListingError
from clonegate._domain.sources import Forge, Source, entry_of

from .support.forges.catalogue import Made, made
from .support.forges.core import Answer, Seen, failing_from
from .support.forges.github import GitHubApi
from .support.forges.listing import FOREVER, Listing, adapter, https_context, listed

GIT = "http://127.0.0.1:9418"
EPOCH = 1_700_000_000  # the servers' Unix time at start: far from the machine's clock
TOKEN = "ghp_loopback-token"


async def _list(lister: HttpLister, source: Source, deadline: float = FOREVER) -> Listing:
    return await listed(lister, source, Listing(), deadline)


def _lister(
    got: Listing, tokens: ForgeTokens | None = None, ca_certs: str | None = None
) -> HttpLister:
    return adapter(GitHubLister, got, tokens, ca_certs)


async def _github(nursery: trio.Nursery, repos: list[Made], **options: object) -> GitHubApi:
    server = GitHubApi(
        repos,
        git_base=GIT,
        orgs=["acme"],
        prefix="/api/v3",
        epoch=EPOCH,
        **options,  # type: ignore[arg-type]
    )
    await nursery.start(server.serve)
    return server


def _org(server: GitHubApi, name: str = "acme") -> Source:
    source = entry_of(f"github:org/{name}@{server.base_url}")
    assert isinstance(source, Source)
    return source


def _names(records: list[Listed]) -> list[str]:
    return [record.full_name for record in records]


async def test_every_page_once_100_a_page_to_the_last(nursery: trio.Nursery) -> None:
    repos = made("acme", 250)
    server = await _github(nursery, repos)
    got = Listing()
    listing = await _list(_lister(got), _org(server))
    assert listing.error is None
    assert listing.refused == []
    assert _names(listing.listed) == [repo.full_name for repo in repos]
    pages = server.served_pages()
    assert len(pages) == 3 == len(set(pages)) == len(server.seen)
    assert {seen.param("per_page") for seen in server.seen} == {"100"}
    first = listing.listed[4]  # every 5th a fork; fields from the listing, checked
    assert first.fork is True
    assert first.forge_id == "1004"
    assert first.clone_url.startswith(GIT)


@pytest.mark.parametrize("status", [403, 429])
async def test_a_primary_limit_is_waited_out_by_the_servers_date(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock, status: int
) -> None:
    server = await _github(nursery, made("acme", 250), core_limit=2, limited_status=status)
    got = Listing()
    listing = await _list(_lister(got), _org(server))
    assert listing.error is None
    assert len(listing.listed) == 250
    assert [seen.status for seen in server.seen] == [200, 200, status, 200]
    # The reset is an hour after the first request on the server's clock; the machine's
    # clock is years away from EPOCH, so only the Date header gives this wait.
    assert len(got.waits) == 1
    assert got.waits[0][0] == "GitHub's core rate limit"
    assert 3600 - 2 <= got.waits[0][1] <= 3600 + 2
    assert server.seen[3].at >= server.seen[0].at + 3600
    assert len(set(server.served_pages())) == 3


async def test_a_secondary_limit_is_waited_out(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = await _github(nursery, made("acme", 150))
    server.secondary(count=2, retry_after=90)
    got = Listing()
    listing = await _list(_lister(got), _org(server))
    assert listing.error is None
    assert len(listing.listed) == 150
    assert got.waits == [("GitHub's secondary rate limit", 90.0)] * 2
    assert [seen.status for seen in server.seen] == [403, 403, 200, 200]
    assert server.seen[2].at - server.seen[0].at >= 180


async def test_a_wait_past_the_deadline_fails_keeping_the_pages(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = await _github(nursery, made("acme", 250), core_limit=2)
    got = Listing()
    listing = await _list(_lister(got), _org(server), deadline=trio.current_time() + 600)
    assert len(listing.listed) == 200
    assert got.waits == []
    assert listing.error is not None
    assert "past the deadline" in str(listing.error)


@pytest.fixture
def ca_file(tmp_path: Path) -> tuple[ssl.SSLContext, str]:
    return https_context(tmp_path)


async def _tls(nursery: trio.Nursery, context: ssl.SSLContext, repos: list[Made]) -> GitHubApi:
    server = GitHubApi(repos, git_base=GIT, orgs=["acme"], prefix="/api/v3", epoch=EPOCH)
    server.tls = context
    await nursery.start(server.serve)
    return server


async def test_the_token_goes_only_to_its_api_host(
    nursery: trio.Nursery, ca_file: tuple[ssl.SSLContext, str]
) -> None:
    context, ca = ca_file
    repos = made("acme", 300)
    api = await _tls(nursery, context, repos)
    elsewhere = await _tls(nursery, context, repos)

    def to_elsewhere(request: Seen, served: Answer, index: int) -> Answer:
        # The second page links on to another origin (same address, another port).
        if index == 2:
            link = served.headers["Link"].replace(api.base_url, elsewhere.base_url)
            return replace(served, headers={**served.headers, "Link": link})
        return served

    api.tamper = to_elsewhere
    tokens = ForgeTokens(api=(ApiToken(Forge.GITHUB, "127.0.0.1", api.port, TOKEN, "GH_TOKEN"),))
    got = Listing()
    listing = await _list(_lister(got, tokens, ca_certs=ca), _org(api))
    assert listing.error is None
    assert len(listing.listed) == 300
    assert [seen.authorization for seen in api.seen] == [f"Bearer {TOKEN}"] * 2
    assert [seen.authorization for seen in elsewhere.seen] == [None]


async def test_no_token_over_plain_http_even_to_its_host(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 5))
    tokens = ForgeTokens(api=(ApiToken(Forge.GITHUB, "127.0.0.1", server.port, TOKEN, "GH"),))
    listing = await _list(_lister(Listing(), tokens), _org(server))
    assert len(listing.listed) == 5
    assert [s.authorization for s in server.seen] == [None]


def test_plain_http_only_on_loopback() -> None:
    source = entry_of("github:org/acme@http://example.com")
    assert isinstance(source, Source)
    with pytest.raises(ListingError, match="not https"):
        first_url(source)


async def test_malformed_items_are_one_error_each_the_others_arrive(
    nursery: trio.Nursery,
) -> None:
    server = await _github(nursery, made("acme", 150))

    def spoil(request: Seen, served: Answer, index: int) -> Answer:
        if index != 1:
            return served
        items = json.loads(served.body)
        items[3]["clone_url"] = "file:///etc/\x1b[2J"
        items[5] = "not a repository"
        items[7]["stargazers_count"] = True
        items[9]["full_name"] = "evil\x1b]0;x\x07/name"
        return replace(served, body=json.dumps(items).encode())

    server.tamper = spoil
    listing = await _list(_lister(Listing()), _org(server))
    assert listing.error is None
    assert len(listing.listed) == 146
    assert len(listing.refused) == 4
    assert all(message.isprintable() for message in listing.refused)
    assert "acme/repo-00003" not in _names(listing.listed)
    assert _names(listing.listed)[:4] == [
        "acme/repo-00000",
        "acme/repo-00001",
        "acme/repo-00002",
        "acme/repo-00004",
    ]


async def test_a_failure_midway_keeps_what_was_listed(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 350))
    server.tamper = failing_from(3, Answer(500, {}, b'{"message": "boom\\u001b[2J"}'))
    listing = await _list(_lister(Listing()), _org(server))
    assert _names(listing.listed) == [f"acme/repo-{i:05d}" for i in range(200)]
    assert listing.error is not None
    assert "HTTP 500" in str(listing.error)
    assert str(listing.error).isprintable()


async def test_search_stops_at_the_cap_and_says_so(nursery: trio.Nursery) -> None:
    # A query with its own creation range is not split (tests/test_github_search.py).
    server = await _github(nursery, made("acme", 1200), search_total=4321)
    source = entry_of(f'github:search/"language:python created:>2010-01-01"@{server.base_url}')
    assert isinstance(source, Source)
    listing = await _list(_lister(Listing()), source)
    assert listing.error is None
    assert len(listing.listed) == 1000
    assert [page.capped for page in listing.pages] == [False] * 9 + [True]
    assert [seen.status for seen in server.seen] == [200] * 10
    assert server.seen[0].param("q") == "language:python created:>2010-01-01"


async def test_a_search_under_the_cap_is_not_capped(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 120))
    source = entry_of(f'github:search/"stars:>1"@{server.base_url}')
    assert isinstance(source, Source)
    listing = await _list(_lister(Listing()), source)
    assert len(listing.listed) == 120
    assert not any(page.capped for page in listing.pages)


async def test_a_relist_asks_if_none_match_and_reuses_the_pages(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 150))
    lister = _lister(Listing())
    first = await _list(lister, _org(server))
    again = await _list(lister, _org(server))
    assert [s.status for s in server.seen] == [200, 200, 304, 304]
    assert all(s.headers.get("if-none-match") for s in server.seen[2:])
    assert again.listed == first.listed
    assert len(again.listed) == 150


async def test_a_next_link_back_to_a_fetched_page_ends_in_an_error(
    nursery: trio.Nursery,
) -> None:
    server = await _github(nursery, made("acme", 250))

    def loop(request: Seen, served: Answer, index: int) -> Answer:
        link = f'<{server.base_url}/api/v3/orgs/acme/repos?per_page=100>; rel="next"'
        return replace(served, headers={**served.headers, "Link": link}) if index == 2 else served

    server.tamper = loop
    listing = await _list(_lister(Listing()), _org(server))
    assert len(listing.listed) == 200
    assert len(server.seen) == 2
    assert listing.error is not None
    assert "links back" in str(listing.error)


async def test_a_page_past_the_size_cap_is_an_error_not_memory(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 150))
    huge = b"[" + b" " * MAX_PAGE_BYTES + b"]"

    def swell(request: Seen, served: Answer, index: int) -> Answer:
        return replace(served, body=huge) if index == 2 else served

    server.tamper = swell
    listing = await _list(_lister(Listing()), _org(server))
    assert len(listing.listed) == 100
    assert listing.error is not None
    assert "a page over 32 MiB" in str(listing.error)


async def test_a_search_of_exactly_the_cap_asks_no_page_past_it(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 1000))
    source = entry_of(f'github:search/"stars:>1"@{server.base_url}')
    assert isinstance(source, Source)

    def endless(request: Seen, served: Answer, index: int) -> Answer:
        # A next link past the cap (GitHub names none): following it would be a 422.
        target = f"{server.base_url}/api/v3/search/repositories?q=x&per_page=100"
        link = f'<{target}&page={index + 1}>; rel="next"'
        return replace(served, headers={**served.headers, "Link": link})

    server.tamper = endless
    listing = await _list(_lister(Listing()), source)
    assert listing.error is None
    assert len(listing.listed) == 1000
    assert not any(page.capped for page in listing.pages)
    assert len(server.seen) == 10


async def test_a_limit_whose_reset_is_past_is_retried_a_second_later_not_at_once(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = await _github(nursery, made("acme", 5))

    def stale(request: Seen, served: Answer, index: int) -> Answer:
        # A primary limit whose reset the server's own Date already passed.
        if index > 2:
            return served
        stale_reset = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(EPOCH - 10)}
        return Answer(403, {**served.headers, **stale_reset}, b"{}")

    server.tamper = stale
    got = Listing()
    listing = await _list(_lister(got), _org(server))
    assert len(listing.listed) == 5
    assert [seen.status for seen in server.seen] == [403, 403, 200]
    assert got.waits == [("GitHub's core rate limit", 1.0)] * 2
    assert server.seen[2].at - server.seen[0].at >= 2


async def test_a_403_that_is_no_limit_is_a_refusal_not_a_wait(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 5))
    refusal = b'{"message": "Resource not accessible\\u001b[2J"}'
    server.tamper = lambda request, served, index: Answer(403, {}, refusal)
    got = Listing()
    listing = await _list(_lister(got), _org(server))
    assert got.waits == []
    assert len(server.seen) == 1
    assert listing.error is not None
    assert "HTTP 403" in str(listing.error)
    assert str(listing.error).isprintable()


async def test_an_incomplete_search_says_so(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("acme", 50))
    source = entry_of(f'github:search/"stars:>1"@{server.base_url}')
    assert isinstance(source, Source)

    def timed_out(request: Seen, served: Answer, index: int) -> Answer:
        body = json.loads(served.body)
        body["incomplete_results"] = True
        return replace(served, body=json.dumps(body).encode())

    server.tamper = timed_out
    listing = await _list(_lister(Listing()), source)
    assert [page.incomplete for page in listing.pages] == [True]
    assert len(listing.listed) == 50

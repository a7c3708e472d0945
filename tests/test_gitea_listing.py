"""The Gitea/Forgejo listing adapter (clonegate/_adapters/forges/gitea.py) against the
loopback Gitea API (tests/support/forges/gitea.py): pages by number each once, a Link
written for another origin never followed, X-Total-Count checked, a 429 waited out on
trio's clock, the token (tea's ``token`` form) only to its API host, malformed items
one error each, a failure mid-way after the pages already given (issue 45, ADR 0023)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
import trio.testing

from clonegate._adapters.forges.gitea import GiteaLister
from clonegate._domain.sources import Forge

from .support.forges.catalogue import Made, made
from .support.forges.core import (
    Answer,
    Seen,
    on_request,
    serving,
    with_headers,
)
from .support.forges.gitea import GiteaApi
from .support.forges.listing import https_context, run, token_for

GIT = "http://127.0.0.1:9418"
TOKEN = "gitea-loopback-token"


async def _gitea(nursery: trio.Nursery, repos: list[Made], **options: Any) -> GiteaApi:
    return await serving(nursery, GiteaApi(repos, git_base=GIT, orgs=["acme"], **options))


async def test_every_page_once_by_number(nursery: trio.Nursery) -> None:
    repos = made("acme", 120)
    server = await _gitea(nursery, repos)
    got = await run(GiteaLister, f"gitea:org/acme@{server.base_url}")
    assert got.error is None
    assert got.refused == []
    assert got.names == [repo.full_name for repo in repos]
    assert [seen.param("page") for seen in server.seen] == ["1", "2", "3"]
    assert {seen.param("limit") for seen in server.seen} == {"50"}
    assert len(set(server.served_pages())) == len(server.seen)
    assert not any(page.incomplete for page in got.pages)
    plain, fork, empty = got.listed[0], got.listed[4], got.listed[10]
    assert (plain.fork, fork.fork) == (False, True)
    assert (plain.empty, empty.empty) == (False, True)
    assert (plain.language, empty.language) == ("Python", None)  # "" is none
    assert plain.stars == repos[0].stars
    assert plain.size_kib == repos[0].size
    assert plain.pushed_at is not None
    assert plain.pushed_at.isoformat() == "2024-01-01T00:00:00+00:00"  # updated_at


async def test_a_users_repositories(nursery: trio.Nursery) -> None:
    server = await _gitea(nursery, made("someone", 7))
    got = await run(GiteaLister, f"forgejo:user/someone@{server.base_url}")
    assert len(got.listed) == 7
    assert server.seen[0].path == "/api/v1/users/someone/repos"


async def test_a_link_to_another_origin_is_a_signal_never_followed(nursery: trio.Nursery) -> None:
    # Gitea writes its links from ROOT_URL, often not where it is reached.
    server = await _gitea(nursery, made("acme", 120))
    elsewhere = await _gitea(nursery, made("acme", 120))

    def root_url(request: Seen, served: Answer, index: int) -> Answer:
        link = served.headers.get("Link", "").replace(server.base_url, elsewhere.base_url)
        return with_headers(served, Link=link or None)

    server.tamper = root_url
    got = await run(GiteaLister, f"gitea:org/acme@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 120
    assert len(server.seen) == 3
    assert elsewhere.seen == []


async def test_fewer_listed_than_the_count_says_is_incomplete(nursery: trio.Nursery) -> None:
    server = await _gitea(nursery, made("acme", 70))
    server.tamper = on_request(2, lambda r, served, i: with_headers(served, X_Total_Count="75"))
    got = await run(GiteaLister, f"gitea:org/acme@{server.base_url}")
    assert got.error is None
    assert [page.incomplete for page in got.pages] == [False, True]


async def test_without_link_the_count_pages_on(nursery: trio.Nursery) -> None:
    server = await _gitea(nursery, made("acme", 120))
    server.tamper = lambda request, served, index: with_headers(served, Link=None)
    got = await run(GiteaLister, f"gitea:org/acme@{server.base_url}")
    assert len(got.listed) == 120
    assert len(server.seen) == 3
    assert not any(page.incomplete for page in got.pages)


async def test_a_429_is_waited_out(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = await _gitea(nursery, made("acme", 60))
    server.throttle(count=2, retry_after=45)
    got = await run(GiteaLister, f"gitea:org/acme@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 60
    assert got.waits == [("Gitea's rate limit", 45.0)] * 2
    assert [seen.status for seen in server.seen] == [429, 429, 200, 200]
    assert server.seen[2].at - server.seen[0].at >= 90


async def test_the_token_goes_only_to_its_api_host(nursery: trio.Nursery, tmp_path: Path) -> None:
    context, ca = https_context(tmp_path)
    api = GiteaApi(made("acme", 60), git_base=GIT, orgs=["acme"])
    other = GiteaApi(made("acme", 60), git_base=GIT, orgs=["acme"])
    api.tls = other.tls = context
    await nursery.start(api.serve)
    await nursery.start(other.serve)
    tokens = token_for(Forge.GITEA, api, TOKEN)
    here = await run(GiteaLister, f"gitea:org/acme@{api.base_url}", tokens=tokens, ca=ca)
    there = await run(GiteaLister, f"gitea:org/acme@{other.base_url}", tokens=tokens, ca=ca)
    assert len(here.listed) == len(there.listed) == 60
    assert [seen.authorization for seen in api.seen] == [f"token {TOKEN}"] * 2
    assert [seen.authorization for seen in other.seen] == [None] * 2


async def test_an_instance_that_serves_fewer_a_page_is_paged_whole(
    nursery: trio.Nursery,
) -> None:
    # MAX_RESPONSE_ITEMS = 30 here: the limit asked is cut, the page numbers still follow.
    repos = made("acme", 100)
    server = await _gitea(nursery, repos, max_limit=30)
    got = await run(GiteaLister, f"gitea:org/acme@{server.base_url}")
    assert got.error is None
    assert got.names == [repo.full_name for repo in repos]
    assert [seen.param("page") for seen in server.seen] == ["1", "2", "3", "4"]
    assert not any(page.incomplete for page in got.pages)

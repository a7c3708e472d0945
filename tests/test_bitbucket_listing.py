"""The Bitbucket Cloud listing adapter (clonegate/_adapters/forges/bitbucket.py) against
the loopback Bitbucket API (tests/support/forges/bitbucket.py): ``next`` followed to the
end, each page once, and only on the first page's origin; a 429 with or without
Retry-After waited out on trio's clock; the token only to its API host; the https clone
link without the user name Bitbucket writes in; malformed items one error each; a
failure mid-way after the pages already given (issue 45, ADR 0023)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import trio
import trio.testing

from clonegate._adapters.forges.bitbucket import BitbucketLister
from clonegate._domain.sources import Forge

from .support.forges.bitbucket import BitbucketApi
from .support.forges.catalogue import Made, made
from .support.forges.core import on_request, rewrite, serving
from .support.forges.listing import https_context, run, token_for

GIT = "http://127.0.0.1:9418"
TOKEN = "bitbucket-loopback-token"


async def _bitbucket(nursery: trio.Nursery, repos: list[Made], **options: Any) -> BitbucketApi:
    return await serving(nursery, BitbucketApi(repos, git_base=GIT, **options))


async def test_next_is_followed_to_the_end_each_page_once(nursery: trio.Nursery) -> None:
    repos = made("acme", 250)
    server = await _bitbucket(nursery, repos)
    got = await run(BitbucketLister, f"bitbucket:workspace/acme@{server.base_url}")
    assert (got.error, got.refused) == (None, [])
    assert got.names == [repo.full_name for repo in repos]
    asked = [(seen.param("pagelen"), seen.param("page")) for seen in server.seen]
    assert asked == [("100", None), ("100", "2"), ("100", "3")]
    assert len(set(server.served_pages())) == 3
    plain, fork, empty = got.listed[0], got.listed[4], got.listed[10]
    assert (plain.fork, fork.fork) == (False, True)  # "parent": null, or a parent
    assert plain.forge_id.startswith("{")
    assert plain.size_kib == repos[0].size  # bytes, back in KiB
    assert (plain.default_branch, empty.default_branch) == ("main", None)
    assert (plain.language, empty.language) == ("python", None)
    assert (plain.archived, plain.stars, plain.empty) == (None, None, None)  # not said
    assert plain.clone_url == repos[0].clone_url(GIT)


async def test_a_next_on_another_origin_is_an_error_after_its_page(nursery: trio.Nursery) -> None:
    server = await _bitbucket(nursery, made("acme", 250))
    elsewhere = await _bitbucket(nursery, made("acme", 250))

    def away(body: dict[str, Any]) -> None:
        body["next"] = body["next"].replace(server.base_url, elsewhere.base_url)

    server.tamper = on_request(2, rewrite(away))
    got = await run(BitbucketLister, f"bitbucket:workspace/acme@{server.base_url}")
    assert len(got.listed) == 200
    assert got.error is not None
    assert "another origin" in str(got.error)
    assert elsewhere.seen == []


async def test_the_clone_link_loses_the_user_bitbucket_writes_in(nursery: trio.Nursery) -> None:
    server = await _bitbucket(nursery, made("acme", 3))

    def users(body: dict[str, Any]) -> None:
        first, second = body["values"][0], body["values"][1]
        first["links"]["clone"][0]["href"] = first["links"]["clone"][0]["href"].replace(
            "http://", "http://someone@"
        )
        second["links"]["clone"][0]["href"] = "http://someone:app-password@127.0.0.1/x/y.git"

    server.tamper = rewrite(users)
    got = await run(BitbucketLister, f"bitbucket:workspace/acme@{server.base_url}")
    assert [record.clone_url for record in got.listed] == [
        made("acme", 3)[0].clone_url(GIT),
        made("acme", 3)[2].clone_url(GIT),
    ]
    assert len(got.refused) == 1
    assert "password" in got.refused[0]
    assert "app-password" not in got.refused[0]


async def test_a_429_is_waited_out_with_or_without_retry_after(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = await _bitbucket(nursery, made("acme", 150))
    server.throttle(count=1, retry_after=None)
    got = await run(BitbucketLister, f"bitbucket:workspace/acme@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 150
    assert got.waits == [("Bitbucket's rate limit (no hint)", 60.0)]
    server.throttle(count=1, retry_after=7)
    again = await run(BitbucketLister, f"bitbucket:workspace/acme@{server.base_url}")
    assert again.waits == [("Bitbucket's rate limit", 7.0)]
    assert [seen.status for seen in server.seen] == [429, 200, 200, 429, 200, 200]
    assert server.seen[1].at - server.seen[0].at >= 60


async def test_the_token_goes_only_to_its_api_host(nursery: trio.Nursery, tmp_path: Path) -> None:
    context, ca = https_context(tmp_path)
    api = BitbucketApi(made("acme", 150), git_base=GIT)
    api.tls = context
    await nursery.start(api.serve)
    other = BitbucketApi(made("acme", 150), git_base=GIT)
    other.tls = context
    await nursery.start(other.serve)
    tokens = token_for(Forge.BITBUCKET, api, TOKEN)
    here = await run(
        BitbucketLister, f"bitbucket:workspace/acme@{api.base_url}", tokens=tokens, ca=ca
    )
    there = await run(
        BitbucketLister, f"bitbucket:workspace/acme@{other.base_url}", tokens=tokens, ca=ca
    )
    assert len(here.listed) == len(there.listed) == 150
    assert [seen.authorization for seen in api.seen] == [f"Bearer {TOKEN}"] * 2
    assert [seen.authorization for seen in other.seen] == [None] * 2


async def test_malformed_items_are_one_error_each(nursery: trio.Nursery) -> None:
    server = await _bitbucket(nursery, made("acme", 100))

    def spoil(body: dict[str, Any]) -> None:
        values = body["values"]
        values[1]["uuid"] = 12
        values[2]["links"] = {"clone": [{"name": "ssh", "href": "git@x:y.git"}]}
        values[3]["size"] = -5
        values[4]["updated_on"] = "\x1b[2J"
        values[5] = None
        values[6]["mainbranch"] = {"name": "\x1b]0;x\x07"}

    server.tamper = on_request(1, rewrite(spoil))
    got = await run(BitbucketLister, f"bitbucket:workspace/acme@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 94
    assert len(got.refused) == 6
    assert all(message.isprintable() for message in got.refused)


async def test_an_unknown_workspace_is_an_error_not_an_empty_list(nursery: trio.Nursery) -> None:
    server = await _bitbucket(nursery, made("acme", 3))
    got = await run(BitbucketLister, f"bitbucket:workspace/nobody@{server.base_url}")
    assert got.listed == []
    assert got.error is not None
    assert "HTTP 404" in str(got.error)


async def test_a_relative_next_is_read_against_the_page(nursery: trio.Nursery) -> None:
    server = await _bitbucket(nursery, made("acme", 250))

    def relative(body: dict[str, Any]) -> None:
        if "next" in body:
            body["next"] = body["next"].removeprefix(server.base_url)

    server.tamper = rewrite(relative)
    got = await run(BitbucketLister, f"bitbucket:workspace/acme@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 250
    assert len(server.seen) == 3

"""The GitLab listing adapter (clonegate/_adapters/forges/gitlab.py) against the loopback
GitLab API (tests/support/forges/gitlab.py): keyset pages walked once each, subgroups
included, offset pages where keyset is refused, rate limits waited out on trio's clock,
the token only to its API host, malformed items one error each, a failure mid-way after
the pages already given, an instance under a path (issue 45, ADR 0023)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import trio
import trio.testing

from clonegate._adapters.forges.gitlab import GitLabLister
from clonegate._domain.forge_tokens import ForgeTokens
from clonegate._domain.sources import Forge

from .support.forges.catalogue import FIXTURES, Made, made
from .support.forges.core import (
    Answer,
    Seen,
    json_answer,
    on_request,
    serving,
    with_headers,
)
from .support.forges.gitlab import GitLabApi
from .support.forges.listing import https_context, run, source, token_for

GIT = "http://127.0.0.1:9418"
EPOCH = 1_700_000_000
TOKEN = "glpat-loopback-token"


async def _gitlab(nursery: trio.Nursery, repos: list[Made], **options: Any) -> GitLabApi:
    return await serving(nursery, GitLabApi(repos, git_base=GIT, epoch=EPOCH, **options))


def _tree() -> list[Made]:
    return (
        made("gitlab-org", 150)
        + made("gitlab-org/sub", 80, first_id=5000)
        + made("gitlab-orgs", 10, first_id=9000)  # beside it, not below
    )


async def test_keyset_pages_with_subgroups_each_once(nursery: trio.Nursery) -> None:
    repos = _tree()
    server = await _gitlab(nursery, repos)
    got = await run(GitLabLister, f"gitlab:group/gitlab-org@{server.base_url}")
    assert got.error is None
    assert got.refused == []
    assert got.names == [repo.full_name for repo in repos[:230]]
    assert [seen.status for seen in server.seen] == [200] * 3
    assert len(set(server.served_pages())) == 3
    assert {seen.param("pagination") for seen in server.seen} == {"keyset"}
    assert {seen.param("include_subgroups") for seen in server.seen} == {"true"}
    assert {seen.param("with_shared") for seen in server.seen} == {"false"}
    assert {seen.param("per_page") for seen in server.seen} == {"100"}
    # What GitLab says and does not say.
    fork, plain, empty = got.listed[4], got.listed[0], got.listed[10]
    assert (fork.fork, plain.fork) == (True, None)  # no forked_from_project: not said
    assert (empty.empty, plain.empty) == (True, False)
    assert plain.language is None
    assert plain.pushed_at is not None
    assert plain.pushed_at.isoformat() == "2024-01-01T00:00:00+00:00"  # last_activity_at
    assert plain.stars == repos[0].stars
    assert plain.size_kib is None
    assert plain.topics == repos[0].topics


async def test_keyset_refused_falls_back_to_offset_pages(nursery: trio.Nursery) -> None:
    repos = made("acme", 250)
    server = await _gitlab(nursery, repos)
    refusal = json.loads((FIXTURES / "gitlab" / "keyset_unavailable.json").read_text())
    server.tamper = on_request(1, lambda request, served, index: json_answer(405, refusal))
    got = await run(GitLabLister, f"gitlab:group/acme@{server.base_url}")
    assert got.error is None
    assert got.names == [repo.full_name for repo in repos]
    assert [seen.status for seen in server.seen] == [405, 200, 200, 200]
    assert server.seen[0].param("pagination") == "keyset"
    assert all(seen.param("pagination") is None for seen in server.seen[1:])
    assert [seen.param("page") for seen in server.seen[1:]] == [None, "2", "3"]


async def test_a_405_past_the_first_page_is_an_error_keeping_the_pages(
    nursery: trio.Nursery,
) -> None:
    server = await _gitlab(nursery, made("acme", 250))
    server.tamper = on_request(2, lambda request, served, index: json_answer(405, {"error": "no"}))
    got = await run(GitLabLister, f"gitlab:group/acme@{server.base_url}")
    assert len(got.listed) == 100
    assert got.error is not None
    assert "HTTP 405" in str(got.error)
    assert len(server.seen) == 2


async def test_a_429_is_waited_out_as_retry_after_says(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = await _gitlab(nursery, made("acme", 250), limit=2, window=600)
    got = await run(GitLabLister, f"gitlab:group/acme@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 250
    assert [seen.status for seen in server.seen] == [200, 200, 429, 200]
    assert len(got.waits) == 1
    assert got.waits[0][0] == "GitLab's rate limit"
    assert 600 - 2 <= got.waits[0][1] <= 600
    assert server.seen[3].at >= server.seen[0].at + 600
    assert len(set(server.served_pages())) == 3


async def test_ratelimit_reset_is_read_by_the_servers_date(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = await _gitlab(nursery, made("acme", 150), limit=1, window=900)
    # A 429 without Retry-After: RateLimit-Reset (Unix time, the server's clock) says.
    server.tamper = lambda request, served, index: with_headers(served, Retry_After=None)
    got = await run(GitLabLister, f"gitlab:group/acme@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 150
    assert got.waits[0][0] == "GitLab's throttle_authenticated_api rate limit"
    assert 900 - 2 <= got.waits[0][1] <= 900 + 2
    assert server.seen[-1].at >= server.seen[0].at + 900


async def test_the_token_goes_only_to_its_api_host(nursery: trio.Nursery, tmp_path: Path) -> None:
    context, ca = https_context(tmp_path)
    repos = made("acme", 300)
    api = GitLabApi(repos, git_base=GIT, epoch=EPOCH)
    elsewhere = GitLabApi(repos, git_base=GIT, epoch=EPOCH)
    api.tls = elsewhere.tls = context
    await nursery.start(api.serve)
    await nursery.start(elsewhere.serve)

    def to_elsewhere(request: Seen, served: Answer, index: int) -> Answer:
        link = served.headers["Link"].replace(api.base_url, elsewhere.base_url)
        return with_headers(served, Link=link)

    api.tamper = on_request(2, to_elsewhere)
    tokens = token_for(Forge.GITLAB, api, TOKEN)
    got = await run(GitLabLister, f"gitlab:group/acme@{api.base_url}", tokens=tokens, ca=ca)
    assert got.error is None
    assert len(got.listed) == 300
    assert [seen.headers.get("private-token") for seen in api.seen] == [TOKEN] * 2
    assert [seen.authorization for seen in api.seen] == [None] * 2
    assert [seen.headers.get("private-token") for seen in elsewhere.seen] == [None]


async def test_no_token_over_plain_http(nursery: trio.Nursery) -> None:
    server = await _gitlab(nursery, made("acme", 5))
    tokens = token_for(Forge.GITLAB, server, TOKEN)
    got = await run(GitLabLister, f"gitlab:group/acme@{server.base_url}", tokens=tokens)
    assert len(got.listed) == 5
    assert [seen.headers.get("private-token") for seen in server.seen] == [None]


async def test_an_instance_under_a_path_and_a_users_projects(nursery: trio.Nursery) -> None:
    repos = made("someone", 120) + made("acme", 3, first_id=9000)
    server = await _gitlab(nursery, repos, users=["someone"], prefix="/gitlab")
    base = f"{server.base_url}/gitlab"
    got = await run(GitLabLister, f"gitlab:user/someone@{base}")
    assert got.error is None
    assert got.names == [repo.full_name for repo in repos[:120]]
    assert [seen.path for seen in server.seen] == ["/gitlab/api/v4/users/someone/projects"] * 2


async def test_a_nested_group_path_is_one_encoded_id(nursery: trio.Nursery) -> None:
    server = await _gitlab(nursery, _tree())
    got = await run(GitLabLister, f"gitlab:group/gitlab-org/sub@{server.base_url}")
    assert got.error is None
    assert len(got.listed) == 80
    assert server.seen[0].path == "/api/v4/groups/gitlab-org%2Fsub/projects"


async def test_pages_are_not_held_for_a_forge_without_conditional_lists(
    nursery: trio.Nursery,
) -> None:
    # Only GitHub's held pages pay (a free 304): another forge's ETags hold no memory.
    server = await _gitlab(nursery, made("acme", 150))
    server.tamper = lambda request, served, index: with_headers(served, ETag='W/"same"')
    lister = GitLabLister(ForgeTokens(), on_wait=lambda why, seconds: None)
    for _ in range(2):
        async for _page in lister.pages(
            source(f"gitlab:group/acme@{server.base_url}"), deadline=math.inf
        ):
            pass
    assert [seen.headers.get("if-none-match") for seen in server.seen] == [None] * 4

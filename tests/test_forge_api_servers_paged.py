"""The loopback GitLab, Gitea/Forgejo and Bitbucket Cloud APIs (tests/support/forges/):
each documented behaviour, driven with urllib3, read back from the server's record
(issue 45). GitHub and the shared HTTP core: tests/test_forge_api_servers.py."""

from __future__ import annotations

from typing import Any

import trio
import trio.testing

from .support.forges.bitbucket import BitbucketApi
from .support.forges.catalogue import Made, fixture, keys_of, made
from .support.forges.client import Got, get, walk_bodies, walk_links
from .support.forges.gitea import GiteaApi
from .support.forges.gitlab import TOTALS_CAP, GitLabApi

GIT = "http://127.0.0.1:9418"
EPOCH = 1_700_000_000


def _ids(pages: list[Got]) -> list[int]:
    return [item["id"] for page in pages for item in page.json()]


def _tree() -> list[Made]:
    """A group with a subgroup, a sub-subgroup and a group beside it."""
    return (
        made("gitlab-org", 30)
        + made("gitlab-org/sub", 15, first_id=5000)
        + made("gitlab-org/sub/deep", 5, first_id=7000)
        + made("gitlab-orgs", 10, first_id=9000)  # a prefix of no path of ours
    )


async def _gitlab(nursery: trio.Nursery, repos: list[Made], **options: Any) -> GitLabApi:
    server = GitLabApi(repos, git_base=GIT, epoch=EPOCH, **options)
    await nursery.start(server.serve)
    return server


async def test_gitlab_keyset_pages_with_subgroups_each_once(nursery: trio.Nursery) -> None:
    repos = _tree()
    server = await _gitlab(nursery, repos)
    query = "include_subgroups=true&pagination=keyset&order_by=id&sort=asc&per_page=20"
    pages = await walk_links(f"{server.base_url}/api/v4/groups/gitlab-org/projects?{query}")

    assert _ids(pages) == [r.id for r in repos[:50]]
    assert [len(p.json()) for p in pages] == [20, 20, 10]
    assert set(pages[0].links()) == {"next"}
    assert "link" not in pages[-1].headers
    assert pages[0].links()["next"].endswith(f"&id_after={repos[19].id}")
    assert all("x-total" not in p.headers and "x-page" not in p.headers for p in pages)
    assert len(set(server.served_pages())) == len(server.seen) == 3
    # A last page that is full has no next link: no empty page after it.
    whole = await walk_links(f"{server.base_url}/api/v4/groups/gitlab-org/projects?{query[:-2]}25")
    assert [len(p.json()) for p in whole] == [25, 25]


async def test_gitlab_keyset_descending_and_other_orders_refused(nursery: trio.Nursery) -> None:
    repos = _tree()
    server = await _gitlab(nursery, repos)
    base = f"{server.base_url}/api/v4/groups/gitlab-org/projects?pagination=keyset"
    pages = await walk_links(f"{base}&order_by=id&sort=desc&per_page=7")
    assert _ids(pages) == [r.id for r in reversed(repos[:30])]
    assert "id_before=" in pages[0].links()["next"]
    refused = await get(f"{base}&order_by=name")
    assert refused.status == 405
    assert "Keyset pagination" in refused.json()["error"]


async def test_gitlab_offset_pages_and_their_headers(nursery: trio.Nursery) -> None:
    server = await _gitlab(nursery, _tree())
    pages = await walk_links(f"{server.base_url}/api/v4/groups/gitlab-org/projects")

    assert [len(p.json()) for p in pages] == [20, 10]  # 20 a page by default
    first, last = pages[0].headers, pages[1].headers
    assert (first["x-page"], first["x-per-page"], first["x-next-page"]) == ("1", "20", "2")
    assert (first["x-prev-page"], first["x-total"], first["x-total-pages"]) == ("", "30", "2")
    assert (last["x-next-page"], last["x-prev-page"]) == ("", "1")
    assert set(pages[0].links()) == {"next", "first", "last"}
    assert set(pages[1].links()) == {"prev", "first", "last"}


async def test_gitlab_counts_no_totals_past_10000(nursery: trio.Nursery) -> None:
    server = await _gitlab(nursery, made("big", TOTALS_CAP + 1))
    got = await get(f"{server.base_url}/api/v4/groups/big/projects?per_page=100")
    assert len(got.json()) == 100
    assert got.headers["x-next-page"] == "2"
    assert "x-total" not in got.headers
    assert "x-total-pages" not in got.headers
    assert set(got.links()) == {"next", "first"}


async def test_gitlab_group_by_number_or_encoded_path_users_by_name(nursery: trio.Nursery) -> None:
    repos = [*_tree(), *made("alice", 3, first_id=20_000)]
    server = await _gitlab(nursery, repos, users=["alice"])
    number = server.group_id("gitlab-org/sub")
    v4 = f"{server.base_url}/api/v4"
    by_path = await get(f"{v4}/groups/gitlab-org%2Fsub/projects?include_subgroups=true")
    by_number = await get(f"{v4}/groups/{number}/projects")
    unencoded = await get(f"{v4}/groups/gitlab-org/sub/projects")
    user = await get(f"{v4}/users/alice/projects")

    assert len(by_path.json()) == 20
    assert len(by_number.json()) == 15
    assert unencoded.status == 404
    assert [p["namespace"]["kind"] for p in user.json()] == ["user"] * 3
    assert (await get(f"{v4}/groups/alice/projects")).status == 404
    assert (await get(f"{v4}/groups/nobody/projects")).json() == {"message": "404 Group Not Found"}


async def test_gitlab_project_shape(nursery: trio.Nursery) -> None:
    server = await _gitlab(nursery, made("gitlab-org/sub", 12))
    url = f"{server.base_url}/api/v4/groups/gitlab-org%2Fsub/projects?per_page=100"
    items = (await get(url)).json()
    with_statistics = (await get(url + "&statistics=true")).json()

    documented = keys_of(fixture("gitlab", "project.json"))
    plain = [i for i in items if "forked_from_project" not in i]
    assert all(
        keys_of(i) == documented - {k for k in documented if "statistics" in k} for i in plain
    )
    assert keys_of(with_statistics[0]) == documented
    assert keys_of(items[4]["forked_from_project"]) == keys_of(
        fixture("gitlab", "forked_from_project.json")
    )
    assert items[0]["http_url_to_repo"] == f"{GIT}/gitlab-org/sub/repo-00000.git"
    assert items[0]["namespace"]["full_path"] == "gitlab-org/sub"
    assert items[0]["namespace"]["parent_id"] == server.group_id("gitlab-org")
    assert (items[10]["empty_repo"], items[10]["default_branch"]) == (True, None)
    assert (items[6]["archived"], items[11]["mirror"]) == (True, False)
    archived = (await get(url + "&archived=true")).json()
    assert [p["id"] for p in archived] == [items[6]["id"]]


async def test_gitlab_rate_limit_429_retry_after_reset_on_the_trio_clock(
    nursery: trio.Nursery, mock_clock: trio.testing.MockClock
) -> None:
    server = await _gitlab(nursery, made("g", 3), limit=2, window=60.0)
    url = f"{server.base_url}/api/v4/groups/g/projects"
    first, second = await get(url), await get(url)
    mock_clock.jump(15)
    refused = await get(url)

    assert [first.headers["ratelimit-remaining"], second.headers["ratelimit-remaining"]] == [
        "1",
        "0",
    ]
    assert refused.status == 429
    assert refused.body == b"Retry later\n"
    assert refused.headers["retry-after"] == "45"
    assert refused.headers["ratelimit-reset"] == str(EPOCH + 60)
    assert refused.headers["ratelimit-resettime"] == "Tue, 14 Nov 2023 22:14:20 GMT"
    assert refused.headers["ratelimit-observed"] == "2"
    mock_clock.jump(45)
    assert (await get(url)).status == 200


async def _gitea(nursery: trio.Nursery, repos: list[Made], **options: Any) -> GiteaApi:
    server = GiteaApi(repos, git_base=GIT, **options)
    await nursery.start(server.serve)
    return server


async def test_gitea_pages_with_total_count_and_link(nursery: trio.Nursery) -> None:
    repos = made("forgejo", 120)
    server = await _gitea(nursery, repos, orgs=["forgejo"])
    pages = await walk_links(f"{server.base_url}/api/v1/orgs/forgejo/repos?limit=100")

    assert [len(p.json()) for p in pages] == [50, 50, 20]  # 100 asked, 50 served
    assert _ids(pages) == [r.id for r in repos]
    assert {p.headers["x-total-count"] for p in pages} == {"120"}
    assert set(pages[0].links()) == {"next", "last"}
    assert set(pages[1].links()) == {"next", "last", "first", "prev"}
    assert set(pages[2].links()) == {"first", "prev"}
    assert pages[0].links()["last"].endswith("limit=100&page=3")
    assert len(set(server.served_pages())) == 3
    by_default = await walk_links(f"{server.base_url}/api/v1/users/forgejo/repos")
    assert [len(p.json()) for p in by_default] == [30] * 4  # a full last page ends the walk


async def test_gitea_owners_shape_and_throttling(nursery: trio.Nursery) -> None:
    server = await _gitea(
        nursery, made("forgejo", 5) + made("bob", 2, first_id=50), orgs=["forgejo"]
    )
    v1 = f"{server.base_url}/api/v1"
    items = (await get(f"{v1}/orgs/forgejo/repos")).json()
    assert (await get(f"{v1}/orgs/bob/repos")).status == 404
    assert len((await get(f"{v1}/users/bob/repos")).json()) == 2

    documented = keys_of(fixture("gitea", "repository.json"))
    assert keys_of(items[0]) == documented
    assert keys_of(items[4]) - documented == {f"parent.{k}" for k in documented}
    assert items[4]["fork"] is True
    assert items[4]["parent"]["full_name"] == "upstream/repo-00004"
    assert items[0]["clone_url"] == f"{GIT}/forgejo/repo-00000.git"
    assert items[0]["language"] == "Python"
    assert items[3]["language"] == ""

    server.throttle(count=1, retry_after=7)
    refused, served = await get(f"{v1}/users/bob/repos"), await get(f"{v1}/users/bob/repos")
    assert (refused.status, refused.headers["retry-after"], served.status) == (429, "7", 200)


async def _bitbucket(nursery: trio.Nursery, repos: list[Made]) -> BitbucketApi:
    server = BitbucketApi(repos, git_base=GIT, workspaces=["empty-ws"])
    await nursery.start(server.serve)
    return server


async def test_bitbucket_follows_next_until_absent(nursery: trio.Nursery) -> None:
    repos = made("atlassian", 25)
    server = await _bitbucket(nursery, repos)
    pages = await walk_bodies(f"{server.base_url}/2.0/repositories/atlassian")

    bodies = [p.json() for p in pages]
    assert [len(b["values"]) for b in bodies] == [10, 10, 5]  # pagelen 10 by default
    assert [b["page"] for b in bodies] == [1, 2, 3]
    assert {b["size"] for b in bodies} == {25}
    assert "previous" not in bodies[0]
    assert bodies[2]["previous"].endswith("page=2")
    assert [v["full_name"] for b in bodies for v in b["values"]] == [r.full_name for r in repos]
    assert len(set(server.served_pages())) == 3
    envelope = keys_of(fixture("bitbucket", "paginated_repositories.json"))
    assert {k for k in keys_of(bodies[1]) if not k.startswith("values")} == (
        {k for k in envelope if not k.startswith("values")} | {"previous"}
    )
    whole = await walk_bodies(f"{server.base_url}/2.0/repositories/atlassian?pagelen=5")
    assert [len(p.json()["values"]) for p in whole] == [5] * 5  # no empty page after
    big = (await get(f"{server.base_url}/2.0/repositories/atlassian?pagelen=500")).json()
    assert (big["pagelen"], len(big["values"]), "next" in big) == (100, 25, False)


async def test_bitbucket_repository_shape_and_failures(nursery: trio.Nursery) -> None:
    server = await _bitbucket(nursery, made("atlassian", 11))
    values = (await get(f"{server.base_url}/2.0/repositories/atlassian?pagelen=20")).json()[
        "values"
    ]

    documented = keys_of(fixture("bitbucket", "repository.json"))
    assert keys_of(values[0]) == documented
    assert keys_of(values[4]) - documented == {
        "parent.type",
        "parent.full_name",
        "parent.links",
        "parent.links.self",
        "parent.links.self.href",
        "parent.name",
        "parent.uuid",
    }
    assert values[0]["links"]["clone"][0] == {
        "name": "https",
        "href": f"{GIT}/atlassian/repo-00000.git",
    }
    assert values[0]["mainbranch"] == {"name": "main", "type": "branch"}
    assert values[10]["mainbranch"] is None  # an empty repository has no main branch
    assert values[0]["uuid"].startswith("{")
    assert values[0]["uuid"].endswith("}")

    empty = (await get(f"{server.base_url}/2.0/repositories/empty-ws")).json()
    assert (empty["values"], empty["size"], "next" in empty) == ([], 0, False)
    missing = await get(f"{server.base_url}/2.0/repositories/nobody")
    assert missing.status == 404
    assert missing.json()["type"] == "error"
    server.throttle(count=1)
    refused = await get(f"{server.base_url}/2.0/repositories/atlassian")
    assert refused.status == 429
    assert "retry-after" not in refused.headers

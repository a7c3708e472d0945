"""The loopback GitHub API (tests/support/forges/github.py) and the HTTP core all forge
servers share: each documented behaviour, driven with urllib3 and read back from the
server's record (issue 45). Rate-limit resets move on a MockClock without autojump: the
test jumps, nothing sleeps. The other forges: tests/test_forge_api_servers_paged.py."""

from __future__ import annotations

import socket
from email.utils import parsedate_to_datetime

import pytest
import trio
import trio.testing

from .support.forges.catalogue import Made, fixture, hostile, keys_of, made
from .support.forges.client import Got, get, walk_links
from .support.forges.core import Answer, Seen, failing_from
from .support.forges.github import SEARCH_CAP, GitHubApi

GIT = "http://127.0.0.1:9418"  # where the listed repositories would be cloned from
EPOCH = 1_700_000_000
TOKEN = "ghp_loopback-token"


async def _github(nursery: trio.Nursery, repos: list[Made], **options: object) -> GitHubApi:
    server = GitHubApi(repos, git_base=GIT, epoch=EPOCH, **options)  # type: ignore[arg-type]
    await nursery.start(server.serve)
    return server


def _names(pages: list[Got]) -> list[str]:
    return [item["full_name"] for page in pages for item in page.json()]


async def test_org_repositories_walk_by_link_to_the_end_each_page_once(
    nursery: trio.Nursery,
) -> None:
    repos = made("pallets", 75) + made("other", 5, first_id=9000)
    server = await _github(nursery, repos, orgs=["pallets"])
    pages = await walk_links(f"{server.base_url}/orgs/pallets/repos?per_page=30&type=all")

    assert _names(pages) == [r.full_name for r in repos[:75]]
    assert [len(p.json()) for p in pages] == [30, 30, 15]
    assert set(pages[0].links()) == {"next", "last"}
    assert pages[0].links()["last"].endswith("per_page=30&type=all&page=3")
    assert set(pages[1].links()) == {"prev", "next", "last", "first"}
    assert set(pages[2].links()) == {"prev", "first"}
    served = server.served_pages()
    assert len(served) == 3
    assert len(set(served)) == 3
    assert all(s.param("type") == "all" for s in server.seen)  # kept on every next link


async def test_per_page_defaults_to_30_and_stops_at_100(nursery: trio.Nursery) -> None:
    server = await _github(nursery, made("octo", 250))
    assert len((await get(f"{server.base_url}/users/octo/repos")).json()) == 30
    big = await get(f"{server.base_url}/users/octo/repos?per_page=1000")
    assert len(big.json()) == 100
    assert big.links()["last"].endswith("page=3")
    whole = await walk_links(f"{server.base_url}/users/octo/repos?per_page=50")
    assert [len(p.json()) for p in whole] == [50] * 5  # a full last page ends the walk


async def test_owners_org_user_and_case(nursery: trio.Nursery) -> None:
    server = await _github(
        nursery, made("Pallets", 3) + made("alice", 2, first_id=50), orgs=["Pallets"]
    )
    assert len((await get(f"{server.base_url}/orgs/pallets/repos")).json()) == 3
    assert len((await get(f"{server.base_url}/users/alice/repos")).json()) == 2
    for missing in ("/orgs/alice/repos", "/orgs/nobody/repos", "/users/nobody/repos"):
        got = await get(server.base_url + missing)
        assert got.status == 404
        assert got.json()["message"] == "Not Found"


async def test_a_repository_has_the_documented_shape_and_loopback_clone_url(
    nursery: trio.Nursery,
) -> None:
    repos = made("pallets", 17)
    server = await _github(nursery, repos, orgs=["pallets"])
    items = (await get(f"{server.base_url}/orgs/pallets/repos?per_page=100")).json()

    documented = keys_of(fixture("github", "repository.json"))
    assert all(keys_of(item) == documented for item in items)
    first, fork, archived, empty = items[0], items[4], items[6], items[10]
    assert first["clone_url"] == f"{GIT}/pallets/repo-00000.git"
    assert first["url"] == f"{server.base_url}/repos/pallets/repo-00000"
    assert first["owner"]["login"] == "pallets"
    assert first["owner"]["type"] == "Organization"
    assert (fork["fork"], archived["archived"], empty["size"]) == (True, True, 0)
    assert items[16]["disabled"] is True
    assert items[12]["mirror_url"] == items[12]["clone_url"]
    assert items[2]["default_branch"] == "master"
    assert first["pushed_at"] == "2024-01-01T00:00:00Z"
    assert [i["id"] for i in items] == [r.id for r in repos]


async def test_search_reaches_only_the_first_1000_results(nursery: trio.Nursery) -> None:
    found = made("found", SEARCH_CAP + 200)
    server = await _github(nursery, [], search=found, search_total=4321)
    pages = await walk_links(
        f"{server.base_url}/search/repositories?q=language:python&per_page=100"
    )

    assert [p.status for p in pages] == [200] * 10
    assert {p.json()["total_count"] for p in pages} == {4321}
    assert {p.json()["incomplete_results"] for p in pages} == {False}
    assert [i["full_name"] for p in pages for i in p.json()["items"]] == [
        r.full_name for r in found[:SEARCH_CAP]
    ]
    assert pages[0].links()["last"].endswith("page=10")
    item = pages[0].json()["items"][0]
    assert keys_of(item) == keys_of(fixture("github", "search_repositories.json")["items"][0])
    past = await get(
        f"{server.base_url}/search/repositories?q=language:python&per_page=100&page=11"
    )
    assert past.status == 422
    assert past.json()["message"] == "Only the first 1000 search results are available"
    assert (await get(f"{server.base_url}/search/repositories?per_page=100")).status == 422


async def test_search_default_is_every_repository_by_stars(nursery: trio.Nursery) -> None:
    repos = made("octo", 40)
    server = await _github(nursery, repos)
    got = (await get(f"{server.base_url}/search/repositories?q=stars:>1&per_page=100")).json()
    assert got["total_count"] == 40
    stars = [i["stargazers_count"] for i in got["items"]]
    assert stars == sorted((r.stars for r in repos), reverse=True)


@pytest.mark.parametrize("status", [403, 429])
async def test_primary_limit_exhausted_then_reset_on_the_trio_clock(
    nursery: trio.Nursery, mock_clock: trio.testing.MockClock, status: int
) -> None:
    server = await _github(nursery, made("octo", 5), core_limit=3, limited_status=status)
    url = f"{server.base_url}/users/octo/repos"
    answers = [await get(url) for _ in range(4)]

    assert [a.status for a in answers] == [200, 200, 200, status]
    assert [a.headers["x-ratelimit-remaining"] for a in answers] == ["2", "1", "0", "0"]
    assert [a.headers["x-ratelimit-used"] for a in answers] == ["1", "2", "3", "3"]
    assert {a.headers["x-ratelimit-reset"] for a in answers} == {str(EPOCH + 3600)}
    assert {a.headers["x-ratelimit-limit"] for a in answers} == {"3"}
    assert {a.headers["x-ratelimit-resource"] for a in answers} == {"core"}
    assert answers[3].json()["message"].startswith("API rate limit exceeded")
    assert "retry-after" not in answers[3].headers  # the reset says when, not Retry-After
    # The server's Date is on the same clock: reset - Date is the wait, on any clock.
    assert {parsedate_to_datetime(a.headers["date"]).timestamp() for a in answers} == {EPOCH}

    mock_clock.jump(3599)
    assert (await get(url)).status == status
    mock_clock.jump(1)
    after = await get(url)
    assert after.status == 200
    assert after.headers["x-ratelimit-remaining"] == "2"
    assert after.headers["x-ratelimit-reset"] == str(EPOCH + 7200)


async def test_search_has_its_own_budget_per_minute(
    nursery: trio.Nursery, mock_clock: trio.testing.MockClock
) -> None:
    server = await _github(nursery, made("octo", 3), search_limit=1)
    search = f"{server.base_url}/search/repositories?q=x"
    first, second = await get(search), await get(search)
    assert (first.status, second.status) == (200, 403)
    assert second.headers["x-ratelimit-resource"] == "search"
    assert second.headers["x-ratelimit-reset"] == str(EPOCH + 60)
    core = await get(f"{server.base_url}/users/octo/repos")
    assert core.status == 200
    assert core.headers["x-ratelimit-used"] == "1"
    mock_clock.jump(60)
    assert (await get(search)).status == 200


async def test_secondary_limit_is_a_403_with_retry_after_and_costs_no_budget(
    nursery: trio.Nursery,
) -> None:
    server = await _github(nursery, made("octo", 3))
    url = f"{server.base_url}/users/octo/repos"
    server.secondary(count=2, retry_after=61)
    refused = [await get(url), await get(url)]
    served = await get(url)

    assert [r.status for r in refused] == [403, 403]
    assert {r.headers["retry-after"] for r in refused} == {"61"}
    assert "secondary rate limit" in refused[0].json()["message"]
    assert served.status == 200
    assert served.headers["x-ratelimit-used"] == "1"
    assert [s.status for s in server.seen] == [403, 403, 200]


async def test_etag_if_none_match_is_a_304_without_body_not_counted(
    nursery: trio.Nursery,
) -> None:
    server = await _github(nursery, made("octo", 40))
    url = f"{server.base_url}/users/octo/repos"
    authorized = {"Authorization": f"Bearer {TOKEN}"}
    first = await get(url, authorized)
    tag = first.headers["etag"]
    again = await get(url, {"If-None-Match": tag, **authorized})
    other_page = await get(url + "?page=2", {"If-None-Match": tag, **authorized})
    anonymous = await get(url, {"If-None-Match": tag})

    assert tag.startswith('W/"')
    assert (again.status, again.body, again.headers["etag"]) == (304, b"", tag)
    assert again.headers["x-ratelimit-used"] == "1"  # the 304 cost nothing
    assert other_page.status == 200
    assert other_page.headers["etag"] != tag
    assert other_page.headers["x-ratelimit-used"] == "2"
    assert anonymous.status == 304
    assert anonymous.headers["x-ratelimit-used"] == "3"  # counted: no Authorization


async def test_every_request_is_recorded_with_its_credentials_and_host(
    nursery: trio.Nursery,
) -> None:
    server = await _github(nursery, made("octo", 2), prefix="/api/v3")
    headers = {"Authorization": f"Bearer {TOKEN}", "Host": "ghe.example.com"}
    got = await get(f"{server.base_url}/api/v3/users/octo/repos?per_page=5", headers)
    missing = await get(f"{server.base_url}/users/octo/repos")

    assert got.status == 200
    assert missing.status == 404
    assert got.json()[0]["url"] == f"{server.base_url}/api/v3/repos/octo/repo-00000"
    seen = server.seen[0]
    assert (seen.method, seen.path, seen.query) == (
        "GET",
        "/api/v3/users/octo/repos",
        {"per_page": ["5"]},
    )
    assert (seen.authorization, seen.host) == (f"Bearer {TOKEN}", "ghe.example.com")
    assert server.seen[1].authorization is None


async def test_a_malformed_or_oversized_request_is_refused_and_recorded(
    nursery: trio.Nursery,
) -> None:
    server = await _github(nursery, [])

    def send(raw: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", server.port), timeout=30) as conn:
            conn.sendall(raw)
            conn.shutdown(socket.SHUT_WR)
            answer = b""
            while piece := conn.recv(65536):
                answer += piece
            return answer

    garbage = await trio.to_thread.run_sync(send, b"NOT HTTP\r\n\r\n")
    huge = b"GET / HTTP/1.1\r\nX-Pad: " + b"a" * 70_000 + b"\r\n\r\n"
    oversized = await trio.to_thread.run_sync(send, huge)

    assert garbage.startswith(b"HTTP/1.1 400 ")
    assert oversized.startswith(b"HTTP/1.1 431 ")
    assert [s.status for s in server.seen] == [400, 431]


async def test_a_listing_failing_midway_has_served_the_pages_before(
    nursery: trio.Nursery,
) -> None:
    server = await _github(nursery, made("octo", 100))
    server.tamper = failing_from(3, Answer(502, {"Content-Type": "text/html"}, b"<h1>502</h1>"))
    url = f"{server.base_url}/users/octo/repos?per_page=20"
    pages = [await get(url)]
    while pages[-1].status == 200 and "next" in pages[-1].links():
        pages.append(await get(pages[-1].links()["next"]))

    assert [p.status for p in pages] == [200, 200, 502]
    assert [s.param("page") for s in server.seen] == [None, "2", "3"]
    assert [s.status for s in server.seen] == [200, 200, 502]  # the record says what was sent


async def test_a_tamper_can_make_any_answer_hostile(nursery: trio.Nursery) -> None:
    server = await _github(nursery, [Made(1, "octo", "evil\x1b[2Jname")])

    def loop_forever(request: Seen, answer: Answer, index: int) -> Answer:
        answer.headers["Link"] = f'<{server.base_url}{request.path}?page=1>; rel="next"'
        return answer

    server.tamper = loop_forever
    got = await get(f"{server.base_url}/users/octo/repos")
    assert got.json()[0]["name"] == "evil\x1b[2Jname"  # escaped in JSON, raw once parsed
    assert got.links()["next"].endswith("/users/octo/repos?page=1")


async def test_org_type_forks_or_sources(nursery: trio.Nursery) -> None:
    repos = made("pallets", 20)
    server = await _github(nursery, repos, orgs=["pallets"])
    url = f"{server.base_url}/orgs/pallets/repos?per_page=100&type="
    forks = [i["name"] for i in (await get(url + "forks")).json()]
    sources = [i["name"] for i in (await get(url + "sources")).json()]
    assert forks == [r.name for r in repos if r.fork]
    assert sources == [r.name for r in repos if not r.fork]
    assert len(forks) == 4


async def test_hostile_names_are_served_as_given(nursery: trio.Nursery) -> None:
    """The servers hand out what a hostile forge would, intact: the listing's own tests
    decide what becomes of it."""
    repos = hostile("octo")
    server = await _github(nursery, repos)
    items = (await get(f"{server.base_url}/users/octo/repos?per_page=100")).json()
    assert [i["name"] for i in items] == [r.name for r in repos]
    assert items[3]["clone_url"] == f"{GIT}/octo/../../outside.git"
    assert len(items[-1]["description"]) == (1 << 20) + 5

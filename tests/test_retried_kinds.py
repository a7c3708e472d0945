"""Each kind issue 43 retries, produced by a real server on 127.0.0.1 and retried to
success; the permanent ones asked exactly once (the servers record what they saw)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from clonegate import (
    CloneSettings,
    RepositoryReport,
    RepositoryStatus,
    open_analyzer,
    with_incremental,
    with_result_store,
    with_retries,
)
from clonegate.store import open_store

from .support.flaky_fronts import flaky_git
from .support.repos import FixtureRepo
from .support.throttling_http import throttling_http
from .support.wire_servers import Record, sideband_server


class NoWait:
    """Retries at once: the servers here ask for no wait, and the tests wait for none."""

    def delay(self, attempt: int, retry_after: float | None, deadline: float | None) -> float:
        return 0.0


async def _clone(url: str, tmp_path: Path, *options: object, **clone: object) -> RepositoryReport:
    settings = CloneSettings(work_dir=tmp_path, **clone)  # type: ignore[arg-type]
    with trio.fail_after(120):  # a safety net: the assertions are below
        async with open_analyzer(*options, clone=settings) as uc:  # type: ignore[arg-type]
            return await uc.execute(url)


@pytest.mark.parametrize(
    ("behaviour", "kind", "words"),
    [
        ("rate_limited", "throttled", "rate limit exceeded"),  # an ERR line over git://
        ("hang_up", "connection_lost", "the server hung up"),  # a full git daemon's way
    ],
)
async def test_a_git_server_that_pushes_back_in_its_own_way_is_tried_again(
    behaviour: str,
    kind: str,
    words: str,
    repo_root: Path,
    repos: dict[str, FixtureRepo],
    tmp_path: Path,
) -> None:
    async with flaky_git(repo_root, behaviour) as server:
        report = await _clone(server.url("basic"), tmp_path, with_retries(2, NoWait()))
        refused = await _clone(server.url("trunk"), tmp_path, with_retries(0))
    assert report.status is RepositoryStatus.OK, report.error
    assert [a.kind for a in report.attempts] == [kind]
    assert words in report.attempts[0].message
    assert refused.error is not None
    assert (refused.error.kind, refused.attempts) == (kind, ())
    assert server.seen == {"basic": 2, "trunk": 1}
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("transport", ["git", "http"])
async def test_a_side_band_error_that_says_rate_limited_is_throttled(
    transport: str, tmp_path: Path
) -> None:
    record = Record()
    with sideband_server(transport, "rate_limited", record, 1 << 20) as url:
        # The whole branch: the stand-in server speaks no shallow negotiation.
        report = await _clone(url, tmp_path, with_retries(1, NoWait()), depth=None)
    assert report.error is not None
    assert report.error.kind == "throttled"
    assert "rate-limited due to too many requests" in report.error.message
    # The first push-back lowered the host's limit (-j 2 -> 1): the limit's, not
    # charged; at the floor the next is charged, and the one retry is spent.
    assert [a.kind for a in report.attempts] == ["throttled", "throttled"]
    assert list(tmp_path.iterdir()) == []


async def test_a_read_timeout_is_tried_again_only_when_asked(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    async with flaky_git(repo_root, "silent") as server:
        retried = await _clone(
            server.url("basic"), tmp_path, with_retries(2, NoWait(), timeouts=True), read_timeout=1
        )
        reported = await _clone(
            server.url("trunk"), tmp_path, with_retries(2, NoWait()), read_timeout=1
        )
    assert retried.status is RepositoryStatus.OK, retried.error
    assert [a.kind for a in retried.attempts] == ["read_timeout"]
    assert reported.status is RepositoryStatus.TIMEOUT  # as before issue 43
    assert reported.error is not None
    assert reported.error.kind == "read_timeout"
    assert "1 s read timeout" in reported.error.message
    assert server.seen == {"basic": 2, "trunk": 1}


async def test_resets_mid_pack_are_tried_again_and_every_repository_is_cloned(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    names = ["basic", "trunk", "basic"]
    async with throttling_http(repo_root, reset_every=2) as server:
        reports = [
            await _clone(server.url(name), tmp_path, with_retries(2, NoWait())) for name in names
        ]
    assert [r.status for r in reports] == [RepositoryStatus.OK] * 3, [r.error for r in reports]
    assert [a.kind for r in reports for a in r.attempts] == ["connection_lost"] * len(
        server.resets()
    )
    assert server.resets()  # the server did reset packs: every second one


@pytest.mark.parametrize("status", [404, 401])
async def test_a_permanent_answer_is_asked_once(
    status: int, repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    async with throttling_http(repo_root) as server:
        server.fail("basic", status)
        report = await _clone(server.url("basic"), tmp_path, with_retries(5, NoWait()))
    assert report.error is not None
    assert report.error.kind == {404: "not_found", 401: "authentication"}[status]
    assert [r.repository for r in server.requests] == ["basic"]


async def test_a_missing_repository_over_git_is_asked_once(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    async with flaky_git(repo_root, "hang_up", failures=0) as server:
        report = await _clone(server.url("no-such-repo"), tmp_path, with_retries(5, NoWait()))
    assert report.error is not None
    assert report.error.kind == "not_found"
    assert server.seen == {"no-such-repo": 1}


async def test_an_incremental_listing_the_server_throttled_is_tried_again(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    async with (
        flaky_git(repo_root, "rate_limited", failures=0) as server,
        open_store(tmp_path / "runs.db") as store,
    ):
        options = (with_result_store(store), with_incremental(), with_retries(2, NoWait()))
        first = await _clone(server.url("basic"), work, *options)
        server.fail_next("basic")
        again = await _clone(server.url("basic"), work, *options)
    assert first.status is RepositoryStatus.OK, first.error
    assert again.reused, again
    assert [a.kind for a in again.attempts] == ["throttled"]
    # The first run's listing and clone, then a throttled listing and the good one.
    assert server.seen == {"basic": 4}

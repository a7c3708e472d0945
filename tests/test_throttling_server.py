"""The throttling smart-HTTP server (tests/support/throttling_http.py, issue 43), driven by
`git clone` and by DulwichVCS: each way it pushes back, what it records, and what
the error kind and message each push-back gets from one clone attempt (what the
retries of issue 43 start from: tests/test_retries.py, tests/test_host_pushback.py)."""

from __future__ import annotations

import itertools
import os
import subprocess
import time
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import CloneError, CloneSettings, DulwichVCS, ErrorKind

from .support.repos import make_repo
from .support.throttling_http import RATE_LIMITED, ThrottlingHttp, throttling_http

NAMES = ("a", "b", "c", "d", "e", "f")
_GIT_ENV = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("throttled")
    for name in (*NAMES, "r404"):
        make_repo(root, name, commits=2, other_branches=())
    return root


async def git_clone(url: str, into: Path) -> subprocess.CompletedProcess[bytes]:
    return await trio.run_process(
        ["git", "clone", "-q", url, str(into)], capture_stderr=True, check=False, env=_GIT_ENV
    )


async def dulwich_failure(url: str, work_dir: Path) -> CloneError:
    with pytest.raises(CloneError) as caught:
        await DulwichVCS(CloneSettings(work_dir=work_dir, read_timeout=60)).clone(url)
    assert list(work_dir.iterdir()) == []
    return caught.value


def of(server: ThrottlingHttp, repository: str) -> list[tuple[str, str, int, str]]:
    return [
        (r.method, r.target.split(".git", 1)[1], r.status, r.outcome)
        for r in server.requests
        if r.repository == repository
    ]


async def test_a_clone_goes_through_and_is_recorded(
    base: Path, work_dir: Path, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        async with throttling_http(base, limit=1) as server:
            assert (await git_clone(server.url("a"), tmp_path / "a")).returncode == 0
            source = await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(server.url("b"))
            await source.aclose()
    served = [("GET", "/info/refs?service=git-upload-pack", 200, "served")]
    served += [("POST", "/git-upload-pack", 200, "served")]
    assert of(server, "a") == of(server, "b") == served
    assert (server.in_flight, server.max_in_flight) == (0, 1)
    # One at a time: each request in flight ended before the next was admitted.
    intervals = server.intervals()
    assert len(intervals) == 4
    assert all(end <= later for (_, end), (later, _) in itertools.pairwise(intervals))
    assert server.timeline[-1][1] == 0
    assert server.returns() == []


async def test_beyond_the_limit_a_429_with_retry_after_and_clonegate_fails(
    base: Path, work_dir: Path, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        async with throttling_http(base, limit=2) as server, trio.open_nursery() as nursery:
            server.hold()
            results: dict[str, int] = {}

            async def clone(name: str) -> None:
                results[name] = (await git_clone(server.url(name), tmp_path / name)).returncode

            nursery.start_soon(clone, "a")
            nursery.start_soon(clone, "b")
            await server.wait_in_flight(2)
            refused_git = await git_clone(server.url("c"), tmp_path / "c")
            error = await dulwich_failure(server.url("d"), work_dir)
            server.release()
    assert results == {"a": 0, "b": 0}
    assert refused_git.returncode != 0
    assert b"429" in refused_git.stderr
    for name in ("c", "d"):
        (refused,) = (r for r in server.requests if r.repository == name)
        assert (refused.status, refused.outcome, refused.retry_after) == (429, "limited", 1.0)
        assert refused.admitted is None
    assert server.max_in_flight == 2
    # One attempt (the VCS itself never retries): throttled, with the server's hint.
    assert (error.kind, error.retry_after) == (ErrorKind.THROTTLED, 1.0)
    assert error.reason == "HTTP 429: the server said too many requests (it asked for 1 s)"


async def test_a_503_with_retry_after_as_an_http_date(
    base: Path, work_dir: Path, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        async with throttling_http(
            base, limit=0, refuse_status=503, retry_after=30, retry_after_date=True
        ) as server:
            before = datetime.now(UTC)
            head = await _head_of(server, "/a.git/info/refs?service=git-upload-pack")
            after = datetime.now(UTC)
            error = await dulwich_failure(server.url("b"), work_dir)
            refused_git = await git_clone(server.url("c"), tmp_path / "c")
    assert refused_git.returncode != 0
    assert b"returned error: 503" in refused_git.stderr
    lines = head.split("\r\n")
    assert lines[0] == "HTTP/1.1 503 Service Unavailable"
    (retry_after,) = (line.split(": ", 1)[1] for line in lines if line.startswith("Retry-After:"))
    when = parsedate_to_datetime(retry_after)
    # Never sooner than promised (rounded up to a whole second), never far later.
    assert before + timedelta(seconds=30) <= when <= after + timedelta(seconds=31)
    assert [r.retry_after for r in server.requests] == [30.0] * 3
    assert error.kind is ErrorKind.UNAVAILABLE
    assert error.retry_after is not None
    assert 29.0 <= error.retry_after <= 31.0  # the HTTP date, read against this clock


async def _head_of(server: ThrottlingHttp, target: str) -> str:
    """The status line and headers the server answers a GET of ``target`` with."""
    stream = await trio.open_tcp_stream("127.0.0.1", server.port)
    async with stream:
        await stream.send_all(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        answer = b""
        while chunk := await stream.receive_some():
            answer += chunk
    head, body = answer.split(b"\r\n\r\n", 1)
    assert body == RATE_LIMITED
    return head.decode()


async def test_the_request_budget_refuses_until_the_window_ends(
    base: Path, tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    # The clock stands still unless the test moves it: the window ends when it jumps
    # (no fail_after on this clock: pytest-timeout turns a hang into a failure).
    async with throttling_http(base, budget=2, window=60) as server:
        first = await git_clone(server.url("a"), tmp_path / "a")  # two requests
        refused = await git_clone(server.url("b"), tmp_path / "b1")
        now = time.time()
        head = await _head_of(server, "/c.git/info/refs?service=git-upload-pack")
        mock_clock.jump(60)
        again = await git_clone(server.url("b"), tmp_path / "b2")
    assert (first.returncode, again.returncode) == (0, 0)
    assert refused.returncode != 0
    assert b"429" in refused.stderr
    assert of(server, "b") == [
        ("GET", "/info/refs?service=git-upload-pack", 429, "over_budget"),
        ("GET", "/info/refs?service=git-upload-pack", 200, "served"),
        ("POST", "/git-upload-pack", 200, "served"),
    ]
    headers = dict(line.split(": ", 1) for line in head.split("\r\n")[1:])
    assert head.startswith("HTTP/1.1 429 Too Many Requests\r\n")
    assert (headers["Retry-After"], headers["RateLimit-Reset"]) == ("60", "60")
    assert headers["RateLimit-Limit"] == "2"
    assert headers["RateLimit-Remaining"] == "0"
    assert now + 59 <= int(headers["X-RateLimit-Reset"]) <= time.time() + 61
    (back, _) = server.returns()  # b's refusal, then c's (which never came back)
    assert back.refused.retry_after == pytest.approx(60)
    assert back.waited == pytest.approx(60)  # the client came back when told to


async def test_a_429_on_the_pack_request_reads_as_throttled(base: Path, work_dir: Path) -> None:
    # The ref listing gets through, the pack request is over budget: the 429 on the POST
    # is read as throttled too, with the budget's window as the hint.
    with trio.fail_after(60):
        async with throttling_http(base, budget=1, window=3600) as server:
            error = await dulwich_failure(server.url("a"), work_dir)
    assert of(server, "a") == [
        ("GET", "/info/refs?service=git-upload-pack", 200, "served"),
        ("POST", "/git-upload-pack", 429, "over_budget"),
    ]
    assert error.kind is ErrorKind.THROTTLED
    assert error.reason.startswith("HTTP 429: the server said too many requests")


async def test_every_nth_pack_answer_is_reset_mid_pack(
    base: Path, work_dir: Path, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        async with throttling_http(base, reset_every=2) as server:
            codes = [(await git_clone(server.url(n), tmp_path / n)).returncode for n in "abc"]
            error = await dulwich_failure(server.url("d"), work_dir)
    assert [code == 0 for code in codes] == [True, False, True]
    assert [r.repository for r in server.resets()] == ["b", "d"]
    assert all(r.status == 200 and r.method == "POST" for r in server.resets())
    assert (error.kind, error.reason) == (
        ErrorKind.CONNECTION_LOST,
        "the connection was reset by the server",
    )


async def test_seeded_resets_choose_the_same_repositories_in_any_order(
    base: Path, tmp_path: Path
) -> None:
    chosen: list[list[str]] = []
    with trio.fail_after(120):
        for order in (NAMES, NAMES[::-1]):
            async with throttling_http(base, reset_fraction=0.5, seed=3) as server:
                for name in order:
                    await git_clone(server.url(name), tmp_path / f"{len(chosen)}-{name}")
            chosen.append(sorted(r.repository for r in server.resets()))
    assert chosen[0] == chosen[1]
    assert 0 < len(chosen[0]) < len(NAMES)  # a choice, not all or none


async def test_permanent_errors_are_answered_once_per_request(
    base: Path, work_dir: Path, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        async with throttling_http(base) as server:
            server.fail("a", 404)
            server.fail("b", 401)
            missing = await dulwich_failure(server.url("a"), work_dir)
            unauthorized = await dulwich_failure(server.url("b"), work_dir)
            git_missing = await git_clone(server.url("a"), tmp_path / "a")
            git_unauthorized = await git_clone(server.url("b"), tmp_path / "b")
    assert (missing.kind, unauthorized.kind) == (ErrorKind.NOT_FOUND, ErrorKind.AUTHENTICATION)
    assert git_missing.returncode != 0
    assert b"not found" in git_missing.stderr
    assert git_unauthorized.returncode != 0
    refs = "/info/refs?service=git-upload-pack"
    # DulwichVCS asks once, then git once: no request is ever repeated.
    assert of(server, "a") == [("GET", refs, 404, "permanent")] * 2
    assert of(server, "b") == [("GET", refs, 401, "permanent")] * 2


async def test_the_guarded_pool_raises_the_status_and_retry_after(base: Path) -> None:
    # dulwich drops a response's status and headers; the pool manager the worker gives
    # it (worker_http.GuardedPool) sees every response and raises the push-back.
    import urllib3

    from clonegate._adapters.git.worker_errors import Failure
    from clonegate._adapters.git.worker_http import GuardedPool

    with trio.fail_after(60):
        async with throttling_http(base, limit=0) as server:
            url = server.url("a")
            pool = GuardedPool(urllib3.PoolManager(), url, None, None)

            def ask() -> None:
                pool.request("GET", f"{url}/info/refs?service=git-upload-pack")

            with pytest.raises(Failure) as raised:
                await trio.to_thread.run_sync(ask)
    assert (raised.value.kind, raised.value.retry_after) == (ErrorKind.THROTTLED, 1.0)
    assert [r.status for r in server.requests] == [429]


async def test_a_request_is_out_of_flight_before_its_client_has_the_whole_answer(
    base: Path,
) -> None:
    # A client that asks again the moment it has its answer must never meet its own
    # earlier request still counted in flight (a spurious 429 under a limit of 1).
    target = "/a.git/info/refs?service=git-upload-pack"
    with trio.fail_after(60):
        async with throttling_http(base, limit=1) as server:
            for n in range(1, 11):
                stream = await trio.open_tcp_stream("127.0.0.1", server.port)
                async with stream:
                    await stream.send_all(f"GET {target} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                    while await stream.receive_some():
                        pass
                    assert (server.in_flight, len(server.requests)) == (0, n)
    assert {r.outcome for r in server.requests} == {"served"}


async def test_service_time_holds_each_request_in_flight_on_the_trio_clock(
    base: Path, tmp_path: Path, mock_clock: trio.testing.MockClock
) -> None:
    async with throttling_http(base, service_time=5) as server, trio.open_nursery() as nursery:
        done = trio.Event()

        async def clone() -> None:
            assert (await git_clone(server.url("a"), tmp_path / "a")).returncode == 0
            done.set()

        nursery.start_soon(clone)
        for n in (1, 2):  # the ref listing, then the pack
            await server.wait_in_flight(1)
            assert len(server.requests) == n - 1  # nothing answered before the clock moves
            mock_clock.jump(5)
            await server.wait_requests(n)
        await done.wait()
    assert [end - start for start, end in server.intervals()] == [pytest.approx(5)] * 2


async def test_what_clients_saw_agrees_with_the_records_under_load(
    base: Path, tmp_path: Path
) -> None:
    # Six clones at once against a limit of 2: however the race goes, no more than two
    # requests were ever in flight, and a clone failed exactly when it met a 429.
    codes: dict[str, int] = {}
    with trio.fail_after(120):
        async with throttling_http(base, limit=2) as server, trio.open_nursery() as nursery:

            async def clone(name: str) -> None:
                codes[name] = (await git_clone(server.url(name), tmp_path / name)).returncode

            for name in NAMES:
                nursery.start_soon(clone, name)
    assert server.max_in_flight <= 2
    assert max(level for _, level in server.timeline) == server.max_in_flight
    refused = {r.repository for r in server.requests if r.status == 429}
    assert {name for name, code in codes.items() if code != 0} == refused
    assert all(r.retry_after == 1.0 for r in server.requests if r.status == 429)


async def test_a_429_for_a_repository_named_with_404_is_not_not_found(
    base: Path, work_dir: Path
) -> None:
    with trio.fail_after(60):
        async with throttling_http(base, limit=0) as server:
            error = await dulwich_failure(server.url("r404"), work_dir)
    assert [r.status for r in server.requests] == [429]
    assert error.kind is not ErrorKind.NOT_FOUND

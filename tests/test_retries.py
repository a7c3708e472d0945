"""Retries of a clone the server pushed back (issue 43): fakes for the policy, and the
real DulwichVCS against a loopback HTTP server that answers 503 and 429 and records."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from clonegate import (
    AnalyzeUseCase,
    BatchSummary,
    CloneSettings,
    Event,
    EventKind,
    RepositoryReport,
    RepositoryStatus,
    open_analyzer,
    to_json,
    with_event_hook,
    with_keep_clones,
    with_max_concurrent_clones,
    with_repository_timeout,
    with_retries,
)
from clonegate._adapters.git.worker_http import server_hint
from clonegate._domain.retries import FailedAttempt
from clonegate.errors import (
    AuthenticationError,
    CloneCancelledError,
    InvalidRepositoryError,
    OutOfMemoryError,
    RepositoryNotFoundError,
    ThrottledError,
    TooLargeError,
    UnavailableError,
)
from clonegate.store import open_store
from clonegate_cli._output import summary_line
from clonegate_cli.app import app

from .support.fakes import FakeAnalyzer, FakeVCS, url
from .support.inventories import KEY, report
from .support.processes import descendant_pids
from .support.pushback import PushBack
from .support.repos import FixtureRepo
from .support.servers import http_git_server


class FixedDelay:
    """Waits ``seconds`` (or what the server asked, when longer); records each call."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls: list[tuple[int, float | None, float | None]] = []

    def delay(self, attempt: int, retry_after: float | None, deadline: float | None) -> float:
        self.calls.append((attempt, retry_after, deadline))
        return max(self.seconds, retry_after or 0.0)


def _throttled(i: int, retry_after: float | None = None) -> ThrottledError:
    error = ThrottledError(url(i), "HTTP 429: the server said too many requests")
    error.retry_after = retry_after
    return error


async def test_a_pushed_back_clone_is_tried_again_without_its_slot(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, delay=1.0)
    vcs.flaky[url(0)] = [_throttled(0), UnavailableError(url(0), "HTTP 503: unavailable")]
    active_at_retry: list[int] = []
    delay = FixedDelay(10.0)

    def hook(event: Event) -> None:
        if event.kind is EventKind.RETRY:
            active_at_retry.append(len(uc.clone_gate_statistics().active))

    uc = AnalyzeUseCase(
        with_max_concurrent_clones(1),
        with_retries(2, delay),
        with_event_hook(hook),
        with_keep_clones(),  # removing runs in a thread, which the autojump clock would skip
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    async with uc.analyze_many([url(0), url(1)]) as batch:
        reports = {r.index: r async for r in batch}
    assert (batch.summary.retried, batch.summary.retry_wait) == (1, 20.0)
    assert "1 retried (20.0 s waiting)" in summary_line(batch.summary)
    first = reports[0]
    assert first.status is RepositoryStatus.OK
    assert [(a.kind, a.waited) for a in first.attempts] == [
        ("throttled", 10.0),
        ("unavailable", 10.0),
    ]
    assert "429" in first.attempts[0].message
    assert vcs.calls == [url(0), url(1), url(0), url(0)]
    # The slot was given back before each wait, and the other repository cloned in it.
    assert active_at_retry == [0, 0]
    assert vcs.started[url(1)] < 10.0
    assert [call[:2] for call in delay.calls] == [(1, None), (2, None)]
    assert reports[1].attempts == ()
    stats = uc.clone_gate_statistics()
    assert stats.acquired == stats.released == 4


async def test_with_no_retries_a_pushed_back_clone_fails_as_before(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    vcs.flaky[url(0)] = [_throttled(0, retry_after=1.0)]
    uc = AnalyzeUseCase(with_retries(0), vcs=vcs, analyzer=FakeAnalyzer())
    report = await uc.execute(url(0))
    assert report.status is RepositoryStatus.FAILED
    assert report.error is not None
    assert report.error.kind == "throttled"
    assert vcs.calls == [url(0)]
    assert report.attempts == ()
    assert "attempts" not in to_json(report)  # a one-attempt report reads as before
    assert "retried" not in to_json(BatchSummary(repositories=1))


@pytest.mark.parametrize(
    "error",
    [
        RepositoryNotFoundError(url(0), "repository not found"),
        AuthenticationError(url(0), "authentication required"),
        InvalidRepositoryError(url(0), "corrupt"),
        TooLargeError(url(0), "too large"),
        OutOfMemoryError(url(0), "killed"),
        CloneCancelledError(url(0), "killed from outside"),
    ],
    ids=lambda e: type(e).__name__,
)
async def test_a_permanent_failure_is_never_tried_again(
    error: Exception, tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    vcs.flaky[url(0)] = [error]
    uc = AnalyzeUseCase(with_retries(5, FixedDelay(1.0)), vcs=vcs, analyzer=FakeAnalyzer())
    report = await uc.execute(url(0))
    assert report.status is not RepositoryStatus.OK
    assert vcs.calls == [url(0)]
    assert report.attempts == ()


async def test_retry_after_is_honoured_and_the_deadline_bounds_the_wait(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    vcs.flaky[url(0)] = [_throttled(0, retry_after=7.0)]
    vcs.flaky[url(1)] = [_throttled(1, retry_after=600.0)]
    delay = FixedDelay(0.5)
    uc = AnalyzeUseCase(
        with_retries(2, delay),
        with_repository_timeout(60),
        with_keep_clones(),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    started = trio.current_time()
    waited = await uc.execute(url(0))
    assert waited.status is RepositoryStatus.OK
    assert waited.attempts[0].waited == 7.0
    assert trio.current_time() >= started + 7.0  # mock time: it waited what was asked
    assert delay.calls[0][1] == 7.0
    # A wait past the repository's deadline is not begun: the server's answer is the report.
    refused = await uc.execute(url(1))
    assert refused.status is RepositoryStatus.FAILED
    assert refused.error is not None
    assert refused.error.kind == "throttled"
    assert vcs.calls.count(url(1)) == 1
    ends = delay.calls[1][2]  # the repository's deadline, trio time
    assert ends is not None
    assert started + 7.0 < ends <= trio.current_time() + 60.0


async def test_cancelled_while_waiting_to_retry_leaves_nothing_behind(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    vcs.flaky[url(0)] = [_throttled(0)]
    waiting = trio.Event()

    def hook(event: Event) -> None:
        if event.kind is EventKind.RETRY:
            waiting.set()

    uc = AnalyzeUseCase(
        with_retries(2, FixedDelay(100.0)),
        with_event_hook(hook),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(uc.execute, url(0))
            with trio.fail_after(50):  # mock time: a clone that never waits fails here
                await waiting.wait()  # set just before the wait's sleep, the next checkpoint
            scope.cancel()
    assert scope.cancelled_caught
    assert vcs.calls == [url(0)]
    stats = uc.clone_gate_statistics()
    assert (stats.queued, stats.active) == ((), ())
    assert stats.acquired == stats.released == 1
    assert list(tmp_path.iterdir()) == []


def test_the_server_hint_is_the_longest_readable_header() -> None:
    now = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    wall = now.timestamp()
    date = format_datetime(now + timedelta(seconds=90), usegmt=True)
    assert server_hint({"Retry-After": "120"}, wall) == 120.0
    assert server_hint({"Retry-After": date}, wall) == 90.0
    assert server_hint({"Retry-After": "5", "RateLimit-Reset": "40"}, wall) == 40.0
    assert server_hint({"X-RateLimit-Reset": str(int(wall) + 300)}, wall) == 300.0
    for junk in ("", "soon", "-5", "1e9", "nan", "9" * 70):
        assert server_hint({"Retry-After": junk, "RateLimit-Reset": junk}, wall) is None
    assert server_hint({}, wall) is None


async def test_a_real_server_answering_503_then_the_pack_is_cloned_on_the_third_attempt(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    pushback = PushBack(failures=2, status=503, retry_after="0")
    clone = CloneSettings(work_dir=tmp_path)
    with http_git_server(repo_root, wrap=pushback) as server:
        async with open_analyzer(with_retries(2, FixedDelay(0.0)), clone=clone) as uc:
            report = await uc.execute(server.url("basic"))
    assert report.status is RepositoryStatus.OK, report.error
    assert report.ref is not None
    assert report.ref.commit == repos["basic"].head
    assert [a.kind for a in report.attempts] == ["unavailable", "unavailable"]
    assert "HTTP 503" in report.attempts[0].message
    assert pushback.answers == [("/basic.git", 503), ("/basic.git", 503), ("/basic.git", 200)]
    document = json.loads(json.dumps(to_json(report)))
    assert [a["kind"] for a in document["attempts"]] == ["unavailable", "unavailable"]


async def test_a_real_server_429_carries_retry_after_and_no_retries_report_it(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    pushback = PushBack(failures=5, status=429, retry_after="3")
    delay = FixedDelay(0.0)
    clone = CloneSettings(work_dir=tmp_path)
    with http_git_server(repo_root, wrap=pushback) as server:
        async with open_analyzer(with_retries(0, delay), clone=clone) as uc:
            report = await uc.execute(server.url("basic"))
    assert report.status is RepositoryStatus.FAILED
    assert report.error is not None
    assert report.error.kind == "throttled"
    assert "HTTP 429" in report.error.message
    assert "it asked for 3 s" in report.error.message
    assert pushback.answers == [("/basic.git", 429)]
    assert list(tmp_path.iterdir()) == []


async def test_a_real_server_is_asked_once_for_a_repository_it_does_not_have(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    recorder = PushBack(failures=0)
    clone = CloneSettings(work_dir=tmp_path)
    with http_git_server(repo_root, wrap=recorder) as server:
        async with open_analyzer(with_retries(5, FixedDelay(0.0)), clone=clone) as uc:
            missing = await uc.execute(server.url("no-such-repo"))
            private = await uc.execute(server.url("basic", private=True))
    assert missing.error is not None
    assert missing.error.kind == "not_found"
    assert private.error is not None
    assert private.error.kind == "authentication"
    assert recorder.seen == {"/no-such-repo.git": 1, "/private/basic.git": 1}


def test_attempts_are_stored_and_exported(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    tried = dataclasses.replace(
        report(),
        attempts=(
            FailedAttempt("throttled", "repo: HTTP 429: the server said too many requests", 1.5),
            FailedAttempt("unavailable", "repo: HTTP 503: the server said unavailable", 2.0),
        ),
    )

    async def save() -> RepositoryReport | None:
        async with open_store(db) as store:
            run = await store.begin_run({})
            await store.save(run, KEY, tried)
            await store.finish_run(run)
            return await store.load(run, KEY)

    assert trio.run(save) == tried
    (count,) = sqlite3.connect(db).execute("SELECT retried_attempts FROM reports").fetchone()
    assert count == 2
    exported = runner.invoke(app, ["export", "latest", "--db", str(db)])
    assert exported.exit_code == 0, exported.output
    (document,) = [json.loads(line) for line in exported.output.splitlines()]
    assert document["retries"] == 2
    assert document["retry_errors"].startswith("throttled: repo: HTTP 429")


@pytest.mark.parametrize("retries", [0, 1])
def test_the_command_line_retries_and_says_so(
    retries: int,
    runner: CliRunner,
    repo_root: Path,
    repos: dict[str, FixtureRepo],
    tmpdir_env: Path,
) -> None:
    pushback = PushBack(failures=1, status=503, retry_after="0")
    with http_git_server(repo_root, wrap=pushback) as server:
        args = ["analyze", "-v", "--format", "json", "--retries", str(retries)]
        result = runner.invoke(app, [*args, server.url("basic")])
    (report,) = json.loads(result.stdout)["repositories"]
    if retries:
        assert result.exit_code == 0, result.output
        assert report["status"] == "ok"
        assert [a["kind"] for a in report["attempts"]] == ["unavailable"]
        assert "retry unavailable" in result.stderr
        assert json.loads(result.stdout)["summary"]["retried"] == 1
    else:
        assert report["status"] == "failed"
        assert report["error"]["kind"] == "unavailable"
        assert "attempts" not in report
        assert "retried" not in json.loads(result.stdout)["summary"]
    assert len(pushback.answers) == 1 + retries
    assert list(tmpdir_env.iterdir()) == []


async def test_cancelled_while_a_real_clone_waits_to_retry_leaves_no_process_or_file(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    pushback = PushBack(failures=1, status=429, retry_after="100")
    waiting = trio.Event()

    def hook(event: Event) -> None:
        if event.kind is EventKind.RETRY:
            waiting.set()

    idle_before = descendant_pids()
    clone = CloneSettings(work_dir=tmp_path)
    with http_git_server(repo_root, wrap=pushback) as server, trio.CancelScope() as scope:
        async with (
            open_analyzer(with_event_hook(hook), clone=clone) as uc,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(uc.execute, server.url("basic"))
            with trio.fail_after(60):  # a safety net: the 429 comes at once
                await waiting.wait()
            scope.cancel()
    assert scope.cancelled_caught
    assert pushback.answers == [("/basic.git", 429)]
    assert list(tmp_path.iterdir()) == []
    await trio.lowlevel.checkpoint()
    assert descendant_pids() <= idle_before

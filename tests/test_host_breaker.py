"""A breaker per host (issue 43, ADR 0019): real clones against a port that refuses
connections and then recovers, or never does; the deadline and cancellation while a
repository waits in its host's line (MockClock, fakes), and Ctrl-C of the command line
while it waits."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import trio
import trio.testing

from clonegate import (
    AnalyzeUseCase,
    CloneError,
    CloneSettings,
    DulwichVCS,
    Event,
    EventKind,
    RepositoryReport,
    RepositoryStatus,
    with_breaker,
    with_event_hook,
    with_keep_clones,
    with_max_concurrent_clones,
    with_repository_timeout,
    with_retries,
)
from clonegate.errors import UnreachableError

from .support.fakes import FakeAnalyzer, FakeVCS, url
from .support.flaky_fronts import RecoveringHttp, recovering_http
from .support.processes import processes_with
from .support.repos import FixtureRepo

NAMES = tuple(f"r{i}" for i in range(6))


class CountingVCS:
    """A real VCS whose clone attempts and ref listings (the breaker's probes) are
    counted: each one is a connection attempt (a refused port records nothing on the
    server's side). ``on_failure`` is called after each that failed."""

    def __init__(self, inner: DulwichVCS) -> None:
        self.inner = inner
        self.clones = self.listings = self.cloning = 0
        self.failed_clones = self.failed_listings = 0
        self.on_failure: Callable[[CountingVCS], None] = lambda vcs: None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def clone(self, *args: Any, **kwargs: Any) -> Any:
        self.clones += 1
        self.cloning += 1
        failed = False
        try:
            return await self.inner.clone(*args, **kwargs)
        except CloneError:
            self.failed_clones += 1
            failed = True
            raise
        finally:
            self.cloning -= 1  # before the call: this one is no longer out
            if failed:
                self.on_failure(self)

    async def remote_head(self, *args: Any, **kwargs: Any) -> Any:
        self.listings += 1  # a probe: the ref listing alone
        try:
            return await self.inner.remote_head(*args, **kwargs)
        except CloneError:
            self.failed_listings += 1
            self.on_failure(self)
            raise


def _served(repo_root: Path, tmp_path: Path) -> Path:
    """Six repositories (one, under six names): the breaker is per host, not per name."""
    served = tmp_path / "served"
    served.mkdir()
    for name in NAMES:
        (served / f"{name}.git").symlink_to(repo_root / "basic.git")
    return served


async def _run(
    server: RecoveringHttp,
    tmp_path: Path,
    *options: Any,
    cool_down: float = 0.05,
    on_failure: Callable[[CountingVCS], None] | None = None,
) -> tuple[list[RepositoryReport], CountingVCS]:
    work = tmp_path / "work"
    work.mkdir()
    vcs = CountingVCS(DulwichVCS(CloneSettings(work_dir=work, connect_timeout=5)))
    if on_failure is not None:
        vcs.on_failure = on_failure
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(2),
        with_breaker(1, cool_down),
        *options,
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    with trio.fail_after(120):  # a safety net: the assertions are below
        async with uc.analyze_many([server.url(name) for name in NAMES]) as batch:
            reports = sorted([r async for r in batch], key=lambda r: r.index)
    return reports, vcs


async def test_a_host_that_refuses_then_recovers_loses_no_repository(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    waits: list[str] = []

    def hook(event: Event) -> None:
        if event.kind is EventKind.RETRY and event.status == "unreachable":
            waits.append(event.detail.rsplit(";", 1)[-1])

    def recover(vcs: CountingVCS) -> None:
        # A probe failed, and no attempt from before the breaker opened is still out
        # (one that connected would close it without a probe): up from now on.
        if vcs.failed_listings and not vcs.cloning:
            server.recover()

    async with recovering_http(_served(repo_root, tmp_path)) as server:
        reports, vcs = await _run(
            server, tmp_path, with_event_hook(hook), cool_down=1.0, on_failure=recover
        )
    assert [r.status for r in reports] == [RepositoryStatus.OK] * len(NAMES), reports
    # The first attempts (those under way when it opened), the failed probes, one that
    # connected and closed it (ref listings), then each clone once: not one per retry.
    probes = vcs.failed_listings
    assert vcs.listings == probes + 1
    assert vcs.clones == vcs.failed_clones + len(NAMES)
    assert vcs.failed_clones <= len(NAMES)
    tried = Counter(a.kind for r in reports for a in r.attempts)
    assert tried == Counter({"unreachable": vcs.failed_clones + probes})
    # Each waited in the host's line, not a backoff of its own.
    assert waits == [" next attempt when its host is back"] * (vcs.failed_clones + probes)
    # The server, once up, saw the probe's ref listing alone (half-open), then, once it
    # had answered (closed), each repository's clone: a ref listing and a pack.
    assert Counter(r.method for r in server.requests) == Counter(
        {"GET": 1 + len(NAMES), "POST": len(NAMES)}
    )
    probe, *others = sorted(server.requests, key=lambda r: r.arrived)
    assert probe.method == "GET"
    assert all(r.arrived >= probe.ended for r in others)
    # The waits in the breaker's line are in the attempts (the summary's retry_wait).
    assert all(sum(a.waited for a in r.attempts) > 0 for r in reports)


async def test_a_host_that_never_recovers_costs_its_probes_not_a_timeout_each(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    async with recovering_http(_served(repo_root, tmp_path)) as server:
        # One retry: a failed probe charged to its repository would end it (unreachable).
        reports, vcs = await _run(server, tmp_path, with_retries(1))
    assert {r.status for r in reports} == {RepositoryStatus.FAILED}
    for report in reports:
        assert report.error is not None
        assert report.error.kind == "host_unavailable"
        assert "failed connections" in report.error.message
        assert report.attempts, report  # what each tried, with its kind
        assert {a.kind for a in report.attempts} == {"unreachable"}
    # The first attempts (at most one each), then the breaker's four probes (ref
    # listings): bounded by the breaker, not six repositories times two attempts.
    assert vcs.clones <= len(NAMES)
    assert vcs.listings == 4
    assert sum(len(r.attempts) for r in reports) == vcs.clones + vcs.listings
    assert server.requests == []


async def test_a_repository_whose_deadline_comes_in_its_hosts_line_is_host_unavailable(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    for i in range(3):
        vcs.failures[url(i)] = UnreachableError(url(i), "connection refused")
    uc = AnalyzeUseCase(
        with_breaker(1, 20.0),  # a probe at 20 s, the next at 60 s
        with_repository_timeout(30),
        with_keep_clones(),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    async with uc.analyze_many([url(i) for i in range(3)]) as batch:
        reports = [r async for r in batch]
    assert len(vcs.calls) == 3 + 1  # the first attempts, one probe at 20 s
    assert trio.current_time() == 30.0  # mock time: each ended at its deadline
    for report in reports:
        assert report.status is RepositoryStatus.FAILED
        assert report.error is not None
        assert report.error.kind == "host_unavailable"
        assert "still down at the 30 s repository timeout" in report.error.message
    # Each waited in the line until its deadline (mock time: exact); the probe's
    # repository from its first failure to the probe, then to its deadline.
    waits = sorted([a.waited for a in r.attempts] for r in reports)
    assert waits == [[20.0, 10.0], [30.0], [30.0]]


async def test_cancelled_while_waiting_in_a_hosts_line_leaves_nothing_behind(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    vcs.flaky[url(0)] = [UnreachableError(url(0), "connection refused")]
    vcs.flaky[url(1)] = [UnreachableError(url(1), "connection refused")]
    waiting = trio.Event()
    retried = 0

    def hook(event: Event) -> None:
        nonlocal retried
        if event.kind is EventKind.RETRY:
            retried += 1
            if retried == 2:
                waiting.set()

    uc = AnalyzeUseCase(
        with_breaker(1, 1000.0), with_event_hook(hook), vcs=vcs, analyzer=FakeAnalyzer()
    )
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(uc.execute, url(0))
            nursery.start_soon(uc.execute, url(1))
            with trio.fail_after(50):  # mock time: the breaker's line waits 1000 s
                await waiting.wait()
            await trio.testing.wait_all_tasks_blocked()
            scope.cancel()
    assert scope.cancelled_caught
    assert trio.current_time() < 1000.0
    stats = uc.clone_gate_statistics()
    assert (stats.queued, stats.active) == ((), ())
    assert stats.acquired == stats.released == 2
    assert list(tmp_path.iterdir()) == []
    # Nobody is left in the host's line.
    breakers = uc._breakers
    assert breakers is not None
    host = breakers.statistics("https://git.example:443")
    assert host is not None
    assert host.tasks_waiting == 0


async def test_ctrl_c_while_repositories_wait_in_a_hosts_line_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    run_id = uuid.uuid4().hex
    refusing = socket.socket()  # bound, not listening: the kernel refuses
    refusing.bind(("127.0.0.1", 0))
    port = refusing.getsockname()[1]
    urls = [f"http://127.0.0.1:{port}/r{i}.git" for i in range(2)]
    command = ["analyze", "-v", "--breaker", "1", "--breaker-cool-down", "1000", *urls]
    seen = bytearray()
    with refusing:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", *command],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "CLONEGATE_TEST_RUN": run_id, "TMPDIR": str(tmp_path)},
        )
        assert process.stderr is not None
        try:
            with trio.fail_after(60):  # a safety net only: the lines below drive it
                while seen.count(b"when its host is back") < len(urls):
                    chunk = await process.stderr.receive_some()
                    assert chunk, bytes(seen)
                    seen += chunk
            process.send_signal(signal.SIGINT)
            with trio.move_on_after(60):  # turns a hang into a failure below
                await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    assert process.returncode == 130
    assert processes_with(f"CLONEGATE_TEST_RUN={run_id}".encode()) == set()
    assert list(tmp_path.iterdir()) == []


async def test_a_given_up_host_is_tried_again_a_minute_later_and_answered_hosts_are_forgotten(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path)
    down = [f"https://down.example/r{i}.git" for i in range(3)]
    for line in down:
        vcs.failures[line] = UnreachableError(line, "connection refused")
    uc = AnalyzeUseCase(with_breaker(1, 1.0), with_keep_clones(), vcs=vcs, analyzer=FakeAnalyzer())
    breakers = uc._breakers
    assert breakers is not None
    answered = [url(i) for i in range(50)]  # 50 repositories of a host that answers
    async with uc.analyze_many(answered + down[:2]) as batch:
        first = [r async for r in batch]
    assert [r.status for r in first[:50]] == [RepositoryStatus.OK] * 50
    assert {r.error.kind for r in first[50:] if r.error} == {"host_unavailable"}
    assert len(breakers) == 1  # the host that answered left nothing behind
    calls = len(vcs.calls)
    soon = await uc.execute(down[2])  # given up a moment ago: not tried
    assert soon.error is not None
    assert soon.error.kind == "host_unavailable"
    assert len(vcs.calls) == calls
    await trio.sleep(60.0)
    later = await uc.execute(down[2])  # a minute on: tried afresh
    assert later.error is not None
    assert len(vcs.calls) > calls

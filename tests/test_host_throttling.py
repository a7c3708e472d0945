"""The adaptive host limit and the host rate against the real throttling server
(tests/support/throttling_http.py, issue 43): 200 tiny repositories, DulwichVCS in its
worker processes, every assertion on what the server recorded (ADR 0010)."""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from clonegate import (
    CloneSettings,
    Option,
    RepositoryReport,
    RepositoryStatus,
    open_analyzer,
    with_adaptive,
    with_host_limit,
    with_host_rate,
    with_max_concurrent_clones,
    with_retries,
)
from clonegate._domain.adaptive import AdaptiveLimitStatistics
from clonegate_cli.app import app

from .support.throttle_figures import attempts_of, many_repositories, share_above
from .support.throttling_http import ThrottlingHttp, throttling_http

COUNT, K = 200, 3
_BOUND = 240.0  # seconds: a safety net for a loaded machine, never the assertion
# Each admitted request is held this long (trio time): longer than a client's own
# overhead between requests, so that the server sees the clients' concurrency even on
# a loaded machine.
SERVICE = 0.1


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("many")
    many_repositories(root, COUNT)
    return root


async def _run(
    base: Path, work_dir: Path, options: list[Option], count: int = COUNT, **throttling: object
) -> tuple[list[RepositoryReport], ThrottlingHttp, dict[str, AdaptiveLimitStatistics]]:
    clone = CloneSettings(work_dir=work_dir, read_timeout=60)
    with trio.fail_after(_BOUND):
        async with (
            throttling_http(base, **throttling) as server,
            open_analyzer(*options, clone=clone) as uc,
            uc.analyze_many(server.url(f"r{i:03d}") for i in range(count)) as batch,
        ):
            reports = [report async for report in batch]
    return reports, server, uc.host_statistics()


@pytest.mark.slow  # 200 clones
async def test_eight_clones_against_a_host_that_takes_three_adapt_and_all_succeed(
    base: Path, work_dir: Path
) -> None:
    # Retries enough that none runs out: what is checked is the adaptation.
    options = [with_max_concurrent_clones(8), with_retries(5)]
    reports, server, hosts = await _run(
        base, work_dir, options, limit=K, retry_after=1.0, service_time=SERVICE
    )
    assert [(r.url, r.error) for r in reports if r.status is not RepositoryStatus.OK] == []
    assert len(reports) == COUNT
    attempts = attempts_of(server)
    assert attempts.first_refusal is not None
    # After the first 429 the clients keep to the host's K almost all the time (the
    # server's own records: from each attempt's ref listing to its last answer)...
    assert share_above(attempts.spans, K, attempts.first_refusal) < 0.05
    # ... and meet few 429s: the first wave's, then about one per probe of K + 1 (a
    # probe every 2K successful clones at most). A fixed -j 8 meets 3 times as many
    # (the next test).
    throttled = [r for r in server.requests if r.status == 429]
    assert len(throttled) <= COUNT // 4
    # The host's limit came down from -j to K, then stayed near it (a probe of K + 1
    # now and then), never below 1.
    (limit,) = hosts.values()
    sizes = [change.size for change in limit.timeline]
    assert sizes[0] == 8
    assert min(sizes) >= 1
    assert K in sizes
    assert max(sizes[sizes.index(K) :]) <= K + 2
    assert limit.held == 0
    # Each throttled client came back no sooner than its Retry-After.
    returns = server.returns()
    assert len(returns) == len(throttled)
    for back in returns:
        assert back.waited is not None
        assert back.refused.retry_after is not None
        assert back.waited >= back.refused.retry_after


@pytest.mark.slow  # 200 clones
async def test_without_adaptation_the_same_run_meets_many_more_429s(
    base: Path, work_dir: Path
) -> None:
    # The contrast that makes the bound above mean something: a fixed -j 8, each
    # repository asked once (without retries, so that the run stays short), meets more
    # 429s in its one wave than the adaptive run in all its attempts; each is reported.
    options = [with_max_concurrent_clones(8), with_retries(0), with_adaptive(False)]
    reports, server, hosts = await _run(
        base, work_dir, options, limit=K, retry_after=1.0, service_time=SERVICE
    )
    assert hosts == {}
    throttled = {r.repository for r in server.requests if r.status == 429}
    assert len(throttled) > COUNT // 4
    failed = {r.url.rsplit("/", 1)[-1].removesuffix(".git") for r in reports if r.error}
    assert failed == throttled
    assert {r.error.kind for r in reports if r.error} == {"throttled"}


async def test_a_host_rate_spaces_the_clones_and_the_first_is_immediate(
    base: Path, work_dir: Path, mock_clock: trio.testing.MockClock
) -> None:
    # The clock stands still unless the test moves it: the first clone must go through
    # with no time passing; each next one only once the clock jumps an interval.
    options = [with_max_concurrent_clones(3), with_host_rate("1/min")]
    clone = CloneSettings(work_dir=work_dir, read_timeout=60)
    async with (
        throttling_http(base) as server,
        open_analyzer(*options, clone=clone) as uc,
        trio.open_nursery() as nursery,
    ):
        reports: list[RepositoryReport] = []

        async def run() -> None:
            async with uc.analyze_many(server.url(f"r{i:03d}") for i in range(3)) as batch:
                reports.extend([r async for r in batch])

        nursery.start_soon(run)
        for n in (1, 2, 3):
            await server.wait_requests(2 * n)  # the clone's ref listing and pack
            if n < 3:
                assert len(server.requests) == 2 * n  # the next waits for its token
                mock_clock.jump(60)
    assert [r.status for r in reports] == [RepositoryStatus.OK] * 3
    listings = [r.arrived for r in server.requests if "/info/refs" in r.target]
    assert [b - a for a, b in itertools.pairwise(listings)] == [pytest.approx(60)] * 2
    assert uc.clone_gate_statistics().acquired == 3


async def test_cancelled_while_waiting_for_a_token_leaves_nothing_held(
    base: Path, work_dir: Path, mock_clock: trio.testing.MockClock
) -> None:
    options = [with_max_concurrent_clones(3), with_host_limit(2), with_host_rate("1/min")]
    clone = CloneSettings(work_dir=work_dir, read_timeout=60)
    async with throttling_http(base) as server, open_analyzer(*options, clone=clone) as uc:
        with trio.CancelScope() as scope:
            async with (
                trio.open_nursery() as nursery,
                uc.analyze_many(server.url(f"r{i:03d}") for i in range(6)) as batch,
            ):
                nursery.start_soon(server.wait_requests, 2)
                async for report in batch:  # the first: the others wait for a token
                    assert report.status is RepositoryStatus.OK
                    scope.cancel()
        assert scope.cancelled_caught
        stats = uc.clone_gate_statistics()
        assert (stats.queued, stats.active, stats.held) == ((), (), 0)
        assert stats.acquired == stats.released
        (limit,) = uc.host_statistics().values()
        assert limit.held == 0
    assert len(server.requests) == 2
    assert list(work_dir.iterdir()) == []


async def test_the_command_line_without_retries_reports_the_429s_and_the_lowered_limit(
    base: Path, tmp_path: Path
) -> None:
    count = 40
    with trio.fail_after(_BOUND):
        async with throttling_http(base, limit=K, retry_after=1.0, service_time=SERVICE) as server:
            urls = "".join(server.url(f"r{i:03d}") + "\n" for i in range(count))
            (tmp_path / "urls").write_text(urls)
            args = ["-j", "8", "--retries", "0", "--host-limit", "8", "-v", "--format", "json"]
            args += ["--from-file", "-"]
            done = await trio.run_process(
                [sys.executable, "-m", "clonegate", "analyze", *args],
                stdin=(tmp_path / "urls").read_bytes(),
                capture_stdout=True,
                capture_stderr=True,
                check=False,
                env={**os.environ, "TMPDIR": str(tmp_path)},
            )
    refused = {r.repository for r in server.requests if r.status == 429}
    document = json.loads(done.stdout)
    failed = {
        report["url"].rsplit("/", 1)[1].removesuffix(".git"): report["error"]["kind"]
        for report in document["repositories"]
        if report["status"] != "ok"
    }
    assert done.returncode == 1
    assert refused  # eight at once against three: some were refused
    assert failed == dict.fromkeys(refused, "throttled")
    # One attempt each: every repository's ref listing was asked for once.
    listings = [r.repository for r in server.requests if "/info/refs" in r.target]
    assert sorted(listings) == [f"r{i:03d}" for i in range(count)]
    stderr = done.stderr.decode()
    assert "host 127.0.0.1: clone limit 8 -> 6 (throttled)" in stderr
    assert "host limits lowered: 127.0.0.1 " in stderr


@pytest.mark.parametrize("bad", ["30/day", "0/min", "fast"])
def test_a_malformed_host_rate_is_a_usage_error_naming_the_flag(bad: str) -> None:
    result = CliRunner().invoke(app, ["analyze", "--host-rate", bad, "https://h.example/r.git"])
    assert result.exit_code == 2
    assert "--host-rate: a rate is N/s, N/min or N/h" in result.stderr


def test_the_host_flags_defaults_are_the_use_cases() -> None:
    import inspect

    from clonegate import UseCaseConfig
    from clonegate_cli.app import analyze

    parameters = inspect.signature(analyze).parameters
    assert parameters["adaptive"].default is UseCaseConfig().adaptive is True
    assert parameters["host_limit"].default is UseCaseConfig().host_limit is None
    assert parameters["host_rate"].default is UseCaseConfig().host_rate is None

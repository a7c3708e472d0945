"""Each host's own limits, wired (issue 43, ADR 0019): the signal of each clone attempt
reaches its host's adaptive limit, the options build the limits, and the host's rate
token is taken last. Fakes and a MockClock; the real server is in
tests/test_host_throttling.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import (
    AnalyzeUseCase,
    UseCaseConfig,
    WeightedSemaphore,
    with_adaptive,
    with_clone_weight,
    with_host_limit,
    with_host_limiter,
    with_host_rate,
    with_keep_clones,
    with_max_concurrent_clones,
    with_result_store,
    with_retries,
)
from clonegate._domain.adaptive import AdaptiveLimit, Signal, signal_of
from clonegate._domain.limits import LimiterUnavailableError
from clonegate._domain.rate import Rate, TokenBucket
from clonegate._usecase.gate import CloneGate
from clonegate._usecase.host_limits import HostLimits
from clonegate.errors import (
    ConnectionLostError,
    RepositoryNotFoundError,
    ThrottledError,
    TransportError,
    UnavailableError,
    UnreachableError,
)
from clonegate.store import open_store

from .support.fakes import FakeAnalyzer, FakeVCS, url


def _with_hint(error: UnavailableError, seconds: float | None) -> UnavailableError:
    error.retry_after = seconds
    return error


@pytest.mark.parametrize(
    ("error", "signal"),
    [
        (None, Signal.SUCCESS),
        (ThrottledError("u", "HTTP 429: too many requests"), Signal.THROTTLED),
        (_with_hint(UnavailableError("u", "HTTP 503"), 1.0), Signal.UNAVAILABLE_RETRY_AFTER),
        (_with_hint(UnavailableError("u", "HTTP 503"), None), Signal.OTHER),
        (ConnectionLostError("u", "the connection was reset by the server"), Signal.RESET),
        # By kind, never by words: a transport error that says "reset" is no signal.
        (TransportError("u", "the connection was reset by the proxy"), Signal.OTHER),
        (UnreachableError("https://h/reset.git", "connection refused"), Signal.OTHER),
        (RepositoryNotFoundError("u", "not found"), Signal.OTHER),
        (LimiterUnavailableError("redis down"), Signal.OTHER),
        (trio.Cancelled._create(), Signal.OTHER),
        (KeyboardInterrupt(), Signal.OTHER),
    ],
    ids=repr,
)
def test_signal_of_each_way_an_attempt_ends(error: BaseException | None, signal: Signal) -> None:
    assert signal_of(error) is signal


def test_the_options_build_each_hosts_limits() -> None:
    def built(*options: object) -> HostLimits:
        return HostLimits(UseCaseConfig.of(options))  # type: ignore[arg-type]

    # Adaptive by default: a limit per host, from -j, which a host limit lowers.
    assert UseCaseConfig().adaptive is True
    assert built(with_max_concurrent_clones(8)).ceiling == 8
    assert built(with_max_concurrent_clones(8), with_host_limit(3)).ceiling == 3
    assert built(with_max_concurrent_clones(2), with_host_limit(5)).ceiling == 2  # never above -j
    assert built().limiter_for is not None
    # Off: a fixed limit if one is given, else none.
    assert built(with_adaptive(False)).limiter_for is None
    assert built(with_adaptive(False), with_host_limit(2)).limiter_for is not None
    # A limiter of one's own (a cluster's) is used as given; the later option wins.
    mine = WeightedSemaphore(1)
    assert built(with_host_limit(2), with_host_limiter(lambda h: mine)).limiter_for is not None
    config = UseCaseConfig.of([with_host_limiter(lambda h: mine), with_host_limit(2)])
    assert (config.host_limit, config.host_limiter) == (2, None)
    assert built(with_host_limiter(lambda h: mine)).limiter_for("h") is mine  # type: ignore[misc]
    # A rate: one bucket per host, none without.
    assert built().bucket_for is None
    rated = built(with_host_rate("30/min"))
    assert rated.bucket_for is not None
    assert rated.bucket_for("a").rate == Rate(30, 60.0)
    assert rated.bucket_for("a") is rated.bucket_for("a") is not rated.bucket_for("b")
    assert UseCaseConfig.of([with_host_rate(Rate(2, 1.0))]).host_rate == Rate(2, 1.0)


@pytest.mark.parametrize("bad", ["30", "30/day", "0/min", "-1/s", "", "x/min"])
def test_a_malformed_rate_is_refused_when_the_option_is_made(bad: str) -> None:
    with pytest.raises(ValueError, match="N/s, N/min or N/h"):
        with_host_rate(bad)


def test_adaptive_takes_a_bool_only() -> None:
    with pytest.raises(ValueError, match="True or False"):
        with_adaptive("no")  # type: ignore[arg-type]


def _throttled(i: int) -> ThrottledError:
    error = ThrottledError(url(i), "HTTP 429: the server said too many requests")
    error.retry_after = 1.0
    return error


class _NoWait:
    def delay(self, attempt: int, retry_after: float | None, deadline: float | None) -> float:
        return retry_after or 0.0


def test_a_permit_says_whether_its_limit_took_the_push_back() -> None:
    async def main() -> list[bool]:
        limit = AdaptiveLimit(2)
        took = []
        async with limit.hold() as old, limit.hold() as first:
            took.append(first.report(Signal.THROTTLED))  # 2 -> 1: the limit's own
            took.append(old.report(Signal.THROTTLED))  # granted under 2: still its own
        async with limit.hold() as floor:
            took.append(floor.report(Signal.THROTTLED))  # at 1: the repository's
        async with limit.hold() as again:
            took.append(again.report(Signal.RESET))  # a reset is no push-back
            took.append(again.report(Signal.THROTTLED))  # a second report: ignored
        async with limit.hold() as fine:
            took.append(fine.report(Signal.SUCCESS))
        return took

    assert trio.run(main) == [True, True, False, False, False, False]


@pytest.mark.parametrize(("pushbacks", "ok"), [(4, True), (5, False)])
async def test_push_backs_the_host_limit_took_are_not_charged_to_the_retries(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, pushbacks: int, ok: bool
) -> None:
    # Ceiling 4: three 429s lower it 4 -> 3 -> 2 -> 1 (each the limit's own, free);
    # at the floor the fourth is charged (1 retry allowed), a fifth is one too many.
    vcs = FakeVCS(tmp_path)
    vcs.flaky[url(0)] = [_throttled(0) for _ in range(pushbacks)]
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(4),
        with_retries(1, _NoWait()),
        with_keep_clones(),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    report = await uc.execute(url(0))
    assert (report.status == "ok") is ok
    assert len(report.attempts) == (pushbacks if ok else pushbacks - 1)
    assert vcs.calls.count(url(0)) == (pushbacks + 1 if ok else pushbacks)
    assert uc.host_statistics()["git.example"].size == 1
    # Without the adaptive limit every push-back is charged: 1 retry, then the report.
    fixed_vcs = FakeVCS(tmp_path / "fixed")
    fixed_vcs.flaky[url(0)] = [_throttled(0) for _ in range(pushbacks)]
    fixed = AnalyzeUseCase(
        with_max_concurrent_clones(4),
        with_adaptive(False),
        with_retries(1, _NoWait()),
        with_keep_clones(),
        vcs=fixed_vcs,
        analyzer=FakeAnalyzer(),
    )
    failed = await fixed.execute(url(0))
    assert failed.status == "failed"
    assert fixed_vcs.calls.count(url(0)) == 2


async def test_each_attempt_reports_once_and_a_429_brings_the_hosts_limit_down(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    vcs = FakeVCS(tmp_path, delay=1.0)
    for i in range(4):  # the first wave of four: each throttled once
        vcs.flaky[url(i)] = [_throttled(i)]
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(4),
        with_retries(2, _NoWait()),
        with_keep_clones(),  # removing runs in a thread, which the autojump clock would skip
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    with caplog.at_level(logging.INFO, logger="clonegate"):
        async with uc.analyze_many([url(i) for i in range(12)]) as batch:
            reports = [r async for r in batch]
    assert all(r.status == "ok" for r in reports)
    (host,) = uc.host_statistics()
    stats = uc.host_statistics()[host]
    assert host == "git.example"
    # Four 429s of one generation: one decrease (4 * 0.75 = 3), three ignored.
    assert (stats.decreases, stats.ignored_signals) == (1, 3)
    assert [(c.size, c.signal) for c in stats.timeline[:2]] == [(4, "other"), (3, "throttled")]
    assert stats.held == 0
    assert stats.ceiling == 4
    assert "host git.example: clone limit 4 -> 3 (throttled)" in caplog.text
    # Without with_adaptive (off), nothing adapts and nothing is kept.
    plain = AnalyzeUseCase(with_adaptive(False), vcs=vcs, analyzer=FakeAnalyzer())
    assert plain.host_statistics() == {}


async def test_a_hosts_limit_changes_are_kept_with_the_run(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    vcs = FakeVCS(tmp_path, delay=1.0)
    for i in range(4):
        vcs.flaky[url(i)] = [_throttled(i)]
    async with open_store(tmp_path / "runs.db") as store:
        uc = AnalyzeUseCase(
            with_max_concurrent_clones(4),
            with_retries(2, _NoWait()),
            with_keep_clones(),
            with_result_store(store),
            vcs=vcs,
            analyzer=FakeAnalyzer(),
        )
        async with uc.analyze_many([url(i) for i in range(8)]) as batch:
            assert all([r.status == "ok" async for r in batch])
        (run_id,) = await store.run_ids()
        found = await store.run_report(run_id)
    assert found is not None
    changes = [(e.kind, e.value, e.detail) for e in found.events if e.kind == "host_limit"]
    timeline = uc.host_statistics()["git.example"].timeline
    # Every change of the host's limit, in order, as the run's events (ADR 0020).
    assert changes == [("host_limit", c.size, "git.example") for c in timeline[1:]]
    assert changes[0] == ("host_limit", 3, "git.example")


async def test_a_hosts_limit_change_is_logged_escaped(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    hosts = HostLimits(UseCaseConfig.of([with_max_concurrent_clones(4)]))
    assert hosts.limiter_for is not None
    limiter = hosts.limiter_for("evil\x1b[2J.example")
    with caplog.at_level(logging.INFO, logger="clonegate"):
        async with limiter.hold(1) as permit:
            permit.report(Signal.THROTTLED)  # type: ignore[attr-defined]
    assert "host evil\\x1b[2J.example: clone limit 4 -> 3 (throttled)" in caplog.text
    assert "\x1b" not in caplog.text


async def test_a_heavy_clone_counts_one_against_its_hosts_limit(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    # A weight of 5 under a host limit of 2: one clone, not five (it would wait forever).
    vcs = FakeVCS(tmp_path, delay=1.0)
    heavy = AnalyzeUseCase(
        with_max_concurrent_clones(20),
        with_host_limit(2),
        with_clone_weight(lambda u: 5),
        with_keep_clones(),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
    )
    with trio.fail_after(100):
        async with heavy.analyze_many([url(i) for i in range(4)]) as batch:
            reports = [r async for r in batch]
    assert [r.status for r in reports] == ["ok"] * 4
    assert vcs.peak == 2  # the host's two, though -j 20 holds four of weight 5


async def test_the_rate_token_is_taken_last_and_cancel_leaves_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # Host limit 1, a rate of 1 per 10 s: the second clone waits for the permit
    # holding no token; then, holding the permit, for its token (which is due).
    limits = HostLimits(
        UseCaseConfig.of([with_host_limit(1), with_adaptive(False), with_host_rate("6/min")])
    )
    gate = CloneGate(4, host_limiter=limits.limiter_for, host_rate=limits.bucket_for)
    assert limits.bucket_for is not None
    bucket: TokenBucket = limits.bucket_for("h")
    release = trio.Event()
    entered: list[tuple[int, float]] = []

    async def clone(index: int) -> None:
        async with gate.slot(index, f"https://h/{index}", 1, "h"):
            entered.append((index, trio.current_time()))
            await release.wait()

    start = trio.current_time()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(clone, 0)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(clone, 1)
        await trio.sleep(25)  # mock time: two intervals and a half
        # The second waits for the host's permit: it has taken no token, though one
        # came due (taken early, it would start with it beside the clone that took
        # the next: a burst).
        assert bucket.statistics().taken == 1
        assert [e.index for e in gate.statistics().queued] == [1]
        release.set()
    assert [(i, t - start) for i, t in entered] == [(0, 0.0), (1, 25.0)]
    assert bucket.statistics().taken == 2

    # Cancelled while waiting for its token (holding the permit and the slot): nothing held.
    with trio.move_on_after(3):
        await clone(2)
    stats = gate.statistics()
    assert (stats.queued, stats.active, stats.held) == ((), (), 0)
    assert stats.acquired == stats.released == 2
    assert bucket.statistics().taken == 2
    async with gate.slot(3, "https://h/3", 1, "h"):  # the permit is free again
        pass


async def test_cancelled_while_waiting_for_the_hosts_permit_leaves_nothing(
    autojump_clock: trio.testing.MockClock,
) -> None:
    limit = AdaptiveLimit(1)
    gate = CloneGate(4, host_limiter=lambda h: limit)
    async with trio.open_nursery() as nursery:
        release = trio.Event()

        async def first() -> None:
            async with gate.slot(0, "https://h/0", 1, "h"):
                await release.wait()

        nursery.start_soon(first)
        await trio.testing.wait_all_tasks_blocked()
        assert limit.statistics().held == 1
        with trio.move_on_after(5):
            async with gate.slot(1, "https://h/1", 1, "h"):
                raise AssertionError("the host's one permit is held")
        release.set()
    stats = gate.statistics()
    assert (stats.queued, stats.active, stats.held) == ((), (), 0)
    assert limit.statistics().held == 0


async def test_the_gate_reports_how_the_body_ended_before_the_permit_goes_back(
    autojump_clock: trio.testing.MockClock,
) -> None:
    # A permit given back unreported counts "other" and ignores a later report: the
    # decrease below is there only if the report came first.
    limit = AdaptiveLimit(4)
    gate = CloneGate(4, host_limiter=lambda h: limit)
    with pytest.raises(ThrottledError):
        async with gate.slot(0, "https://h/0", 1, "h"):
            raise _throttled(0)
    # Cancelled: says nothing about the host.
    with trio.move_on_after(1):
        async with gate.slot(1, "https://h/1", 1, "h"):
            await trio.sleep_forever()
    async with gate.slot(2, "https://h/2", 1, "h"):
        pass  # cloned: a success (from a permit granted idle: no increase)
    stats = limit.statistics()
    assert [change.size for change in stats.timeline] == [4, 3]
    assert (stats.decreases, stats.increases, stats.generation) == (1, 0, 1)

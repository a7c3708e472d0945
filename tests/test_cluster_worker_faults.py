"""ClusterWorker in this process against a real redis-server and a real `git daemon`,
under faults of its infrastructure (ADR 0015, issue 39 items 3 and 4).

A shared limit that fails (its Redis unreachable, the lease lost) says nothing about the
repository: the job is put back and run again, and only a clone and analysis make its
report. A job another worker took over is stopped mid-clone and writes nothing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio
from coredis.response.types import StreamPendingExt

from clonegate import CloneSettings, with_global_limiter, with_max_concurrent_clones
from clonegate._adapters.redis.connection import Redis
from clonegate._adapters.redis.queue import DEAD, GROUP, JOBS
from clonegate._app import compose
from clonegate.cluster import ClusterWorker, Patience, RedisSemaphore, RedisWorkQueue, open_redis
from clonegate.errors import LeaseLostError, LimiterUnavailableError

from .support.proxy import ThrottlingProxy
from .support.redis_server import RedisServer, redis_server
from .support.repos import make_repo
from .support.servers import git_daemon

ROOT = Path(__file__).resolve().parents[1]
SAFETY_NET = 60  # seconds: a bound for a hung test, never the assertion
RETRY_DUE = "{clonegate}:retry"  # the zset of jobs put back, by when they are due
PASSWORD = "s3cret"  # in the injected errors: it must reach no report nor status
_Pending = tuple[str, str, int]


class _FailingLimit:
    """A shared limit whose first ``failures`` holds fail as ``make`` says (on entry:
    unreachable; on leaving, after the clone: the lease lost)."""

    def __init__(self, failures: int, *, on_release: bool = False) -> None:
        self.failures = failures
        self.on_release = on_release
        self.holds = 0

    @asynccontextmanager
    async def hold(self, n: int = 1) -> AsyncIterator[None]:
        await trio.lowlevel.checkpoint()
        self.holds += 1
        failing = self.holds <= self.failures
        if failing and not self.on_release:
            raise LimiterUnavailableError(
                f"Redis at redis://u:{PASSWORD}@127.0.0.1:1/0: XREADGROUP timed out"
            )
        yield
        if failing:
            raise LeaseLostError("the lease on 'clones' was lost while held")


def _serve(root: Path, count: int) -> list[str]:
    make_repo(root, "r0", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    for i in range(1, count):
        shutil.copytree(root / "r0.git", root / f"r{i}.git")
    return [f"r{i}" for i in range(count)]


async def _reports(redis: Redis[str], run: str) -> list[dict[str, object]]:
    entries = await redis.xrange(f"{{clonegate}}:run:{run}:results")
    return [json.loads(e.field_values["report"]) for e in entries]


async def _pending(redis: Redis[str], first: str = "-", last: str = "+") -> list[_Pending]:
    """The group's pending entries from ``first`` to ``last``: (id, consumer, deliveries)."""
    found = await redis.xpending(JOBS, GROUP, first, last, 100)
    return [
        (str(p.identifier), str(p.consumer), p.delivered)
        for p in found
        if isinstance(p, StreamPendingExt)
    ]


async def _recorded_retries(redis: Redis[str]) -> dict[tuple[str, str], int]:
    """Per run and repository, the retries its job carried when it was last queued."""
    return {
        (str(e.field_values["run"]), str(e.field_values["key"])): int(
            e.field_values.get("retries", 0)
        )
        for e in await redis.xrange(JOBS)
    }


async def _renew_as(redis: Redis[str], worker: str, job: str, every: float) -> None:
    while True:
        await redis.xclaim(JOBS, GROUP, worker, 0, [job], justid=True)  # RENEW's own step
        await trio.sleep(every)


async def test_infrastructure_errors_put_jobs_back_and_are_never_reported(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    # 8 jobs, 5 clones refused by a limit whose Redis is unreachable, 2 leases lost
    # once cloned: 8 ok reports, 7 retries recorded, nothing failed or dead-lettered.
    served = tmp_path / "served"
    served.mkdir()
    names = _serve(served, 8)
    unreachable, lost = _FailingLimit(5), _FailingLimit(2, on_release=True)
    work = tmp_path / "work"
    work.mkdir()
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        async with open_redis(own_redis.url) as redis:
            queue = RedisWorkQueue(redis, consumer="w", retry_delay=(0.001, 0.002))
            await queue.submit([daemon.url(name) for name in names], run="r")
            workers = []
            for limit in (unreachable, lost):
                use_case = compose(
                    with_max_concurrent_clones(2),
                    with_global_limiter(limit),
                    clone=CloneSettings(work_dir=work),
                    pool=None,
                )
                workers.append(ClusterWorker(queue, use_case))
                await workers[-1].run(exit_when_done=True)
                if limit is unreachable:  # the rest runs with a lease that gets lost
                    await queue.submit([daemon.url(name) for name in names], run="r2")
            reports = await _reports(redis, "r") + await _reports(redis, "r2")
            retries = await _recorded_retries(redis)
            dead = await redis.xlen(DEAD)
            assert await redis.zcard(RETRY_DUE) == 0
    assert len(reports) == 16
    assert all(r["status"] == "ok" for r in reports), [r.get("error") for r in reports]
    assert sum(retries.values()) == 7
    assert dead == 0
    assert [w.totals.retried for w in workers] == [5, 2]
    assert list(work.iterdir()) == []  # the clones of lost leases were removed


async def test_jobs_wait_out_a_limit_whose_redis_is_down(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    # The cluster limit on a redis-server of its own, stopped while the queue's runs, and
    # a limit client of no patience (a longer outage than its patience, in short): every
    # clone's acquire fails (connection refused) and its job is put back, as often as it
    # takes; once that Redis is started again, every job is cloned and reported ok.
    served = tmp_path / "served"
    served.mkdir()
    names = _serve(served, 6)
    with (
        git_daemon(served) as daemon,
        redis_server(tmp_path / "limit") as limit_server,
        trio.fail_after(SAFETY_NET),
    ):
        async with (
            open_redis(own_redis.url) as redis,
            open_redis(limit_server.url) as limit_redis,
            trio.open_nursery() as nursery,
        ):
            semaphore = RedisSemaphore(
                limit_redis, "clones", 2, nursery=nursery, patience=Patience(0)
            )
            queue = RedisWorkQueue(redis, consumer="w", retry_delay=(0.001, 0.002))
            await queue.submit([daemon.url(name) for name in names], run="r")
            limit_server.stop()
            worker = ClusterWorker(
                queue,
                compose(with_max_concurrent_clones(2), with_global_limiter(semaphore), pool=None),
            )
            nursery.start_soon(worker.run)
            while worker.totals.retried < 2 * len(names):  # noqa: ASYNC110 (no event)
                await trio.sleep(0.01)  # polling the worker's count
            assert await _reports(redis, "r") == []  # nothing written meanwhile
            limit_server.start()  # on the same port, empty: the next acquire sets the limit
            while len(await _reports(redis, "r")) < len(names):  # noqa: ASYNC110
                await trio.sleep(0.05)  # polling the results stream, which has no event
            reports = await _reports(redis, "r")
            retries = await _recorded_retries(redis)
            nursery.cancel_scope.cancel()
    assert [r["status"] for r in reports] == ["ok"] * len(names)
    assert sum(retries.values()) >= 2 * len(names)
    assert worker.totals.dead_lettered == 0


async def test_status_shows_a_job_waiting_to_retry_with_its_reason_redacted(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    [name] = _serve(served, 1)
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        async with open_redis(own_redis.url) as redis:
            # A backoff of an hour: the job stays put back, visibly, never failed.
            queue = RedisWorkQueue(redis, consumer="w", retry_delay=(3600.0, 3600.0))
            await queue.submit([daemon.url(name)], run="r")
            use_case = compose(with_global_limiter(_FailingLimit(1)), pool=None)
            worker = ClusterWorker(queue, use_case)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(worker.run)
                while worker.totals.retried == 0:  # noqa: ASYNC110 (the count has no event)
                    await trio.sleep(0.01)  # polling the worker's count, which has no event
                nursery.cancel_scope.cancel()
            status = await queue.status("r")
            assert await _reports(redis, "r") == []
            assert not await queue.idle()
            shown = await trio.run_process(
                [sys.executable, "-m", "clonegate", "status", "r"],
                capture_stdout=True,
                capture_stderr=True,
                env={**os.environ, "CLONEGATE_REDIS_URL": own_redis.url},
                cwd=ROOT,
            )
    lines = shown.stdout.decode().splitlines()
    assert lines[0] == "run r: 1 jobs: 1 queued, 0 in progress, 0 done"
    assert lines[1] == "  1 waiting to retry after infrastructure errors:"
    assert re.fullmatch(
        r"  git://127\.0\.0\.1:\d+/r0: retry 1, in \d+ s, after: limiter_unavailable: "
        r"Redis at redis://\*\*\*@127\.0\.0\.1:1/0: XREADGROUP timed out",
        lines[2],
    ), lines
    assert PASSWORD not in shown.stdout.decode() + shown.stderr.decode()
    assert status is not None
    assert (status.done, status.queued, len(status.running)) == (0, 1, 0)
    [waiting] = status.waiting_to_retry
    assert waiting.retries == 1
    assert waiting.due > 1000  # by the server's clock: an hour's backoff, jittered down to half
    assert waiting.reason.startswith("limiter_unavailable: Redis at redis://")
    assert PASSWORD not in waiting.reason


async def test_a_clone_taken_over_by_another_worker_is_stopped_and_writes_nothing(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    [name] = _serve(served, 1)
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        # Nothing flows until a second connection: the clone hangs (past the safety
        # net: the default read timeout is 120 s) until something stops it.
        proxy = ThrottlingProxy(daemon.port, hold=(2, 1000))
        async with trio.open_nursery() as nursery, open_redis(own_redis.url) as redis:
            await nursery.start(proxy.serve)
            queue = RedisWorkQueue(redis, consumer="a", claim_idle=0.6)
            await queue.submit([f"git://127.0.0.1:{proxy.port}/{name}.git"], run="r")
            work = tmp_path / "work"
            work.mkdir()
            worker = ClusterWorker(queue, compose(clone=CloneSettings(work_dir=work), pool=None))
            nursery.start_soon(worker.run)
            # Polling what the proxy and the clone's directory show, which have no events.
            while not (proxy.connections and any(work.iterdir())):  # noqa: ASYNC110
                await trio.sleep(0.01)
            # Another worker reclaims it (XCLAIM counts a delivery, as XAUTOCLAIM does),
            # and renews it as a live worker does, so that nobody reclaims it again.
            [(job_id, _, _)] = await _pending(redis)
            await redis.xclaim(JOBS, GROUP, "b", 0, [job_id])
            nursery.start_soon(_renew_as, redis, "b", job_id, queue.claim_idle / 3)
            while any(work.iterdir()) or not worker.totals.stopped:  # noqa: ASYNC110
                await trio.sleep(0.01)
            after = await _pending(redis)
            reports = await _reports(redis, "r")
            retried = await redis.zcard(RETRY_DUE)
            nursery.cancel_scope.cancel()
    assert (worker.totals.stopped, worker.totals.reported, worker.totals.retried) == (1, 0, 0)
    assert reports == []
    assert retried == 0
    assert after == [(job_id, "b", 2)]  # still the new owner's


async def test_a_reclaimed_job_runs_alone_on_its_worker(
    tmp_path: Path, own_redis: RedisServer
) -> None:
    # Issue 39 item 7: a dead worker's job may be what killed it; the worker that takes
    # it over runs it alone, taking no new job beside it, however many slots it has.
    served = tmp_path / "served"
    served.mkdir()
    suspect, fresh = _serve(served, 2)
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        proxy = ThrottlingProxy(daemon.port, hold=(2, 1000))  # the suspect's clone hangs
        async with trio.open_nursery() as nursery, open_redis(own_redis.url) as redis:
            await nursery.start(proxy.serve)
            dead = RedisWorkQueue(redis, consumer="dead")
            await dead.submit([f"git://127.0.0.1:{proxy.port}/{suspect}.git"], run="r")
            [job] = await dead.take(1, wait=0.001)
            await redis.xclaim(JOBS, GROUP, "dead", 0, [job.id], idle=3_600_000, justid=True)
            await dead.submit([daemon.url(fresh)], run="r")
            queue = RedisWorkQueue(redis, consumer="w")
            worker = ClusterWorker(queue, compose(with_max_concurrent_clones(4), pool=None))
            nursery.start_soon(worker.run)
            while not proxy.connections:  # noqa: ASYNC110 (the proxy's record)
                await trio.sleep(0.01)
            # Its take is over, the suspect cloning: the new job was not taken with it.
            pending = await _pending(redis)
            status = await queue.status("r")
            nursery.cancel_scope.cancel()
    assert [(consumer, count) for _, consumer, count in pending] == [("w", 2)]
    assert status is not None
    assert [(r.worker, r.deliveries) for r in status.running] == [("w", 2)]
    assert worker.totals.taken == 1

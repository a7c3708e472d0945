"""The cluster mode carries a listing from `submit` to the worker's report (ADR 0023):
a job queued from a ``Listed`` keeps it through a reclaim and a retry, its report has
it; a listing Redis holds that is not one is left out, never guessed. A real
redis-server and, end to end, a real `git daemon`."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
import trio

from clonegate._adapters.redis.queue import JOBS
from clonegate._app import compose
from clonegate._domain.listed import Listed
from clonegate._domain.sources import Forge
from clonegate.cluster import ClusterWorker, Job, RedisWorkQueue, open_redis

from .support.redis_server import RedisServer
from .support.repos import make_repo
from .support.servers import git_daemon

SAFETY_NET = 60  # seconds: a bound for a hung test, never the assertion


def _listed(url: str, name: str = "acme/a") -> Listed:
    pushed = datetime(2026, 11, 1, tzinfo=UTC)
    return Listed(name, url, "77", "main", stars=3, pushed_at=pushed, forge=Forge.GITHUB)


async def _take(queue: RedisWorkQueue, n: int) -> list[Job]:
    jobs: list[Job] = []
    while not jobs:  # until a job is idle (or due) for a server millisecond
        jobs = await queue.take(n, wait=0.001)
    return jobs


async def test_a_listing_goes_with_its_job_through_reclaims_and_retries(
    own_redis: RedisServer,
) -> None:
    a, b = "git://127.0.0.1/a.git", "git://127.0.0.1/b.git"
    with trio.fail_after(SAFETY_NET):
        async with open_redis(own_redis.url) as redis:
            dead = RedisWorkQueue(redis, consumer="dead", claim_idle=0.001)
            # The same repository listed twice is one job, as two URLs are.
            _, added, duplicates = await dead.submit([_listed(a), b, _listed(a)], run="r")
            assert (added, duplicates) == (2, 1)
            first = await dead.take(2, wait=0.001)
            assert [(job.url, job.listed) for job in first] == [(a, _listed(a)), (b, None)]
            live = RedisWorkQueue(redis, consumer="live", claim_idle=0.001)
            live.retry_delay = (0.001, 0.001)
            (reclaimed,) = await _take(live, 1)  # the dead worker's: claimed by script
            assert (reclaimed.url, reclaimed.listed) == (a, _listed(a))
            assert await live.start(reclaimed)
            assert await live.retry(reclaimed, "the shared limit is unreachable") is not None
            again = [job for job in await _take(live, 2) if job.url == a]
            while not again:  # b may be reclaimed first
                again = [job for job in await _take(live, 2) if job.url == a]
            assert again[0].listed == _listed(a)  # put back, queued again, still listed


async def test_a_listing_redis_cannot_give_back_is_left_out(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_redis(own_redis.url) as redis:
        queue = RedisWorkQueue(redis, consumer="w", claim_idle=60.0)
        await queue.submit(["git://127.0.0.1/a.git"], run="r")  # makes the stream's group
        fields = {"run": "r", "index": "1", "url": "git://127.0.0.1/b.git", "key": "b"}
        await redis.xadd(JOBS, {**fields, "listed": '{"full_name": "x/\\u001b[31m"}'})
        with caplog.at_level(logging.WARNING, logger="clonegate"):
            jobs = await queue.take(2, wait=0.001)
    assert [job.listed for job in jobs] == [None, None]
    (record,) = [r for r in caplog.records if "listing" in r.getMessage()]
    assert "unreadable" in record.getMessage()
    assert "\x1b" not in record.getMessage()


async def test_a_cluster_report_has_its_listing(own_redis: RedisServer, tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "a", commits=1, other_branches=())
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        async with open_redis(own_redis.url) as redis:
            queue = RedisWorkQueue(redis, consumer="w")
            said = _listed(daemon.url("a"))
            run, _, _ = await queue.submit([said, daemon.url("a") + "/"], run="r")
            worker = ClusterWorker(queue, compose(pool=None))
            await worker.run(exit_when_done=True)
            reports = [report async for report in queue.results(run)]
    assert [(r.status, r.listed) for r in reports] == [("ok", said)]

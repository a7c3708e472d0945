"""Fencing in RedisWorkQueue on a real redis-server of each test's own: a report counts
only from the worker that holds the job's delivery now (ADR 0015, issue 39, item 4).

A worker paused past --claim-idle loses its job to another worker; on resume, its
report (often ``lease_lost``) must not replace the new owner's. The tests make the job
look idle to Redis itself (``XCLAIM ... IDLE``, keeping the owner and the delivery
count) so that the other worker's reclaim is Redis's own decision, with no sleep.
"""

from __future__ import annotations

import json
import logging

import pytest

from clonegate import RepositoryReport, RepositoryStatus
from clonegate._adapters.redis.connection import Redis
from clonegate._adapters.redis.queue import GROUP, JOBS
from clonegate.cluster import Job, RedisWorkQueue, open_redis

from .support.redis_server import RedisServer

URL = "git://127.0.0.1/a.git"
CLAIM_IDLE = 60.0  # seconds; the job is made an hour idle, far past it


async def _idle_for_an_hour(redis: Redis[str], job: Job, owner: str) -> None:
    """What a pause of the owner looks like to Redis: the job's delivery unrenewed for
    an hour (same owner, same delivery count: JUSTID does not count a delivery)."""
    await redis.xclaim(JOBS, GROUP, owner, 0, [job.id], idle=3_600_000, justid=True)


async def _reports(redis: Redis[str], run: str) -> list[tuple[str, str]]:
    """(worker, status) of every report written in ``run``."""
    entries = await redis.xrange(f"{{clonegate}}:run:{run}:results")
    return [
        (str(e.field_values["worker"]), json.loads(e.field_values["report"])["status"])
        for e in entries
    ]


def _ok(job: Job) -> RepositoryReport:
    return RepositoryReport(job.url, job.index, RepositoryStatus.OK)


def _lease_lost(job: Job) -> RepositoryReport:
    return RepositoryReport.failure(job.url, job.index, "clone", "lease_lost", "lease lost")


async def _taken_over(redis: Redis[str]) -> tuple[RedisWorkQueue, Job, RedisWorkQueue, Job]:
    """Worker A takes the job; it goes idle past claim_idle; worker B reclaims it."""
    a = RedisWorkQueue(redis, consumer="a", claim_idle=CLAIM_IDLE)
    b = RedisWorkQueue(redis, consumer="b", claim_idle=CLAIM_IDLE)
    await a.submit([URL], run="r")
    [a_job] = await a.take(1, wait=0.001)
    assert await b.take(1, wait=0.001) == []  # A's, and not idle yet
    await _idle_for_an_hour(redis, a_job, "a")
    [b_job] = await b.take(1, wait=0.001)
    assert (b_job.id, a_job.deliveries, b_job.deliveries) == (a_job.id, 1, 2)
    return a, a_job, b, b_job


async def test_a_stale_worker_finishing_after_the_new_owner_is_dropped(
    own_redis: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    async with open_redis(own_redis.url) as redis:
        a, a_job, b, b_job = await _taken_over(redis)
        assert await b.start(b_job)
        assert await b.finish(b_job, _ok(b_job))
        with caplog.at_level(logging.WARNING, logger="clonegate"):
            assert not await a.finish(a_job, _lease_lost(a_job))
        assert await _reports(redis, "r") == [("b", "ok")]
        assert [r.message for r in caplog.records] == [
            f"job {a_job.id} ({URL}): report dropped, another worker has it"
        ]
        assert await a.idle()


async def test_a_stale_worker_finishing_first_is_dropped_and_the_owner_counts(
    own_redis: RedisServer,
) -> None:
    # The case of issue 39: the paused worker resumed and wrote lease_lost first, and
    # the owner's good report was told "already reported".
    async with open_redis(own_redis.url) as redis:
        a, a_job, b, b_job = await _taken_over(redis)
        assert await b.start(b_job)
        assert not await a.finish(a_job, _lease_lost(a_job))
        # Nothing acknowledged: the job is still B's, and still being run.
        assert not await a.idle()
        status = await a.status("r")
        assert status is not None
        assert (status.done, [r.worker for r in status.running]) == (0, ["b"])
        assert await b.finish(b_job, _ok(b_job))
        assert await _reports(redis, "r") == [("b", "ok")]
        assert await a.idle()


async def test_a_worker_that_reclaimed_its_own_job_reports_from_the_newer_delivery_only(
    own_redis: RedisServer,
) -> None:
    # Same consumer, two deliveries (its own reclaim after its renewals failed): the
    # delivery count fences the older one.
    async with open_redis(own_redis.url) as redis:
        a = RedisWorkQueue(redis, consumer="a", claim_idle=CLAIM_IDLE)
        await a.submit([URL], run="r")
        [old] = await a.take(1, wait=0.001)
        await _idle_for_an_hour(redis, old, "a")
        [new] = await a.take(1, wait=0.001)
        assert (new.id, new.deliveries) == (old.id, 2)
        assert not await a.finish(old, _lease_lost(old))
        assert await a.finish(new, _ok(new))
        assert await _reports(redis, "r") == [("a", "ok")]


async def test_a_stale_worker_does_not_start_a_job_taken_over(own_redis: RedisServer) -> None:
    # Paused between taking and starting: on resume it must not clone (a clone the
    # limit counts, for a report that would be dropped) nor show itself as running it.
    async with open_redis(own_redis.url) as redis:
        a, a_job, b, b_job = await _taken_over(redis)
        assert await b.start(b_job)
        assert not await a.start(a_job)
        status = await a.status("r")
        assert status is not None
        assert [r.worker for r in status.running] == ["b"]
        assert not await a.idle()  # still B's, not acknowledged

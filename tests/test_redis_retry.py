"""RedisWorkQueue's retries and reclaiming on a real redis-server of each test's own
(ADR 0015, issue 39 items 3 and 7).

Infrastructure is never the repository's fault: a job whose shared limit failed is put
back (counted, after a backoff by the server's clock) and written as no report. A dead
worker's jobs are reclaimed one at a time, to run alone: only a death while a job ran
alone shows that the job kills workers. The tests make a job look idle to Redis itself
(``XCLAIM ... IDLE``) and a retry due (its score in the ``retry`` zset), with no sleep.
"""

from __future__ import annotations

import json

from coredis.response.types import StreamPendingExt

from clonegate import RepositoryReport, RepositoryStatus
from clonegate._adapters.redis.connection import Redis
from clonegate._adapters.redis.queue import GROUP, JOBS
from clonegate.cluster import Job, RedisWorkQueue, open_redis

from .support.redis_server import RedisServer

URLS = [f"git://127.0.0.1/r{i}.git" for i in range(3)]
CLAIM_IDLE = 60.0  # seconds; jobs are made an hour idle, far past it
RETRY_DUE = "{clonegate}:retry"  # the zset of jobs put back, by when they are due
_Pending = tuple[str, str, int]
REASON = "limiter_unavailable: Redis at redis://u:s3cret@127.0.0.1:1/0: timed out"


async def _idle_for_an_hour(redis: Redis[str], job: Job, owner: str) -> None:
    """What the death of the owner looks like to Redis, a claim time later."""
    await redis.xclaim(JOBS, GROUP, owner, 0, [job.id], idle=3_600_000, justid=True)


async def _due_now(redis: Redis[str]) -> None:
    """Every retry's backoff over, by the score Redis keeps."""
    for member in await redis.zrange(RETRY_DUE, 0, -1):
        await redis.zadd(RETRY_DUE, {member: 0})


async def _pending(redis: Redis[str], first: str = "-", last: str = "+") -> list[_Pending]:
    """The group's pending entries from ``first`` to ``last``: (id, consumer, deliveries)."""
    found = await redis.xpending(JOBS, GROUP, first, last, 100)
    return [
        (str(p.identifier), str(p.consumer), p.delivered)
        for p in found
        if isinstance(p, StreamPendingExt)
    ]


async def _reports(redis: Redis[str], run: str) -> list[dict[str, object]]:
    entries = await redis.xrange(f"{{clonegate}}:run:{run}:results")
    return [json.loads(e.field_values["report"]) for e in entries]


def _ok(job: Job) -> RepositoryReport:
    return RepositoryReport(job.url, job.index, RepositoryStatus.OK)


async def test_a_job_put_back_has_no_report_and_comes_back_as_a_new_delivery(
    own_redis: RedisServer,
) -> None:
    async with open_redis(own_redis.url) as redis:
        a = RedisWorkQueue(redis, consumer="a", claim_idle=CLAIM_IDLE)
        await a.submit(URLS[:1], run="r")
        [job] = await a.take(1, wait=0.001)
        assert await a.start(job)
        retry = await a.retry(job, REASON)
        assert retry is not None
        assert retry.attempt == 1
        assert 0.5 <= retry.delay <= 1.0  # the first backoff, 1 s, with its jitter
        # No report, nobody runs it, it is not idle: it waits to be retried.
        assert await _reports(redis, "r") == []
        status = await a.status("r")
        assert status is not None
        assert (status.done, status.running, status.queued) == (0, (), 1)
        [waiting] = status.waiting_to_retry
        assert (waiting.key, waiting.retries) == (job.key, 1)
        assert "s3cret" not in waiting.reason
        assert waiting.reason.startswith("limiter_unava")
        assert not await a.idle()
        assert await a.take(1, wait=0.001) == []  # in its backoff
        # The old delivery is gone: its holder can no longer report it.
        assert not await a.finish(job, _ok(job))
        await _due_now(redis)
        [again] = await a.take(1, wait=0.001)
        assert again.id != job.id
        assert (again.key, again.deliveries, again.retries) == (job.key, 1, 1)
        assert await a.start(again)
        assert await a.finish(again, _ok(again))
        assert [r["status"] for r in await _reports(redis, "r")] == ["ok"]
        status = await a.status("r")
        assert status is not None
        assert (status.done, status.retrying) == (1, ())
        assert await a.idle()


async def test_the_backoff_doubles_up_to_its_longest_by_the_servers_clock(
    own_redis: RedisServer,
) -> None:
    async with open_redis(own_redis.url) as redis:
        a = RedisWorkQueue(redis, consumer="a", claim_idle=CLAIM_IDLE, retry_delay=(1.0, 4.0))
        await a.submit(URLS[:1], run="r")
        delays = []
        for attempt in range(1, 6):
            [job] = await a.take(1, wait=0.001)
            assert job.retries == attempt - 1
            retry = await a.retry(job, REASON)
            assert retry is not None
            assert retry.attempt == attempt
            delays.append(retry.delay)
            status = await a.status("r")  # its due time, from the server's clock now
            assert status is not None
            [waiting] = status.waiting_to_retry
            assert 0 < waiting.due <= retry.delay
            await _due_now(redis)
        for delay, longest in zip(delays, [1, 2, 4, 4, 4], strict=True):
            assert longest / 2 <= delay <= longest
        assert await _reports(redis, "r") == []  # never dead-lettered nor failed


async def test_a_worker_that_lost_its_job_cannot_put_it_back(own_redis: RedisServer) -> None:
    async with open_redis(own_redis.url) as redis:
        a = RedisWorkQueue(redis, consumer="a", claim_idle=CLAIM_IDLE)
        b = RedisWorkQueue(redis, consumer="b", claim_idle=CLAIM_IDLE)
        await a.submit(URLS[:1], run="r")
        [a_job] = await a.take(1, wait=0.001)
        await _idle_for_an_hour(redis, a_job, "a")
        [b_job] = await b.take(1, wait=0.001)
        assert await b.start(b_job)
        assert await a.retry(a_job, REASON) is None
        assert await redis.zcard(RETRY_DUE) == 0
        status = await a.status("r")
        assert status is not None
        assert ([r.worker for r in status.running], status.retrying) == (["b"], ())
        assert await b.finish(b_job, _ok(b_job))


async def test_a_dead_workers_jobs_are_reclaimed_one_at_a_time(own_redis: RedisServer) -> None:
    # Issue 39 item 7: reclaimed as a group, a poison job's neighbours followed it from
    # dead worker to dead worker. One at a time, each runs alone on its next worker.
    async with open_redis(own_redis.url) as redis:
        dead = RedisWorkQueue(redis, consumer="dead", claim_idle=CLAIM_IDLE)
        live = RedisWorkQueue(redis, consumer="live", claim_idle=CLAIM_IDLE)
        await dead.submit(URLS, run="r")
        taken = await dead.take(3, wait=0.001)
        assert len(taken) == 3
        for job in taken:
            await _idle_for_an_hour(redis, job, "dead")
        first = await live.take(3, wait=0.001)
        assert [(j.id, j.deliveries) for j in first] == [(taken[0].id, 2)]
        second = await live.take(3, wait=0.001)
        assert [(j.id, j.deliveries) for j in second] == [(taken[1].id, 2)]
        # A worker that holds jobs leaves the last one to a worker that holds none.
        assert await live.take_new(3, wait=0.001) is None
        assert await _pending(redis, taken[2].id, taken[2].id) == [(taken[2].id, "dead", 1)]


async def test_only_a_death_while_running_alone_marks_a_job(own_redis: RedisServer) -> None:
    async with open_redis(own_redis.url) as redis:
        first = RedisWorkQueue(redis, consumer="first", claim_idle=CLAIM_IDLE)
        second = RedisWorkQueue(redis, consumer="second", claim_idle=CLAIM_IDLE)
        third = RedisWorkQueue(redis, consumer="third", claim_idle=CLAIM_IDLE)
        await first.submit(URLS[:2], run="r")
        poison, neighbour = await first.take(2, wait=0.001)
        for job in (poison, neighbour):  # both run on the first worker, which dies
            assert await first.start(job)
            await _idle_for_an_hour(redis, job, "first")
        [alone] = await second.take(2, wait=0.001)
        assert (alone.id, alone.deaths, alone.died_alone) == (poison.id, 1, False)
        assert await second.start(alone, alone=True)
        await _idle_for_an_hour(redis, alone, "second")  # the second worker dies too
        found = [await third.take(2, wait=0.001), await third.take(2, wait=0.001)]
        by_id = {jobs[0].id: jobs[0] for jobs in found}
        assert (by_id[poison.id].deaths, by_id[poison.id].died_alone) == (2, True)
        assert (by_id[neighbour.id].deaths, by_id[neighbour.id].died_alone) == (1, False)


async def test_deaths_are_carried_over_a_retry(own_redis: RedisServer) -> None:
    # A job that killed a worker alone, then met an infrastructure error, keeps its
    # record: a retry must not launder a poison job.
    async with open_redis(own_redis.url) as redis:
        a = RedisWorkQueue(redis, consumer="a", claim_idle=CLAIM_IDLE)
        b = RedisWorkQueue(redis, consumer="b", claim_idle=CLAIM_IDLE)
        await a.submit(URLS[:1], run="r")
        [job] = await a.take(1, wait=0.001)
        await _idle_for_an_hour(redis, job, "a")
        [job] = await b.take(1, wait=0.001)
        assert await b.start(job, alone=True)
        await _idle_for_an_hour(redis, job, "b")
        [job] = await a.take(1, wait=0.001)
        assert await a.start(job, alone=True)
        assert await a.retry(job, REASON) is not None
        await _due_now(redis)
        [again] = await b.take(1, wait=0.001)
        assert (again.deliveries, again.retries) == (1, 1)
        assert (again.deaths, again.died_alone) == (2, True)

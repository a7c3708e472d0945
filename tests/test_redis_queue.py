"""RedisWorkQueue on a real redis-server of each test's own (the queue's keys are fixed):
how a worker with nothing new to do waits (ADR 0015, issue 39)."""

from __future__ import annotations

from clonegate import RepositoryReport, RepositoryStatus
from clonegate.cluster import Job, RedisWorkQueue, RunStatus, open_redis

from .support.redis_server import RedisServer

# Short, so that a read waiting past it fails the test in seconds: every wait of the
# queue must end well within the client's reply bound.
REPLY_BOUND = 2.0


async def test_a_worker_that_reclaims_part_of_what_it_asked_for_does_not_wait(
    own_redis: RedisServer,
) -> None:
    # The cause of issue 39's lost jobs: a worker that reclaimed one job of the three it
    # asked for read the rest with BLOCK 0, which Redis takes as "wait for ever"; with no
    # new job, the reply never came, and the worker exited on its reply bound.
    async with open_redis(own_redis.url, reply_timeout=REPLY_BOUND) as redis:
        dead = RedisWorkQueue(redis, consumer="dead", claim_idle=0.001)
        await dead.submit(["git://127.0.0.1/a.git"], run="r")
        taken = await dead.take(1, wait=0.001)
        assert [job.url for job in taken] == ["git://127.0.0.1/a.git"]
        live = RedisWorkQueue(redis, consumer="live", claim_idle=0.001)
        jobs: list[Job] = []
        while not jobs:  # until the dead worker's job is idle for a server millisecond
            jobs = await live.take(3, wait=0.001)
    assert [(job.id, job.deliveries) for job in jobs] == [(taken[0].id, 2)]


async def test_a_long_wait_for_new_jobs_ends_within_the_reply_bound(
    own_redis: RedisServer,
) -> None:
    # An idle worker asks to wait a third of --claim-idle (20 s by default): each
    # blocking read asks Redis for less than the client's reply bound, and returns none.
    async with open_redis(own_redis.url, reply_timeout=REPLY_BOUND) as redis:
        queue = RedisWorkQueue(redis, consumer="idle", claim_idle=60.0)
        await queue.submit(["git://127.0.0.1/a.git"], run="r")
        assert len(await queue.take(1, wait=0.001)) == 1
        assert await queue.take(2, wait=100 * REPLY_BOUND) == []


async def test_results_read_what_ended_between_their_last_read_and_the_status(
    own_redis: RedisServer,
) -> None:
    # `results --follow` read the stream (empty), then the run's status, which said
    # finished: a report written between the two was never printed (seen in CI).
    async with open_redis(own_redis.url, reply_timeout=REPLY_BOUND) as redis:
        worker = RedisWorkQueue(redis, consumer="w")
        await worker.submit(["git://127.0.0.1/a.git"], run="r")
        [job] = await worker.take(1, wait=0.001)
        assert await worker.start(job)

        class EndingAtStatus(RedisWorkQueue):
            async def status(self, run: str) -> RunStatus | None:
                if not ended:  # the job ends right after the reader's empty read
                    ended.append(await worker.finish(job, _ok(job)))
                return await super().status(run)

        ended: list[bool] = []
        reader = EndingAtStatus(redis, consumer="reader")
        reports = [report.url async for report in reader.results("r", follow=True)]
    assert ended == [True]
    assert reports == ["git://127.0.0.1/a.git"]


def _ok(job: Job) -> RepositoryReport:
    return RepositoryReport(job.url, job.index, RepositoryStatus.OK)

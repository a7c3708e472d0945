"""The order jobs are handed out in across runs (ADR 0015, issue 39): one queue, first
submitted, first taken, whatever run a job belongs to. A real redis-server of each
test's own."""

from __future__ import annotations

from clonegate.cluster import RedisWorkQueue, open_redis

from .support.redis_server import RedisServer


def _urls(name: str, n: int) -> list[str]:
    return [f"git://127.0.0.1/{name}{i}.git" for i in range(n)]


async def test_jobs_are_taken_in_the_order_they_were_submitted_across_runs(
    own_redis: RedisServer,
) -> None:
    async with open_redis(own_redis.url) as redis:
        queue = RedisWorkQueue(redis, consumer="w")
        first, _, _ = await queue.submit(_urls("a", 3))
        second, _, _ = await queue.submit(_urls("b", 2))
        # More jobs for the first run, submitted after the second run's: they queue
        # behind it, not ahead (the queue knows submissions, not runs).
        await queue.submit(_urls("late", 2), run=first)
        taken = []
        while jobs := await queue.take(2, wait=0.001):
            taken += [(job.run, job.url) for job in jobs]
    expected = (
        [(first, url) for url in _urls("a", 3)]
        + [(second, url) for url in _urls("b", 2)]
        + [(first, url) for url in _urls("late", 2)]
    )
    assert taken == expected

"""The semaphore and the queue ride out Redis with patience, on a real redis-server of
the test's own (ADR 0015, "Workers ride out Redis")."""

from __future__ import annotations

import uuid

import pytest
import trio

from clonegate import Patience, RedisSemaphore, RedisUnavailableError, RedisWorkQueue, open_redis

from .redis_server import RedisServer

SAFETY_NET = 60  # seconds: a bound for a hang, never the assertion


async def _until_down(patience: Patience) -> None:
    while True:
        if patience.down:
            return
        await trio.sleep(0.01)  # polling: a patience has no events to wait for


async def _until_waiting(sem: RedisSemaphore, n: int) -> None:
    while True:
        if len((await sem.statistics()).waiters) >= n:
            return
        await trio.sleep(0.01)  # polling Redis's queue, which has no events


async def test_waiters_keep_their_place_through_a_redis_gone_silent(
    own_redis: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    patience = Patience(SAFETY_NET)
    granted: list[str] = []
    with trio.fail_after(SAFETY_NET):
        async with (
            open_redis(own_redis.url, reply_timeout=0.5) as redis,
            RedisSemaphore(redis, name, 1, lease=30, patience=patience) as sem,
        ):
            holder = await sem.acquire()

            async def wait(who: str, *, task_status: trio.TaskStatus[None]) -> None:
                task_status.started()
                async with sem.hold():
                    granted.append(who)

            async with trio.open_nursery() as nursery:
                await nursery.start(wait, "first")
                await _until_waiting(sem, 1)
                await nursery.start(wait, "second")
                await _until_waiting(sem, 2)
                own_redis.pause()  # mid-command: the next polls get no reply
                try:
                    await _until_down(patience)
                finally:
                    own_redis.resume()
                assert await holder.release()
    # Both rode it out (no RedisUnavailableError), in their order of arrival.
    assert granted == ["first", "second"]
    assert patience.outages >= 1
    assert not patience.down


async def test_a_release_sent_again_after_a_lost_reply_is_no_lost_lease(
    own_redis: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with open_redis(own_redis.url) as redis, RedisSemaphore(redis, name, 1) as sem:
        lease = await sem.acquire()
        # The release ran on the server but its reply was lost: patience sends it again.
        assert await sem._call("leave", lease.id) == ["released"]
        assert await lease.release()  # not "absent": the permit was given back, not lost
        assert not lease.lost.is_set()


async def test_the_queue_rides_out_a_redis_restart_and_gives_up_after_its_patience(
    own_redis: RedisServer,
) -> None:
    patience = Patience(SAFETY_NET)
    with trio.fail_after(SAFETY_NET):
        async with open_redis(own_redis.url, reply_timeout=0.5) as redis:
            queue = RedisWorkQueue(redis, patience=patience)
            run, added, _ = await queue.submit(["git://127.0.0.1:1/r.git"])
            assert added == 1
            own_redis.stop()
            async with trio.open_nursery() as nursery:

                async def status() -> None:
                    assert await queue.status(run) is None  # no AOF: the run is gone

                nursery.start_soon(status)
                await _until_down(patience)
                own_redis.start()
            assert patience.outages == 1
            # No patience: the first failure is the answer.
            own_redis.stop()
            impatient = RedisWorkQueue(redis, patience=Patience(0))
            with pytest.raises(RedisUnavailableError, match="no more patience, 0 s"):
                await impatient.status(run)
            own_redis.start()

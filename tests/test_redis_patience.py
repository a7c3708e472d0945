"""The semaphore and the queue ride out Redis with patience, on a real redis-server of
the test's own (ADR 0015, "Workers ride out Redis")."""

from __future__ import annotations

import uuid

import pytest
import trio
import trio.testing

from clonegate.cluster import (
    Patience,
    RedisSemaphore,
    RedisUnavailableError,
    RedisWorkQueue,
    open_redis,
)

from .support.redis_server import RedisServer

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


async def test_a_permit_granted_by_a_late_reply_is_held_not_lost(own_redis: RedisServer) -> None:
    # Redis paused for three leases while a waiter's acquire is in flight: the grant is
    # made at the resume, fresh on the server, but its local deadline counts from the
    # request's sending and has passed when the reply arrives. It is renewed at once,
    # not declared lost on arrival (the waiter would lose its turn and its clone).
    async with (
        open_redis(own_redis.url) as redis,
        RedisSemaphore(redis, uuid.uuid4().hex, 1, lease=1) as sem,
    ):
        leases = []

        async def take() -> None:
            leases.append(await sem.acquire())

        own_redis.pause()
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(take)
                await trio.sleep(3)  # the pause itself, three leases long
                own_redis.resume()
        finally:
            own_redis.resume()
        [lease] = leases
        await trio.testing.wait_all_tasks_blocked()  # its heartbeat has looked at it
        assert not lease.lost.is_set()
        assert await lease.release()


async def test_a_release_unanswered_before_the_deadline_is_no_lost_lease(
    own_redis: RedisServer,
) -> None:
    # The work under a permit ended a second before its local deadline, and Redis went
    # silent: the release waits out its clean-up bound (5 s), past the deadline. The
    # permit was held throughout the work (the deadline had not passed when it ended):
    # no lost lease, which would throw a finished clone away.
    async with (
        open_redis(own_redis.url) as redis,
        RedisSemaphore(redis, uuid.uuid4().hex, 1, lease=30) as sem,
    ):
        lease = await sem.acquire()
        lease.deadline = trio.current_time() + 1.0  # as if its last renewal were old
        own_redis.pause()
        try:
            held = await lease.release()
        finally:
            own_redis.resume()
    assert held
    assert not lease.lost.is_set()

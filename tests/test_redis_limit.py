"""RedisSemaphore's limit is configuration in Redis (issue 39, ADR 0015): changed live by
another client, it fails nobody, and grants follow the new limit in arrival order;
reset, it is stored again by the next client. The server's log is the record."""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any

import trio

from clonegate.cluster import Lease, RedisSemaphore, open_redis

from .support.paths import ROOT
from .support.redis_log import log_of, replay
from .support.redis_server import RedisServer


async def test_a_limit_changed_down_then_up_fails_nobody_and_grants_in_order(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    entered = [trio.Event() for _ in range(5)]
    leave = [trio.Event() for _ in range(5)]
    leases: list[Lease] = []

    async def waiter(i: int) -> None:
        async with workers.hold(1) as lease:
            leases.append(lease)
            entered[i].set()
            await leave[i].wait()

    async def holder_ids() -> list[str]:
        return [h.id for h in (await admin.statistics()).holders]

    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, name, 2, lease=10) as workers,
        RedisSemaphore(redis, name, 2, lease=10) as admin,  # `clonegate limit`, elsewhere
        trio.open_nursery() as nursery,
    ):
        first, second = await workers.acquire(1), await workers.acquire(1)
        for i in range(5):  # queued in this order, each seen by Redis before the next
            nursery.start_soon(waiter, i)
            while len((await admin.statistics()).waiters) <= i:  # noqa: ASYNC110
                await trio.sleep(0.005)
        ids = [w.id for w in (await admin.statistics()).waiters]

        assert await admin.configure(1) == (2, 10.0)
        assert await first.release()  # 1 held, 1 allowed: nobody is let in
        assert await holder_ids() == [second.id]
        assert await second.release()  # the head only
        assert await holder_ids() == [ids[0]]
        assert await admin.configure(3) == (1, 10.0)  # the next two at once, in order
        assert sorted(await holder_ids()) == sorted(ids[:3])
        for i in range(5):
            await entered[i].wait()  # every waiter got in, none failed
            leave[i].set()
        log = await log_of(redis, name)
    assert sorted(lease.id for lease in leases) == sorted(ids)
    events = [(e["event"], e["id"], e.get("limit")) for e in log]
    # The raise itself granted: its event is followed by the two grants, nothing between.
    at = events.index(("configured", admin._client_id, "3"))
    assert [(event, id) for event, id, _ in events[at + 1 : at + 3]] == [
        ("granted", ids[1]),
        ("granted", ids[2]),
    ]
    assert not {"expired", "evicted", "withdrawn"} & {event for event, _, _ in events}
    grants = replay(log)
    assert [id for id, _, _ in grants] == [first.id, second.id, *ids]
    assert all(held <= limit for _, held, limit in grants), grants
    assert [limit for _, _, limit in grants] == [2, 2, 1, 3, 3, 3, 3]


async def test_a_reset_limit_is_stored_again_by_the_next_client_and_keeps_its_holders(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, name, 2, lease=10) as first,
        RedisSemaphore(redis, name, 2, lease=10) as admin,
        RedisSemaphore(redis, name, 3, lease=10) as later,
    ):
        held = await first.acquire(2)
        assert await admin.reset() == (2, 10.0)
        stats = await admin.statistics()
        assert (stats.limit, stats.held, [h.id for h in stats.holders]) == (-1, 2, [held.id])
        renewed: Any = await first._call("heartbeat", held.id, 10_000)
        assert renewed[:2] == ["granted", held.token]  # a holder keeps its lease
        async with trio.open_nursery() as nursery:
            # Stores 3, where 2 are still held: a request for 2 waits, one for 1 fits.
            nursery.start_soon(later.acquire, 2)
            while not (await admin.statistics()).waiters:  # noqa: ASYNC110
                await trio.sleep(0.005)
            assert await later.try_acquire(1) is None  # FIFO: the request for 2 is ahead
            assert await held.release()
        stats = await admin.statistics()
        assert (stats.limit, stats.lease, stats.held, stats.waiters) == (3, 10.0, 2, ())
        log = await log_of(redis, name)
    events = [(e["event"], e.get("limit")) for e in log]
    at = events.index(("reset", None))
    assert events[at + 1] == ("configured", "3")  # by the next request, its client's
    assert replay(log)[-1][1:] == (2, 3)


async def test_the_limit_command_shows_changes_keeping_the_lease_and_resets(
    redis_service: RedisServer,
) -> None:
    host = f"{uuid.uuid4().hex}.example"
    env = {**os.environ, "CLONEGATE_REDIS_URL": redis_service.url}

    async def limit(*args: str) -> tuple[int, str]:
        done = await trio.run_process(
            [sys.executable, "-m", "clonegate", "limit", "--host", host, *args],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=env,
            cwd=ROOT,
        )
        return done.returncode, (done.stdout + done.stderr).decode().strip()

    name = f"host:{host}"
    assert await limit() == (0, f"{name}: limit none, 0 held")
    assert await limit("2", "--lease", "5") == (0, f"{name}: limit none -> 2, lease 5 s")
    assert await limit("3") == (0, f"{name}: limit 2 -> 3, lease 5 s")  # the lease kept
    assert await limit() == (0, f"{name}: limit 3, lease 5 s, 0 held")
    assert await limit("--reset") == (0, f"{name}: limit 3 forgotten")
    assert (await limit("--reset", "1"))[0] == 2
    assert await limit() == (0, f"{name}: limit none, 0 held")

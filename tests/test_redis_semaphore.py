"""RedisSemaphore on a real redis-server: leases, crashes, restarts, pauses, replays,
settings that differ, and a stress run of several processes (ADR 0015). Other machines are
child processes (tests/support/redis_client.py); the server's own log is the record."""

from __future__ import annotations

import logging
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from clonegate.cluster import RedisSemaphore, RedisUnavailableError, open_redis
from clonegate.errors import LeaseLostError

from .support.paths import ROOT
from .support.redis_log import log_of
from .support.redis_server import RedisServer
from .support.servers import free_port


class Child:
    """A client on "another machine": a process of its own, killed at the end."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self._buffer = b""

    async def readline(self) -> str:
        assert self.process.stdout is not None
        while b"\n" not in self._buffer:
            chunk = await self.process.stdout.receive_some()
            assert chunk, "the child exited early"
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line.decode()

    def kill(self) -> None:
        self.process.kill()


@asynccontextmanager
async def child(url: str, name: str, limit: int, lease: float, *args: str) -> AsyncIterator[Child]:
    command = [
        sys.executable,
        "-m",
        "tests.support.redis_client",
        url,
        name,
        str(limit),
        str(lease),
    ]
    process = await trio.lowlevel.open_process([*command, *args], stdout=subprocess.PIPE, cwd=ROOT)
    try:
        yield Child(process)
    finally:
        process.kill()
        await process.wait()


async def test_statistics_list_holders_with_their_lease_and_waiters_with_their_rank(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, name, 3, lease=20) as sem,
        trio.open_nursery() as nursery,
    ):
        lease = await sem.acquire(2)
        for weight in (2, 1):
            nursery.start_soon(sem.acquire, weight)
            while len((await sem.statistics()).waiters) < (3 - weight):  # noqa: ASYNC110
                await trio.sleep(0.005)
        stats = await sem.statistics()
        assert (stats.limit, stats.lease, stats.held) == (3, 20.0, 2)
        [holder] = stats.holders
        assert (holder.id, holder.weight, holder.token) == (lease.id, 2, lease.token)
        assert 0 < holder.lease_left <= 20
        assert [(w.weight, w.rank) for w in stats.waiters] == [(2, 0), (1, 1)]
        assert all(0 < w.poll_left <= 20 for w in stats.waiters)
        nursery.cancel_scope.cancel()


async def test_every_script_is_idempotent_per_acquisition_id(redis_service: RedisServer) -> None:
    name = uuid.uuid4().hex
    async with open_redis(redis_service.url) as redis, RedisSemaphore(redis, name, 2) as sem:
        args = (2, 30_000)
        first = await sem._call("acquire", "x", 1, *args, "wait")
        assert first[0] == "granted"
        again = await sem._call("acquire", "x", 1, *args, "wait")
        assert (again[:2], again[3]) == (first[:2], 1)  # the same grant, the same token
        assert (await sem._call("heartbeat", "x"))[1] == first[1]
        assert await sem._call("acquire", "y", 2, *args, "try") == ["no"]
        assert await sem._call("acquire", "y", 2, *args, "try") == ["no"]
        assert (await sem._call("acquire", "z", 1, *args, "try"))[0] == "granted"
        assert await sem._call("leave", "x") == ["released"]
        # A replay (its reply lost, sent again) has the same answer, not a lost lease.
        assert await sem._call("leave", "x") == ["released"]
        # A late request of an acquisition that has left takes nothing.
        assert await sem._call("acquire", "x", 1, *args, "wait") == ["gone"]
        assert await sem._call("heartbeat", "x") == ["lost"]
        assert (await sem._call("acquire", "w", 2, *args, "wait"))[0] == "waiting"
        assert await sem._call("leave", "w") == ["withdrawn"]
        assert await sem._call("leave", "z") == ["released"]
        stats = await sem.statistics()
        assert (stats.held, stats.holders, stats.waiters) == (0, (), ())
        events = [(e["event"], e["id"]) for e in await log_of(redis, name)]
        assert events == [
            ("configured", "x"),  # the first request stored its client's settings
            ("granted", "x"),
            ("granted", "z"),
            ("released", "x"),
            ("withdrawn", "w"),
            ("released", "z"),
        ]


async def test_a_client_asking_other_settings_follows_redis_and_warns_once(
    redis_service: RedisServer, caplog: pytest.LogCaptureFixture
) -> None:
    name = uuid.uuid4().hex
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, name, 2, lease=10) as first,
        RedisSemaphore(redis, name, 3, lease=20) as other,
    ):
        async with first.hold():
            pass
        with caplog.at_level(logging.WARNING, logger="clonegate"):
            for _ in range(3):
                async with other.hold(2):  # waits for nothing: 2 of 2, Redis's limit
                    assert (other.limit, other.lease) == (2, 10.0)
                    assert await other.try_acquire() is None  # not 3: Redis's 2 is full
        [warning] = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
        assert "Redis holds limit 2, lease 10 s" in warning
        assert "asked for limit 3, lease 20 s" in warning
        stats = await first.statistics()
        assert (stats.limit, stats.lease, stats.held, stats.waiters) == (2, 10.0, 0, ())
        assert await other.configure(3) == (2, 10.0)  # the lease stored is kept
        async with first.hold(3):
            assert (first.limit, first.lease) == (3, 10.0)


async def test_cancellation_at_any_point_leaves_nothing_held_or_queued(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with open_redis(redis_service.url) as redis, RedisSemaphore(redis, name, 2) as sem:

        async def holding(weight: int) -> None:
            async with sem.hold(weight):
                await trio.sleep_forever()

        blocker = await sem.acquire(1)
        for step in range(60):  # deadlines from "at once" to after several polls
            with trio.move_on_after(step * 0.0005):
                async with trio.open_nursery() as nursery:
                    for weight in (1, 2, 1):
                        nursery.start_soon(holding, weight)
            # Whatever was granted before the cancel reached it was returned.
            stats = await sem.statistics()
            assert (stats.held, [h.id for h in stats.holders], stats.waiters) == (
                1,
                [blocker.id],
                (),
            )
        assert await blocker.release()


async def test_a_cancel_racing_a_grant_in_flight_returns_the_permit(own_redis: RedisServer) -> None:
    name = uuid.uuid4().hex
    async with open_redis(own_redis.url) as redis, RedisSemaphore(redis, name, 1) as sem:
        async with sem.hold():
            pass  # the semaphore exists; the next request would be granted at once
        own_redis.pause()
        scope = trio.CancelScope()

        async def acquire() -> None:
            with scope:
                await sem.acquire(1)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(acquire)
            await wait_all_tasks_blocked()  # the request is on its way to Redis
            scope.cancel()  # ...and the cancel comes before any reply
            await wait_all_tasks_blocked()  # the shielded leave is on its way too
            own_redis.resume()
        stats = await sem.statistics()
        assert (stats.held, stats.holders, stats.waiters) == (0, (), ())
        # Granted by the late request and released by the leave, or, if the leave ran
        # first (another connection), refused as an id that has left.
        events = [e["event"] for e in await log_of(redis, name)][3:]  # configured, 1st hold
        assert events in (["granted", "released"], [])
        assert scope.cancelled_caught


async def test_a_killed_holders_permit_returns_once_its_lease_ends(
    redis_service: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with child(redis_service.url, name, 1, 1.0, "hold", "1") as holder:
        held_id = (await holder.readline()).split()[1]
        async with (
            open_redis(redis_service.url) as redis,
            RedisSemaphore(redis, name, 1, lease=1.0) as sem,
        ):
            assert [h.id for h in (await sem.statistics()).holders] == [held_id]
            holder.kill()
            async with sem.hold() as lease:
                events = [(e["event"], e["id"]) for e in await log_of(redis, name)]
            # Reclaimed by its lease's end, not by anything else, and only then granted.
            assert events[-2:] == [("expired", held_id), ("granted", lease.id)]


async def test_a_killed_head_waiter_stops_blocking_the_queue(redis_service: RedisServer) -> None:
    name = uuid.uuid4().hex
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, name, 2, lease=1.0) as sem,
        child(redis_service.url, name, 2, 1.0, "wait", "2") as head,
    ):
        async with sem.hold(1):
            # The child waits for 2 of 2 while this process holds 1: it is the head.
            head_id = (await head.readline()).split()[1]
            async with trio.open_nursery() as nursery:
                nursery.start_soon(sem.acquire, 1)
                while len((await sem.statistics()).waiters) < 2:  # noqa: ASYNC110
                    await trio.sleep(0.005)
                assert (await sem.statistics()).waiters[0].id == head_id
                head.kill()
        # Behind a dead head (1 permit free), the waiter got in: the head was evicted.
        events = [e["event"] for e in await log_of(redis, name) if e["id"] == head_id]
        assert events == ["evicted"]


async def test_heartbeats_racing_releases_keep_the_books_exact(redis_service: RedisServer) -> None:
    name = uuid.uuid4().hex
    ran: dict[str, int] = {}  # each body's acquisition id -> the token it ran under
    refused = 0  # holds whose grant came after their lease ended: never run
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, name, 3, lease=0.03, on_lease_lost="finish") as sem,
    ):

        async def holder(rounds: int) -> None:
            nonlocal refused
            done = 0
            while done < rounds:
                try:
                    async with sem.hold(1) as lease:
                        ran[lease.id] = lease.token
                        await trio.sleep(0.001 * (done % 25))  # around the 10 ms heartbeat
                except LeaseLostError:
                    # On a loaded machine a grant can arrive after its 30 ms lease ended
                    # and could not be renewed: refused, never run (the log says
                    # expired), and the books below must be exact all the same.
                    refused += 1
                    continue
                done += 1

        async with trio.open_nursery() as nursery:
            for _ in range(4):
                nursery.start_soon(holder, 40)
        await sem._call("heartbeat", "-")  # any script reaps what a lost lease left
        stats = await sem.statistics()
        assert (stats.held, stats.holders, stats.waiters) == (0, (), ())
        log = await log_of(redis, name)
    assert len(ran) == 160
    # Replayed, the log gives the server's own count at every grant, never over the limit.
    held = 0
    grants: dict[str, list[tuple[int, str]]] = {}  # id -> (token, how it ended) per grant
    for e in log[1:]:  # after the first use's `configured`
        id, event = e["id"], e["event"]
        mine = grants.setdefault(id, [])
        if event == "granted":
            assert not mine or mine[-1][1], f"{id} granted while it held: {e}"
            mine.append((int(e["token"]), ""))
            held += int(e["weight"])
            assert int(e["held"]) == held <= 3, e
        elif event in ("released", "expired"):
            assert mine, f"{id} ended with no grant: {e}"
            assert not mine[-1][1], f"{id} ended twice: {e}"
            mine[-1] = (mine[-1][0], event)
            held -= int(e["weight"])
        else:  # nobody withdrew; a waiter stalled for a lease is evicted and re-queues
            assert event == "evicted", e
    assert held == 0
    # Every grant ended exactly once (released, or expired: a lease lost under load), and
    # each went to a hold whose body ran under its last grant. One stalled for a lease
    # after it was granted and before it polled saw nothing: that grant expired unseen,
    # and its next poll queued it again (at the tail), to be granted again.
    granted = {id for id, mine in grants.items() if mine}
    assert set(ran) <= granted
    # A hold refused for a late grant ran nothing: each of its grants expired unseen.
    unrun = granted - set(ran)
    assert len(unrun) <= refused
    for id in unrun:
        assert all(end == "expired" for _, end in grants[id]), grants[id]
    for id, token in ran.items():
        *unseen, (last, ended) = grants[id]
        assert last == token, grants[id]
        assert ended, grants[id]
        assert all(end == "expired" for _, end in unseen), grants[id]


async def test_after_redis_loses_its_data_holders_see_their_lease_lost(
    own_redis: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with open_redis(own_redis.url) as redis, RedisSemaphore(redis, name, 1, lease=1) as sem:
        with pytest.raises(LeaseLostError, match=r"lease on .* was lost"):  # noqa: PT012
            async with sem.hold():
                own_redis.restart()  # no persistence: the permit is gone from Redis
                await trio.sleep_forever()  # cancelled by the lost lease
        async with sem.hold() as lease:  # a new acquirer proceeds
            assert lease.token > 0


async def test_a_holder_cut_off_from_redis_stops_at_its_local_deadline(
    own_redis: RedisServer,
) -> None:
    name = uuid.uuid4().hex
    async with open_redis(own_redis.url) as redis, RedisSemaphore(redis, name, 1, lease=1) as sem:
        try:
            with pytest.raises(LeaseLostError):  # noqa: PT012
                async with sem.hold():
                    own_redis.pause()
                    await trio.sleep_forever()
            # Redis never answered: the holder stopped by its own clock.
            assert own_redis.process is not None
            assert own_redis.process.poll() is None
        finally:
            own_redis.resume()
        async with sem.hold():
            pass


async def test_an_unreachable_redis_is_a_clear_error_not_a_hang(own_redis: RedisServer) -> None:
    with pytest.raises(RedisUnavailableError, match=r"Redis at redis://\*\*\*@127.0.0.1"):
        async with open_redis(f"redis://user:secret@127.0.0.1:{free_port()}/0"):
            pass  # pragma: no cover
    own_redis.pause()
    try:
        with pytest.raises(RedisUnavailableError):
            async with open_redis(own_redis.url, reply_timeout=0.5):
                pass  # pragma: no cover
    finally:
        own_redis.resume()


@pytest.mark.slow
async def test_stress_processes_never_exceed_the_limit_and_grant_in_arrival_order(
    redis_service: RedisServer,
) -> None:
    name, limit = uuid.uuid4().hex, 5
    args = (redis_service.url, name, limit, 1.0, "stress", "4", "30")
    async with (
        open_redis(redis_service.url) as redis,
        RedisSemaphore(redis, name, limit, lease=1.0) as sem,
        child(*args, "1") as first,
        child(*args, "2") as second,
        child(*args, "3") as doomed,
    ):
        while len(await log_of(redis, name)) < 40:  # noqa: ASYNC110
            await trio.sleep(0.01)
        doomed.kill()  # mid-run: holding or waiting, its permits return by lease
        assert await first.readline() == "done"
        assert await second.readline() == "done"
        while (await sem.statistics()).held:
            await sem._call("heartbeat", "-")  # each script reaps expired leases
            await trio.sleep(0.05)
        events = await log_of(redis, name)
    grants = [e for e in events if e["event"] == "granted"]
    assert len(grants) > 40
    assert all(int(e["held"]) <= limit for e in grants)
    arrivals = [int(e["arrival"]) for e in grants]
    assert arrivals == sorted(arrivals)  # FIFO: nobody overtook an earlier request
    ended = [e for e in events if e["event"] in ("released", "expired")]
    assert sorted(e["id"] for e in ended) == sorted(e["id"] for e in grants)

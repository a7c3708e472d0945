"""The semaphore behaviour table, run against both backends: the local
``WeightedSemaphore`` and ``RedisSemaphore`` on a real redis-server (ADR 0015).

What differs is how a test knows that a request is queued: in-process, every task is
blocked; with Redis, the server lists it among the waiters.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from clonegate import (
    AnalyzeUseCase,
    ClonedSource,
    Limiter,
    Option,
    RepositoryReport,
    WeightedSemaphore,
    with_global_limiter,
    with_host_limit,
    with_host_limiter,
    with_keep_clones,
    with_max_concurrent_clones,
)
from clonegate.cluster import Lease, RedisSemaphore, open_redis

from .support.fakes import FakeAnalyzer, FakeVCS
from .support.redis_server import RedisServer


class Driver(Protocol):
    async def acquire(self, n: int) -> Any: ...
    async def try_acquire(self, n: int) -> Any | None: ...
    async def release(self, handle: Any) -> None: ...
    async def state(self) -> tuple[int, int]: ...  # (held, requests waiting)
    async def until_waiting(self, count: int) -> None: ...


class LocalDriver:
    def __init__(self, limit: int) -> None:
        self.semaphore = WeightedSemaphore(limit)

    async def acquire(self, n: int) -> Any:
        await self.semaphore.acquire(n)
        return n

    async def try_acquire(self, n: int) -> Any | None:
        await trio.lowlevel.checkpoint()
        return n if self.semaphore.try_acquire(n) else None

    async def release(self, handle: Any) -> None:
        self.semaphore.release(handle)

    async def state(self) -> tuple[int, int]:
        stats = self.semaphore.statistics()
        return stats.held, stats.tasks_waiting

    async def until_waiting(self, count: int) -> None:
        await wait_all_tasks_blocked()
        assert self.semaphore.statistics().tasks_waiting == count


class RedisDriver:
    def __init__(self, semaphore: RedisSemaphore) -> None:
        self.semaphore = semaphore

    async def acquire(self, n: int) -> Any:
        return await self.semaphore.acquire(n)

    async def try_acquire(self, n: int) -> Any | None:
        return await self.semaphore.try_acquire(n)

    async def release(self, handle: Any) -> None:
        assert isinstance(handle, Lease)
        assert await handle.release()

    async def state(self) -> tuple[int, int]:
        stats = await self.semaphore.statistics()
        assert stats.held == sum(h.weight for h in stats.holders)
        return stats.held, len(stats.waiters)

    async def until_waiting(self, count: int) -> None:
        # The server's own list is the record of who is queued: poll it.
        while len((await self.semaphore.statistics()).waiters) != count:  # noqa: ASYNC110
            await trio.sleep(0.005)


MakeDriver = Callable[[int], AbstractAsyncContextManager[Driver]]


@pytest.fixture(params=["local", "redis"])
def make_driver(request: pytest.FixtureRequest) -> MakeDriver:
    if request.param == "local":

        @asynccontextmanager
        async def local(limit: int) -> AsyncIterator[Driver]:
            yield LocalDriver(limit)

        return local
    server: RedisServer = request.getfixturevalue("redis_service")

    @asynccontextmanager
    async def shared(limit: int) -> AsyncIterator[Driver]:
        async with (
            open_redis(server.url) as redis,
            RedisSemaphore(redis, uuid.uuid4().hex, limit, lease=10) as semaphore,
        ):
            yield RedisDriver(semaphore)

    return shared


class Grants:
    """Who was granted, in the order they learned it."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.held: dict[str, Any] = {}
        self._changed = trio.Event()

    async def take(self, driver: Driver, name: str, n: int) -> None:
        self.held[name] = await driver.acquire(n)
        self.order.append(name)
        self._changed.set()
        self._changed = trio.Event()

    async def until(self, count: int) -> None:
        while len(self.order) < count:
            await self._changed.wait()


async def test_waiters_are_granted_in_arrival_order(make_driver: MakeDriver) -> None:
    async with make_driver(3) as driver, trio.open_nursery() as nursery:
        first = await driver.acquire(3)
        grants = Grants()
        for count, (name, weight) in enumerate([("a", 2), ("b", 1), ("c", 1)], 1):
            nursery.start_soon(grants.take, driver, name, weight)
            await driver.until_waiting(count)
        await driver.release(first)
        await driver.until_waiting(1)
        await grants.until(2)  # granted by the release; each waiter learns it by itself
        # Granted together, woken in any order: the first two arrivals, not "c".
        assert sorted(grants.order) == ["a", "b"]
        assert await driver.state() == (3, 1)
        await driver.release(grants.held["a"])
        await driver.until_waiting(0)
        await grants.until(3)
        assert grants.order[2] == "c"
        for name in "bc":
            await driver.release(grants.held[name])
        assert await driver.state() == (0, 0)


async def test_a_heavy_head_blocks_lighter_requests_behind_it(make_driver: MakeDriver) -> None:
    async with make_driver(4) as driver, trio.open_nursery() as nursery:
        first = await driver.acquire(3)
        grants = Grants()
        nursery.start_soon(grants.take, driver, "heavy", 2)
        await driver.until_waiting(1)
        nursery.start_soon(grants.take, driver, "light", 1)
        await driver.until_waiting(2)
        # One permit is free, and still neither the light request nor a newcomer gets it.
        assert await driver.try_acquire(1) is None
        assert await driver.state() == (3, 2)
        assert grants.order == []
        await driver.release(first)
        await driver.until_waiting(0)
        await grants.until(2)
        assert sorted(grants.order) == ["heavy", "light"]
        for name in grants.order:
            await driver.release(grants.held[name])


async def test_a_cancelled_head_lets_the_waiters_behind_it_in(make_driver: MakeDriver) -> None:
    async with make_driver(4) as driver, trio.open_nursery() as nursery:
        first = await driver.acquire(3)
        grants = Grants()
        head_scope = trio.CancelScope()

        async def head() -> None:
            with head_scope:
                await grants.take(driver, "head", 2)

        nursery.start_soon(head)
        await driver.until_waiting(1)
        nursery.start_soon(grants.take, driver, "behind", 1)
        await driver.until_waiting(2)
        head_scope.cancel()
        await driver.until_waiting(0)
        await grants.until(1)
        assert grants.order == ["behind"]
        assert await driver.state() == (4, 0)  # the cancelled head holds nothing
        await driver.release(grants.held["behind"])
        await driver.release(first)
        assert await driver.state() == (0, 0)


async def test_try_acquire_takes_free_permits_only(make_driver: MakeDriver) -> None:
    async with make_driver(2) as driver:
        first = await driver.try_acquire(2)
        assert first is not None
        assert await driver.try_acquire(1) is None
        assert await driver.state() == (2, 0)  # a failed try leaves no trace
        await driver.release(first)
        zero = await driver.try_acquire(0)
        assert zero is not None
        await driver.release(zero)
        assert await driver.state() == (0, 0)


async def test_a_request_heavier_than_the_limit_blocks_nobody(make_driver: MakeDriver) -> None:
    async with make_driver(2) as driver, trio.open_nursery() as nursery:
        grants = Grants()
        nursery.start_soon(grants.take, driver, "oversized", 3)
        await driver.until_waiting(1)
        light = await driver.acquire(1)
        also = await driver.try_acquire(1)
        assert also is not None
        assert await driver.state() == (2, 1)
        nursery.cancel_scope.cancel()
        await driver.release(light)
        await driver.release(also)
    assert grants.order == []


async def test_acquire_in_a_cancelled_scope_raises_even_with_free_permits(
    make_driver: MakeDriver,
) -> None:
    async with make_driver(2) as driver:
        with trio.CancelScope() as scope:
            scope.cancel()
            await driver.acquire(1)
            pytest.fail("acquire returned in a cancelled scope")  # pragma: no cover
        assert await driver.state() == (0, 0)


class HostCountingVCS(FakeVCS):
    """FakeVCS that also records, per host, the most clones in flight at once."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp, delay=0.02)
        self.by_host: Counter[str] = Counter()
        self.host_peak: Counter[str] = Counter()

    async def clone(self, url: str, *args: Any, **kwargs: Any) -> ClonedSource:
        host = url.split("/")[2]
        self.by_host[host] += 1
        self.host_peak[host] = max(self.host_peak[host], self.by_host[host])
        try:
            return await super().clone(url, *args, **kwargs)
        finally:
            self.by_host[host] -= 1


@pytest.mark.parametrize("backend", ["local", "redis"])
async def test_per_host_and_global_limits_hold_together(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    urls = [f"https://{host}.example/org/r{i}.git" for i in range(6) for host in "abc"]
    vcs = HostCountingVCS(tmp_path)

    async def run(host_limit: Option, global_limiter: Limiter) -> list[RepositoryReport]:
        options = (with_max_concurrent_clones(4), with_keep_clones(), host_limit)
        uc = AnalyzeUseCase(*options, with_global_limiter(global_limiter), vcs=vcs,
                            analyzer=FakeAnalyzer())  # fmt: skip
        async with uc.analyze_many(urls) as batch:
            return [report async for report in batch]

    if backend == "local":
        reports = await run(with_host_limit(1), WeightedSemaphore(2))
    else:
        server: RedisServer = request.getfixturevalue("redis_service")
        prefix = uuid.uuid4().hex
        async with open_redis(server.url) as redis, trio.open_nursery() as nursery:

            def per_host(host: str) -> RedisSemaphore:
                return RedisSemaphore(redis, f"{prefix}:{host}", 1, nursery=nursery)

            shared = RedisSemaphore(redis, f"{prefix}:all", 2, nursery=nursery)
            reports = await run(with_host_limiter(per_host), shared)
            nursery.cancel_scope.cancel()
    assert sorted(r.status for r in reports) == ["ok"] * len(urls)
    assert set(vcs.host_peak) == {"a.example", "b.example", "c.example"}
    assert max(vcs.host_peak.values()) == 1  # one clone per host at a time
    assert 1 <= vcs.peak <= 2  # and two at most in all, although -j is 4

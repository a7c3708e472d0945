"""The coredis client a Redis URL asks for: one server, a Redis Cluster, or the master
Redis Sentinel names (ADR 0015, "Redis Cluster and Sentinel").

Every key a clonegate script or command touches is under one hash tag per purpose
(``{clonegate}`` for the queue, ``{clonegate:sem:NAME}`` per semaphore), so a cluster
client routes each script to the one node that owns its slot.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeAlias, TypeVar

import anyio
import coredis
import coredis.exceptions
import trio
from coredis.connection import TCPLocation
from coredis.pool import SentinelConnectionPool
from coredis.retry import RetryPolicy

from .url import RedisURL

__all__ = ["Redis", "connected_client"]

logger = logging.getLogger("clonegate")

AnyStr = TypeVar("AnyStr", str, bytes)
Redis: TypeAlias = coredis.Redis[AnyStr] | coredis.RedisCluster[AnyStr]
R = TypeVar("R")

# A master that a failover demoted answers writes with READONLY (or, to a new
# connection, a role that is not master): the command did not run, and the sentinels
# already name the new master. Asked again this many times, a moment apart.
FAILOVER_RETRIES = 10
FAILOVER_DELAY = 0.2
FOLLOW_EVERY = 0.5
REPLICA_WAIT_MS = 1000
_DEMOTED = (coredis.exceptions.ReadOnlyError, coredis.exceptions.StalePrimaryError)


@asynccontextmanager
async def connected_client(
    url: RedisURL, *, reply_timeout: float, retry_policy: RetryPolicy
) -> AsyncIterator[Redis[str]]:
    """A client for ``url`` (see :mod:`.url`), open for the body; credentials decoded
    and given apart from any URL (coredis would use them as written)."""
    timeouts = {"connect_timeout": reply_timeout, "stream_timeout": reply_timeout}
    credentials = {"username": url.username, "password": url.password}
    sentinel_kwargs = timeouts | (credentials if url.sentinel_auth else {})
    if url.kind == "cluster":
        cluster = coredis.RedisCluster(
            startup_nodes=[TCPLocation(host, port) for host, port in url.nodes],
            username=url.username,
            password=url.password,
            decode_responses=True,
            connect_timeout=reply_timeout,
            stream_timeout=reply_timeout,
            retry_policy=retry_policy,
        )
        async with cluster:
            with _replicated(cluster, url.replicas):
                yield cluster
    elif url.kind == "sentinel":
        sentinel = coredis.Sentinel(
            [TCPLocation(host, port) for host, port in url.nodes],
            sentinel_kwargs=sentinel_kwargs,
            decode_responses=True,
            connect_timeout=reply_timeout,
            stream_timeout=reply_timeout,
            username=url.username,
            password=url.password,
        )
        async with sentinel:
            primary = sentinel.primary_for(url.service, db=url.db)
            pool = primary.connection_pool
            assert isinstance(pool, SentinelConnectionPool)
            primary.retry_policy = FollowPrimary(pool, retry_policy)
            async with primary, trio.open_nursery() as nursery:
                nursery.start_soon(_follow_master, pool)
                with _replicated(primary, url.replicas):
                    yield primary
                nursery.cancel_scope.cancel()
    else:
        client = coredis.Redis.from_url(
            url.without_credentials,
            decode_responses=True,
            retry_policy=retry_policy,
            connect_timeout=reply_timeout,
            stream_timeout=reply_timeout,
            username=url.username,
            password=url.password,
        )
        async with client:
            yield client


@contextmanager
def _replicated(client: Redis[str], replicas: int) -> Iterator[None]:
    """With ``replicas``, every command of the body's tasks (and of the tasks they start)
    is followed by WAIT: its reply counts only once that many replicas have its writes,
    within REPLICA_WAIT_MS, else coredis raises ReplicationError (nothing is undone:
    every clonegate script can run again)."""
    if replicas <= 0:
        yield
        return
    with client.ensure_replication(replicas, REPLICA_WAIT_MS):
        yield


async def _follow_master(pool: SentinelConnectionPool) -> None:
    """Ask the sentinels every FOLLOW_EVERY seconds which master they name; when it
    changed, the pool drops its connections, and the next ones go to the new master.
    A master demoted by a failover goes on accepting writes until the sentinels
    reconfigure it (10 s and more, measured): writes a replica never sees."""
    while True:
        await trio.sleep(FOLLOW_EVERY)
        try:
            await pool.get_primary_location()  # disconnects the pool on a change
        except Exception as exc:  # the sentinels unreachable: ask again later
            logger.debug("the sentinels did not name the master: %s", exc)


class FollowPrimary(RetryPolicy):
    """``inner``, and then, for a command the old master refused after a failover, the
    same command again on a new connection, which the pool opens to the master the
    sentinels name now (coredis keeps its connections to the old one otherwise)."""

    def __init__(self, pool: SentinelConnectionPool, inner: RetryPolicy) -> None:
        super().__init__(inner.retryable_exceptions, retries=0)
        self.pool = pool
        self.inner = inner

    def delay(self, attempt_number: int) -> float:
        return FAILOVER_DELAY

    async def call_with_retries(
        self,
        func: Callable[..., Awaitable[R]],
        before_hook: Callable[..., Awaitable[Any] | None] | None = None,
        failure_hook: Any = None,
    ) -> R:
        for attempt in range(FAILOVER_RETRIES + 1):
            try:
                return await self.inner.call_with_retries(func, before_hook, failure_hook)
            except _DEMOTED:
                if attempt == FAILOVER_RETRIES:
                    raise
            self.pool.disconnect()
            await anyio.sleep(self.delay(attempt))
        raise AssertionError("unreachable")

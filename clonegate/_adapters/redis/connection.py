"""Opening a Redis client for the cluster mode, with errors that say what happened.

coredis reports an unreachable server from inside its own task group, as an
``ExceptionGroup``; callers here get one :exc:`RedisUnavailableError` naming the
server (password redacted) instead, and never a hang: connecting and every reply
are bounded by ``timeout``.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import coredis
import coredis.exceptions
import trio

from ..._domain.limits import LimiterUnavailableError
from ..._domain.urls import redact
from .clients import Redis, connected_client
from .url import parse_redis_url

__all__ = ["Redis", "RedisUnavailableError", "open_redis", "redis_call", "redis_url"]

logger = logging.getLogger("clonegate")

T = TypeVar("T")
# Errors meaning "no usable answer from this server": the request may or may not have
# run there (every script is idempotent, so running it again is safe). anyio's (the
# I/O layer coredis is built on): the client's connection was closed under the request
# by a cancellation (a second signal, ADR 0015).
UNAVAILABLE = (
    coredis.exceptions.ConnectionError,
    TimeoutError,
    OSError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
)


class RedisUnavailableError(LimiterUnavailableError):
    """Redis cannot be reached, stopped answering, or refused a command."""


# Refusals that mean "not now": a failover under way (a demoted primary is read-only, a
# cluster without all its slots), or a server still loading its data after a restart.
PASSING = (
    coredis.exceptions.ReadOnlyError,
    coredis.exceptions.ClusterDownError,
    coredis.exceptions.TryAgainError,
)
PASSING_PREFIXES = ("LOADING", "MASTERDOWN", "NOREPLICAS")


def redis_url(url: str | None, password: str | None = None) -> str:
    """``url``, or ``$CLONEGATE_REDIS_URL``, validated, with ``password`` if given; a
    ValueError that says why (and never shows the credentials) when neither is set,
    it is not a Redis URL, or it has a password too."""
    found = url or os.environ.get("CLONEGATE_REDIS_URL")
    if not found:
        raise ValueError("no Redis URL: give --redis URL or set CLONEGATE_REDIS_URL")
    parsed = parse_redis_url(found)
    if password is None:
        return found
    if parsed.password is not None:
        raise ValueError(f"the Redis URL {parsed} has a password already: give it once")
    return parsed.with_password(password)


# What a Redis Cluster or the sentinels answer when the topology is not what the client
# expects (a redirect, a cluster down, no master named): never shown raw.
TOPOLOGY = (
    coredis.exceptions.RedisClusterError,
    coredis.exceptions.SentinelError,
    coredis.exceptions.ReplicationError,
)
# What opening a client can fail with: one error line, never a traceback (a cluster with
# no reachable node fails in coredis's own context manager, not in a request).
_FAILED = (*UNAVAILABLE, *TOPOLOGY, RedisUnavailableError)


def _unavailable(where: str, exc: BaseException) -> RedisUnavailableError:
    error = RedisUnavailableError(f"{where}: {_describe(exc)}")
    # Retried with patience (clonegate.cluster.Patience) unless the same request would be
    # refused again (a script error, a wrong password, a missing permission, a cluster
    # node given as a plain server).
    error.retryable = not isinstance(exc, coredis.exceptions.ResponseError) or (
        isinstance(exc, PASSING) or str(exc).startswith(PASSING_PREFIXES)
    )
    return error


def _describe(exc: BaseException) -> str:
    text = redact(str(exc)) or type(exc).__name__
    if isinstance(exc, coredis.exceptions.AskError):  # MOVED or ASK: a cluster node
        return (
            f"it is a node of a Redis Cluster, which serves this key at {exc.host}:{exc.port}: "
            "give every node's address as redis+cluster://host:port[,host:port...]"
        )
    if isinstance(exc, coredis.exceptions.ClusterCrossSlotError):
        return f"keys of one request in two slots of the Redis Cluster (a bug): {text}"
    if isinstance(exc, coredis.exceptions.RedisClusterError):
        return f"the Redis Cluster cannot serve the request now: {text}"
    if isinstance(exc, coredis.exceptions.ReplicationError):
        return f"a write did not reach the replicas the URL asks for (replicas=N): {text}"
    if isinstance(exc, coredis.exceptions.SentinelError):
        return f"the sentinels name no usable master now: {text}"
    return text


@asynccontextmanager
async def open_redis(url: str, *, reply_timeout: float = 10.0) -> AsyncIterator[Redis[str]]:
    """A connected client for ``url`` (``redis://[user:password@]host:port/db``, user
    name and password percent-encoded: see :func:`parse_redis_url`).

    Raises ValueError if ``url`` is not a Redis URL, :exc:`RedisUnavailableError` if
    the server does not answer a PING within ``reply_timeout`` seconds; the same bound
    applies to every reply (so blocking reads must ask for less).
    """
    parsed = parse_redis_url(url)
    client_for_url = connected_client(
        parsed,
        reply_timeout=reply_timeout,
        # Every clonegate script is idempotent; a reply lost to a reset is retried once,
        # at once. A reply that did not come in time is left to the caller's patience:
        # retried here too, a silent Redis cost two reply bounds per request.
        retry_policy=coredis.retry.ConstantRetryPolicy(UNAVAILABLE[:1], retries=1, delay=0.05),
    )
    where = f"Redis at {parsed.redacted}"
    inside: BaseException | None = None  # what the body raised
    try:
        async with client_for_url as client:
            await redis_call(where, client.ping())
            if parsed.kind != "cluster":
                await _check_not_cluster(where, client)
            await _check_eviction(client)
            try:
                yield client
            except BaseException as exc:
                inside = exc
                raise
    except BaseException as exc:
        leaves = _leaves(exc)
        if inside is not None and all(leaf is inside for leaf in leaves):
            # coredis's task group wraps what its body raised: give it back as raised.
            raise inside from None
        unavailable = [leaf for leaf in leaves if isinstance(leaf, _FAILED)]
        if unavailable and all(
            isinstance(leaf, (*_FAILED, trio.Cancelled)) or leaf is inside for leaf in leaves
        ):
            first = unavailable[0]
            if isinstance(first, RedisUnavailableError):
                raise first from None
            raise _unavailable(where, first) from None
        raise


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in _leaves(sub)]
    return [exc]


async def redis_call(where: str, request: Awaitable[T]) -> T:
    """Await one request, turning a connection failure into :exc:`RedisUnavailableError`
    whose message starts with ``where``."""
    try:
        return await request
    except (*UNAVAILABLE, coredis.exceptions.ResponseError, *TOPOLOGY) as exc:
        raise _unavailable(where, exc) from None
    except BaseExceptionGroup as group:
        leaves = _leaves(group)
        if all(isinstance(leaf, UNAVAILABLE) for leaf in leaves):
            raise _unavailable(where, leaves[0]) from None
        raise


async def _check_not_cluster(where: str, client: Redis[Any]) -> None:
    # Through one node of a cluster, only the keys of its own slots work: every other
    # request would be a redirect (issue 39). Said once, at the start.
    try:
        info = await redis_call(where, client.info("cluster"))
    except RedisUnavailableError:  # INFO disabled on managed services
        return
    if str(info.get("cluster_enabled", "0")) == "1":
        raise RedisUnavailableError(
            f"{where}: it is a node of a Redis Cluster: give its nodes' addresses as "
            "redis+cluster://host:port[,host:port...]"
        )


async def _check_eviction(client: Redis[Any]) -> None:
    # Evicting a semaphore's keys silently frees every permit (ADR 0015).
    if isinstance(client, coredis.RedisCluster):  # CONFIG goes to one node: each master
        for node in client.primaries:
            async with node:
                await _check_eviction(node)
        return
    try:
        policy = (await client.config_get(["maxmemory-policy"])).get("maxmemory-policy")
    except coredis.exceptions.ResponseError:  # CONFIG disabled on managed services
        return
    if policy not in (None, "noeviction"):
        logger.warning(
            "Redis maxmemory-policy is %s: evicted keys would free the cluster limit's "
            "permits and lose jobs; use noeviction or a dedicated Redis",
            policy,
        )

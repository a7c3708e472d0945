"""A cluster worker's per-host limits (issue 43, ADR 0019): ``--host-limit``,
``--adaptive`` and ``--host-rate``, each one view of the host for every worker, in Redis."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Annotated

import typer

import clonegate
from clonegate import Limiter, cluster

if TYPE_CHECKING:
    from clonegate.cluster import Patience, Redis, RedisSemaphore

__all__ = ["AdaptiveOption", "HostLimitOption", "HostRateOption", "host_options"]


def _checked_rate(text: str | None) -> str | None:
    if text is not None:
        try:
            cluster.RedisTokenBucket.parse_rate(text)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
    return text


HostLimitOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Clones at once from one host, cluster-wide, if Redis holds none for the host "
        "yet (with --adaptive: the most it adapts up to).",
        metavar="K",
    ),
]
AdaptiveOption = Annotated[
    bool,
    typer.Option(
        help="Adapt each host's limit to its pushback, cluster-wide: fewer clones at once "
        "after a 429, a 503 with Retry-After or a burst of resets, more after successes, "
        "between 1 and --host-limit (or -j).",
    ),
]
HostRateOption = Annotated[
    str | None,
    typer.Option(
        help="At most N clone attempts per second, minute or hour per host, cluster-wide, "
        "spaced (no burst), if Redis holds no rate for the host yet.",
        metavar="N/s|N/min|N/h",
        callback=_checked_rate,
    ),
]


class _RatedHost:
    """A host's limit (if any), then a token of its rate, for each clone attempt.

    The token is taken once the host's permit is held, so a clone never holds a token
    while it waits for the host (a burst the server would see)."""

    def __init__(self, limit: Limiter | None, bucket: cluster.RedisTokenBucket) -> None:
        self._limit = limit
        self._bucket = bucket

    @asynccontextmanager
    async def hold(self, n: int = 1) -> AsyncIterator[object]:
        if self._limit is None:
            await self._bucket.take()
            yield None
            return
        async with self._limit.hold(n) as permit:
            await self._bucket.take()
            yield permit


def host_options(
    semaphore: Callable[[str, int], RedisSemaphore],
    client: Redis[str],
    patience: Patience,
    *,
    host_limit: int | None,
    adaptive: bool,
    host_rate: str | None,
    jobs: int,
) -> list[clonegate.Option]:
    """The use case's options for the worker's per-host limits. Without ``--adaptive``
    the worker adapts nothing, not even in its own process: a host's limit is one view
    for every worker, or none (ADR 0019)."""
    if host_limit is None and not adaptive and host_rate is None:
        return [clonegate.with_adaptive(False)]
    ceiling = min(host_limit, jobs) if host_limit is not None else jobs

    def limiter_for(host: str) -> Limiter:
        name = f"host:{host}"
        limit: Limiter | None = None
        if adaptive:
            limit = cluster.RedisAdaptiveLimit(semaphore(name, ceiling))
        elif host_limit is not None:
            limit = semaphore(name, host_limit)
        if host_rate is None:
            assert limit is not None  # one of the three was given
            return limit
        bucket = cluster.RedisTokenBucket(client, name, host_rate, patience=patience)
        return _RatedHost(limit, bucket)

    return [clonegate.with_adaptive(adaptive), clonegate.with_host_limiter(limiter_for)]

"""Each host's own limits in this process, from the options (issue 43, ADR 0019): a
clone limit (adaptive by default) and a rate, one of each per host the run meets."""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from .._domain.adaptive import AdaptiveLimit, AdaptiveLimitStatistics, LimitChange
from .._domain.limits import Limiter
from .._domain.rate import TokenBucket
from .._domain.semaphore import WeightedSemaphore
from .._domain.urls import visible
from .options import UseCaseConfig

__all__ = ["HostLimits"]

logger = logging.getLogger("clonegate")


class _PerClone:
    """A host limit counted in clones: each clone holds 1, whatever its weight.

    ``with_host_limit(3)`` says three clones, and an adaptive limit can come down to
    1: a clone weighing more than the limit (``with_clone_weight``) would wait forever
    for a size that never comes (ADR 0002).
    """

    __slots__ = ("_limit",)

    def __init__(self, limit: AdaptiveLimit | WeightedSemaphore) -> None:
        self._limit = limit

    def hold(self, n: int = 1) -> AbstractAsyncContextManager[object]:
        return self._limit.hold(1)


class HostLimits:
    """The host limits and rates :class:`CloneGate` holds, built from ``config``.

    - A ``host_limiter`` (``with_host_limiter``: a cluster's shared limit) is used as
      given: how it adapts is its own business.
    - Else, with ``adaptive`` (the default), one :class:`AdaptiveLimit` per host,
      from a ceiling of ``host_limit`` or ``-j``, whichever is smaller, down to 1.
    - Else, with ``host_limit``, a fixed semaphore of that size per host.
    - With ``host_rate``, one :class:`TokenBucket` per host (no burst).

    Each is made the first time its host asks (hosts are few; entries are small).
    """

    def __init__(
        self, config: UseCaseConfig, on_change: Callable[[str, LimitChange], None] | None = None
    ) -> None:
        jobs = config.max_concurrent_clones
        self.ceiling = min(config.host_limit or jobs, jobs)
        self._custom = config.host_limiter
        self._adaptive = config.adaptive
        self._fixed = config.host_limit is not None
        self._rate = config.host_rate
        self._limits: dict[str, AdaptiveLimit] = {}
        self._buckets: dict[str, TokenBucket] = {}
        self._sizes: dict[str, int] = {}
        self._on_change = on_change  # each host's limit change, after the log line

    @property
    def limiter_for(self) -> Callable[[str], Limiter] | None:
        """The gate's ``host_limiter``: None where no host has a limit."""
        if self._custom is not None:
            return self._custom
        return self._limiter if self._adaptive or self._fixed else None

    @property
    def bucket_for(self) -> Callable[[str], TokenBucket] | None:
        """The gate's ``host_rate``: None without a rate."""
        return self._bucket if self._rate is not None else None

    def statistics(self) -> dict[str, AdaptiveLimitStatistics]:
        """Each adaptive host limit's snapshot, by host. Not a checkpoint."""
        return {host: limit.statistics() for host, limit in self._limits.items()}

    def _limiter(self, host: str) -> Limiter:
        if not self._adaptive:
            return _PerClone(WeightedSemaphore(self.ceiling))
        self._sizes[host] = self.ceiling

        def changed(change: LimitChange) -> None:
            before, self._sizes[host] = self._sizes[host], change.size
            logger.info(
                "host %s: clone limit %d -> %d (%s)",
                visible(host),
                before,
                change.size,
                change.signal,
            )
            if self._on_change is not None:
                self._on_change(host, change)

        limit = self._limits[host] = AdaptiveLimit(self.ceiling, on_change=changed)
        return _PerClone(limit)

    def _bucket(self, host: str) -> TokenBucket:
        assert self._rate is not None
        if host not in self._buckets:
            self._buckets[host] = TokenBucket(self._rate)
        return self._buckets[host]

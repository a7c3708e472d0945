"""``ClusterSettings``: the cluster adapters' timing, each default written here once."""

from __future__ import annotations

from dataclasses import dataclass

from ..._domain.checks import positive_seconds
from ..settings import setting

__all__ = ["CLUSTER_DEFAULTS", "ClusterSettings"]


@dataclass(frozen=True, slots=True)
class ClusterSettings:
    """The settings of the cluster mode's adapters on Redis (ADR 0015, ADR 0017):
    ``lease``, seconds a :class:`clonegate.RedisSemaphore` permit lasts without a
    heartbeat (when Redis holds no lease yet); ``claim_idle``, seconds before a
    :class:`clonegate.RedisWorkQueue` takes over a dead worker's job."""

    lease: float = setting(30.0, "Seconds a cluster permit lasts without a heartbeat.")
    claim_idle: float = setting(60.0, "Seconds before a dead worker's job is taken over.")

    def __post_init__(self) -> None:
        positive_seconds("lease", self.lease)
        positive_seconds("claim_idle", self.claim_idle)


CLUSTER_DEFAULTS = ClusterSettings()

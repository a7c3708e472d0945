"""What a :class:`RedisSemaphore` reads from Redis: its stored settings (the limit and
the lease, configuration in Redis: ADR 0015) and a snapshot of its holders and waiters."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "RedisHolder",
    "RedisSemaphoreStatistics",
    "RedisWaiter",
    "describe",
    "ms",
    "setting",
    "statistics_of",
]


@dataclass(frozen=True, slots=True)
class RedisHolder:
    id: str  # "<host>:<pid>:<random>:<n>", the holder's acquisition id
    weight: int
    token: int  # the grant's fencing token
    lease_left: float  # seconds until its lease ends unless it heartbeats


@dataclass(frozen=True, slots=True)
class RedisWaiter:
    id: str
    weight: int
    rank: int  # 0 is the head of the queue
    poll_left: float  # seconds until it is evicted unless it polls


@dataclass(frozen=True, slots=True)
class RedisSemaphoreStatistics:
    """A snapshot read from Redis in one script; ``limit`` is -1 before first use."""

    name: str
    limit: int
    lease: float
    held: int
    holders: tuple[RedisHolder, ...]
    waiters: tuple[RedisWaiter, ...]


def statistics_of(name: str, reply: list[Any]) -> RedisSemaphoreStatistics:
    """The STATISTICS script's reply, read."""
    limit, lease, held, now, holders, waiters = reply
    return RedisSemaphoreStatistics(
        name=name,
        limit=int(limit),
        lease=int(lease) / 1000,
        held=int(held),
        holders=tuple(
            RedisHolder(holders[i], int(holders[i + 1]), int(holders[i + 2]),
                        (int(holders[i + 3]) - now) / 1000)
            for i in range(0, len(holders), 4)
        ),
        waiters=tuple(
            RedisWaiter(waiters[i], int(waiters[i + 1]), i // 4,
                        (int(waiters[i + 3]) - now) / 1000)
            for i in range(0, len(waiters), 4)
        ),
    )  # fmt: skip


def ms(seconds: float) -> int:
    """Seconds as the scripts' whole milliseconds, at least 1."""
    return max(1, round(seconds * 1000))


def setting(limit: int, lease_ms: int) -> tuple[int, float]:
    """A stored (limit, lease ms) as (limit, lease s); -1 for what was not stored."""
    return int(limit), int(lease_ms) / 1000 if lease_ms >= 0 else -1.0


def describe(limit: int, lease_ms: int) -> str:
    """One setting in words, as a warning names it."""
    return f"limit {limit}, lease {lease_ms / 1000:g} s"

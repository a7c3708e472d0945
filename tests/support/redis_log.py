"""RedisSemaphore's log on the server, as the tests read it: every event in order, and
the grants replayed from it (ADR 0015)."""

from __future__ import annotations

from typing import Any


async def log_of(redis: Any, name: str) -> list[dict[str, str]]:
    return [dict(e.field_values) for e in await redis.xrange(f"{{clonegate:sem:{name}}}:log")]


def replay(log: list[dict[str, str]]) -> list[tuple[str, int, int]]:
    """Each grant as (id, the weight held after it, the limit in force), the count and
    the limit both replayed from the log's own events, not read from the grant's."""
    held, limit, grants = 0, -1, []
    for e in log:
        event, weight = e["event"], int(e["weight"])
        if event in ("configured", "adapted"):  # adapted: an adaptive limit's change
            limit = int(e["limit"])
        elif event == "reset":
            limit = -1
        elif event == "granted":
            held += weight
            grants.append((e["id"], held, limit))
        elif event in ("released", "expired"):
            held -= weight
    return grants

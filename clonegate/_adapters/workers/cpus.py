"""How many CPU-bound jobs run at once in one ``trio.run``: one per CPU."""

from __future__ import annotations

import os

import trio

_limiter: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar("clonegate_cpus")


def default_worker_limiter() -> trio.CapacityLimiter:
    """One token per CPU, for this ``trio.run``: how many CPU-bound jobs run at once."""
    try:
        return _limiter.get()
    except LookupError:
        limiter = trio.CapacityLimiter(os.cpu_count() or 1)
        _limiter.set(limiter)
        return limiter

"""Served workers under a memory budget (issue 46, ADR 0014): kept between clones when
the budget counts what they keep while idle as reserved, and that is a small share."""

from __future__ import annotations

import logging

from .estimates import MemoryEstimates

__all__ = ["IDLE_SHARE", "reserve_idle"]

logger = logging.getLogger("clonegate")
MiB = 1 << 20

# The most of a budget that idle workers may take from it. Measured where memory is
# plentiful, a fork per clone cost 6% of 20 shallow clones at -j 2 (bench/README.md,
# bench_budget_cost.py); in a cgroup of 1.3x one clone four idle workers (up to 32 MiB
# each, uncounted) made the last clone thrash: there the budget is too small for them.
IDLE_SHARE = 1 / 8


def reserve_idle(estimates: MemoryEstimates | None, clones: int, idle_memory: int) -> bool:
    """Whether a clone's worker may wait for the next clone under ``estimates``' budget.

    Each of the ``clones`` slots may leave an idle worker holding up to ``idle_memory``
    bytes that no clone's reservation counts; if all of them together are at most
    :data:`IDLE_SHARE` of the budget, the budget admits clones in what is left (its
    ceiling lowered by them, once, when the use case is made) and True; otherwise
    nothing changes and False: a clone's worker ends with it (a fork per clone).
    Without a budget, True: no reservation to keep them out of.
    """
    if estimates is None:
        return True
    idle = clones * -(-idle_memory // MiB)
    if idle == 0 or idle > estimates.ceiling * IDLE_SHARE:
        return False
    estimates.ceiling -= idle
    estimates.initial = min(estimates.initial, estimates.ceiling)
    if estimates.opening is not None:
        estimates.opening = min(estimates.opening, estimates.initial)
    said = f"{idle} MiB kept for {clones} idle workers"
    estimates.origin = f"{estimates.origin}; {said}" if estimates.origin else said
    logger.info("memory budget: %d MiB for clones (%s)", estimates.ceiling, said)
    return True

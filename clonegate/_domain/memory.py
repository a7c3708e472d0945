"""What the memory budget reads about the machine: a port, so tests can feed readings."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Protocol

__all__ = ["MemoryNeed", "MemoryReading", "MemorySensor"]


@dataclass(frozen=True, slots=True)
class MemoryReading:
    """One look at the memory this process tree may use.

    Attributes:
      limit: bytes the tree may use in all: its cgroup's limit, or the machine's
        memory when no cgroup limits it.
      available: bytes it may still take without reclaiming anything that matters:
        the cgroup's limit minus its working set (usage without inactive file
        cache), or ``MemAvailable``, whichever is smaller.
      pressure: the share of the time since the previous reading (0.0 to 1.0) in
        which some task stalled waiting for memory (Linux PSI, the cgroup's own file
        where there is one); ``None`` where the kernel does not tell.
      failures: how many times, in all, a charge of the cgroup hit its limit and
        the kernel had to reclaim first (v1 ``memory.failcnt``, v2 the ``max``
        count of ``memory.events``): a counter, read for how much it rose between
        two readings; ``None`` without a limiting cgroup.
    """

    limit: int
    available: int
    pressure: float | None = None
    failures: int | None = None


class MemorySensor(Protocol):
    """Reads memory. ``read`` is quick (a few small files) and never blocks on I/O
    that can hang; it may keep state between calls (pressure is a rate)."""

    def read(self) -> MemoryReading: ...


class MemoryNeed(Protocol):
    """What a clone calls, and awaits, before it uses more memory: ``nbytes`` in all
    from then on, of which ``reclaimable`` are file pages it maps (its pack), which
    the kernel reclaims before it kills anything (ADR 0014). True once they are held.
    ``refusable``: the clone holds memory it can drop (a first pass's records); rather
    than wait behind another clone that waits, giving back its reservation while it
    still uses it, it is refused (False) and asks again once it has dropped them."""

    def __call__(
        self, nbytes: int, reclaimable: int = 0, /, *, refusable: bool = False
    ) -> Awaitable[bool]: ...

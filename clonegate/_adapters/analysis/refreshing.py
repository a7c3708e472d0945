"""A cache that is written and never read: every file is parsed again (``--force``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import trio

from ..._domain.store import AnalysisCache

__all__ = ["Refreshing"]


class Refreshing:
    """``cache`` for its ``keep`` only: a lookup finds nothing (ADR 0016)."""

    def __init__(self, cache: AnalysisCache) -> None:
        self._cache = cache

    async def lookup(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        await trio.lowlevel.checkpoint()
        return {}

    async def keep(self, entries: Mapping[bytes, bytes]) -> None:
        await self._cache.keep(entries)

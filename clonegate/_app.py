"""The composition root: the adapters a use case runs when the caller gives none (ADR 0001).

The only module that knows both the use case and the adapters. ``clonegate/__init__``
imports it, so ``AnalyzeUseCase(...)`` clones with dulwich and analyzes with
tree-sitter out of the box, while the use case module itself names neither.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager

import trio

from ._adapters.analysis.analyzer import TestInventoryAnalyzer
from ._adapters.git.dulwich_vcs import DulwichVCS
from ._adapters.memory import SystemMemorySensor
from ._adapters.workers import open_worker_pool
from ._domain.inventory import Analyzer
from ._domain.memory import MemorySensor
from ._domain.store import AnalysisCache
from ._domain.vcs import VCS
from ._usecase.analyze import AnalyzeUseCase
from ._usecase.options import UseCaseConfig


class DefaultWiring:
    """DulwichVCS and TestInventoryAnalyzer, in worker processes shared by a batch."""

    def vcs(self, config: UseCaseConfig) -> VCS:
        keep = config.keep_clones
        return DulwichVCS(
            depth=config.clone_depth,
            checkout=keep,
            connect_timeout=config.connect_timeout,
            read_timeout=config.read_timeout,
            work_dir=None if keep else config.work_dir,
            keep_in=config.work_dir if keep else None,
            ssh_command=config.ssh_command,
            ca_bundle=config.ca_bundle,
            max_repo_size=config.max_repo_size,
            max_memory=config.clone_memory_limit,
            low_speed_limit=config.low_speed_limit,
            low_speed_time=config.low_speed_time,
        )

    def analyzer(self, config: UseCaseConfig) -> Analyzer:
        cache = config.analysis_cache
        if cache is not None and config.refresh_cache:
            cache = _Refreshing(cache)
        return TestInventoryAnalyzer(
            processes=config.max_concurrent_analyses,
            cache=cache,
            max_memory=config.analysis_memory_limit,
        )

    def batch_scope(self) -> AbstractAsyncContextManager[object]:
        return open_worker_pool()

    def memory_sensor(self) -> MemorySensor:
        return SystemMemorySensor()


class _Refreshing:
    """A cache that is written and never read: every file is parsed again (``--force``)."""

    def __init__(self, cache: AnalysisCache) -> None:
        self._cache = cache

    async def lookup(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        await trio.lowlevel.checkpoint()
        return {}

    async def keep(self, entries: Mapping[bytes, bytes]) -> None:
        await self._cache.keep(entries)


AnalyzeUseCase.wiring = DefaultWiring()

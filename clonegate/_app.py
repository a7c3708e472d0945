"""The composition root: the adapters a use case runs when the caller gives none (ADR 0001).

The only module that knows both the use case and the adapters. ``clonegate/__init__``
imports it, so ``AnalyzeUseCase(...)`` clones with dulwich and analyzes with
tree-sitter out of the box, while the use case module itself names neither.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from ._adapters.analysis.analyzer import TestInventoryAnalyzer
from ._adapters.git.dulwich_vcs import DulwichVCS
from ._adapters.memory import SystemMemorySensor
from ._adapters.workers import open_worker_pool
from ._domain.inventory import Analyzer
from ._domain.memory import MemorySensor
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
        return TestInventoryAnalyzer(processes=config.max_concurrent_analyses)

    def batch_scope(self) -> AbstractAsyncContextManager[object]:
        return open_worker_pool()

    def memory_sensor(self) -> MemorySensor:
        return SystemMemorySensor()


AnalyzeUseCase.wiring = DefaultWiring()

"""The composition root: the adapters a use case runs when the caller gives none (ADR 0001).

The only module that knows both the use case and the adapters. ``clonegate/__init__``
imports it, so ``AnalyzeUseCase(...)`` clones with dulwich and analyzes with
tree-sitter out of the box, while the use case module itself names neither.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

from ._adapters.analysis.analyzer import TestInventoryAnalyzer
from ._adapters.git.dulwich_vcs import DulwichVCS
from ._adapters.workers import batch_workers
from ._domain.inventory import Analyzer
from ._domain.vcs import VCS
from ._usecase.analyze import AnalyzeUseCase
from ._usecase.options import UseCaseConfig


class DefaultWiring:
    """DulwichVCS and TestInventoryAnalyzer, in worker processes shared by a batch."""

    def vcs(self, config: UseCaseConfig) -> VCS:
        return DulwichVCS(
            depth=config.clone_depth, checkout=config.keep_clones, work_dir=config.work_dir
        )

    def analyzer(self, config: UseCaseConfig) -> Analyzer:
        return TestInventoryAnalyzer()

    def batch_scope(self) -> AbstractAsyncContextManager[object]:
        return batch_workers()


AnalyzeUseCase.wiring = DefaultWiring()

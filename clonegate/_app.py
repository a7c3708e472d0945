"""The composition root: every collaborator of the default use case, built in one place
(ADR 0017).

The only module that knows both the use case and the adapters. :func:`open_analyzer`
declares the zygote's preloads, opens the worker pool, builds the VCS and the analyzer
with that pool passed to them, the memory sensor, and the use case with those ports.
Nothing here runs at import: no class attribute is set, no list grows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ._adapters.analysis.analyzer import TestInventoryAnalyzer
from ._adapters.analysis.settings import AnalysisSettings
from ._adapters.git.dulwich_vcs import DulwichVCS
from ._adapters.git.settings import CloneSettings
from ._adapters.memory import SystemMemorySensor
from ._adapters.preloads import ZYGOTE_PRELOAD
from ._adapters.workers import WorkerPool, open_worker_pool
from ._domain.memory import MemorySensor
from ._usecase.analyze import AnalyzeUseCase
from ._usecase.options import Option, UseCaseConfig

__all__ = ["compose", "open_analyzer"]


@asynccontextmanager
async def open_analyzer(
    *options: Option,
    clone: CloneSettings | None = None,
    analysis: AnalysisSettings | None = None,
    memory_sensor: MemorySensor | None = None,
) -> AsyncIterator[AnalyzeUseCase]:
    """A use case that clones with dulwich and analyzes with tree-sitter, its worker
    processes alive until the block ends::

        shallow = CloneSettings(depth=1)
        async with open_analyzer(with_max_concurrent_clones(4), clone=shallow) as uc:
            report = await uc.execute("https://github.com/pallets/flask.git")

    ``options``: the use case's own (``with_*``). ``clone``, ``analysis``: the
    adapters' settings (defaults when None). With :func:`with_keep_clones` the clones
    also get their working tree. ``memory_sensor``: what a memory budget reads (the
    system's cgroup and ``/proc`` by default). On leaving, every worker process is
    killed and waited for.
    """
    async with open_worker_pool(preload=ZYGOTE_PRELOAD) as pool:
        yield compose(
            *options, pool=pool, clone=clone, analysis=analysis, memory_sensor=memory_sensor
        )


def compose(
    *options: Option,
    pool: WorkerPool | None,
    clone: CloneSettings | None = None,
    analysis: AnalysisSettings | None = None,
    memory_sensor: MemorySensor | None = None,
) -> AnalyzeUseCase:
    """The use case :func:`open_analyzer` yields, its adapters' jobs in ``pool`` (None:
    the ``trio.run``'s own pool, for a caller outside any block: tests, benchmarks)."""
    config = UseCaseConfig.of(options)
    clone = clone if clone is not None else CloneSettings()
    if config.keep_clones:  # a kept clone is for the user to open: with its files
        clone = dataclasses.replace(clone, checkout=True)
    vcs = DulwichVCS(clone, pool=pool)
    analyzer = TestInventoryAnalyzer(analysis, pool=pool)
    sensor = memory_sensor if memory_sensor is not None else SystemMemorySensor()
    return AnalyzeUseCase(*options, vcs=vcs, analyzer=analyzer, memory_sensor=sensor)

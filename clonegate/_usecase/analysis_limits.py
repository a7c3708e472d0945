"""The envelope of one analysis, as options of :class:`clonegate.AnalyzeUseCase` (issue 38).

A repository's content decides how long its analysis runs and how much memory it
takes; these bound both (ADR 0003's envelope, applied to analysis).
"""

from __future__ import annotations

import dataclasses

from .._domain.checks import positive_int, positive_seconds
from .options import Option, UseCaseConfig

__all__ = ["with_analysis_memory_limit", "with_analysis_time_limit"]


def with_analysis_time_limit(seconds: float) -> Option:
    """Seconds one repository's analysis may run (default 2 minutes;
    ``--analysis-timeout``), counted while it holds an analysis process, never while
    it waits for one. Past it the analysis's workers are killed and the repository
    fails ``timeout`` in phase ``analyze``. Applies to any analyzer: one that does not
    mark its waits (``clonegate._domain.work_clock``) is timed throughout."""
    value = positive_seconds("analysis_time_limit", seconds)
    return lambda config: dataclasses.replace(config, analysis_time_limit=value)


def with_analysis_memory_limit(size: int) -> Option:
    """Bytes of memory one analysis process may use on top of its start (default
    1 GiB; ``--analysis-memory``); configures the default analyzer.

    A hard cap (the worker's address-space limit, as for clones): an analysis that
    needs more fails ``out_of_memory`` in phase ``analyze``, its worker is replaced,
    and the batch goes on."""
    value = positive_int("analysis_memory_limit", size)

    def apply(config: UseCaseConfig) -> UseCaseConfig:
        given = config.analyzer_options | {"with_analysis_memory_limit"}
        return dataclasses.replace(config, analyzer_options=given, analysis_memory_limit=value)

    return apply

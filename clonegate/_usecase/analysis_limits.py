"""The envelope of one analysis, as options of :class:`clonegate.AnalyzeUseCase` (issue 38).

A repository's content decides how long its analysis runs and how much memory it
takes; this bounds the time (ADR 0003's envelope, applied to analysis); the memory is
the analyzer's setting (``AnalysisSettings.max_memory``).
"""

from __future__ import annotations

import dataclasses

from .._domain.checks import positive_seconds
from .options import Option

__all__ = ["with_analysis_time_limit"]


def with_analysis_time_limit(seconds: float) -> Option:
    """Seconds one repository's analysis may run (default 2 minutes;
    ``--analysis-timeout``), counted while it holds an analysis process, never while
    it waits for one. Past it the analysis's workers are killed and the repository
    fails ``timeout`` in phase ``analyze``. Applies to any analyzer: one that does not
    mark its waits (``clonegate._domain.work_clock``) is timed throughout."""
    value = positive_seconds("analysis_time_limit", seconds)
    return lambda config: dataclasses.replace(config, analysis_time_limit=value)

"""One analysis, under its own time limit, and what a failed one reports (issue 38)."""

from __future__ import annotations

import logging

from .._domain.errors import AnalysisError, ErrorKind
from .._domain.inventory import AnalysisReport, Analyzer
from .._domain.job_memory import JobMemory, counted_in
from .._domain.reports import RepositoryReport, RepositoryStatus, Timings
from .._domain.urls import redact
from .._domain.vcs import ClonedSource
from .._domain.work_clock import WorkClock

__all__ = ["analysis_failure", "analyze_timed"]

logger = logging.getLogger("clonegate")


async def analyze_timed(
    analyzer: Analyzer,
    source: ClonedSource,
    clock: WorkClock,
    limit: float,
    memory: JobMemory | None = None,
) -> AnalysisReport:
    """``analyzer.analyze(source)``, failing ``timeout`` past ``limit`` seconds of
    ``clock``: a wait for an analysis process that the analyzer marks does not count.
    With a memory budget (``memory``), the analyzer's jobs hold their share of it
    while they run (``_domain.job_memory``).

    Cancelling the analysis kills its workers (ADR 0008) before this raises.
    """
    with clock.limit(limit), counted_in(memory):
        return await analyzer.analyze(source)
    raise AnalysisError(
        ErrorKind.TIMEOUT, f"the analysis ran for longer than its {limit:g} s time limit"
    )


def analysis_failure(
    exc: Exception, shown: str, index: int, timings: Timings, clone_memory: int | None
) -> RepositoryReport:
    """The report of a repository whose analysis raised ``exc``.

    An :class:`AnalysisError` is the repository's doing (a limit, a worker its content
    killed): its kind, and the report says it all. Anything else is a bug, of
    clonegate's or of the caller's analyzer: one line on the log, with the traceback
    only when the log is verbose (``-v``).
    """
    if isinstance(exc, AnalysisError):
        kind, status = exc.kind, RepositoryStatus.of_error(exc.kind)
        message = f"{shown}: {redact(exc.reason)}"
    else:
        kind, status = "analysis_error", RepositoryStatus.FAILED
        message = f"{shown}: {redact(f'{type(exc).__name__}: {exc}')}"
        verbose = logger.isEnabledFor(logging.INFO)
        logger.warning("analysis failed: %s", message, exc_info=verbose)
    return RepositoryReport.failure(
        shown, index, "analyze", kind, message, status, timings, clone_memory
    )

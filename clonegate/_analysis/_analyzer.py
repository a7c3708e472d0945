"""``TestInventoryAnalyzer``: scans a cloned repository in a worker process."""

from __future__ import annotations

from typing import final

import trio
import trio_parallel

from .._inventory import AnalysisReport, RepositoryFacts
from .._vcs import ClonedSource
from ._scan import scan_commit

# Bumped whenever a change to detection or counting can change a report (ADR 0005).
ANALYZER_VERSION = "clonegate-analyzer/1"


@final
class TestInventoryAnalyzer:
    """Takes the test inventory of a :class:`clonegate.ClonedSource`.

    Parsing is CPU-bound and the GIL would serialize it, so each analysis runs in a
    trio-parallel worker process (the same pool as the clones). Cancelling the caller
    kills the worker. The adapter has no limit of its own: the use case decides how
    many analyses run at once.
    """

    __test__ = False  # not a pytest test class

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        result = await trio_parallel.run_sync(
            scan_commit,
            str(source.path),
            source.commit,
            kill_on_cancel=True,
            limiter=trio.CapacityLimiter(1),
        )
        facts = RepositoryFacts(
            branch=source.branch,
            commit=source.commit,
            committed_at=source.committed_at,
            files_scanned=result.files_scanned,
            bytes_on_disk=source.bytes_on_disk,
            bytes_read=result.bytes_read,
            files_per_language=result.files_per_language,
        )
        return AnalysisReport(facts, result.inventory, ANALYZER_VERSION)

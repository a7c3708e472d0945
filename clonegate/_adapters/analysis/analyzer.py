"""``TestInventoryAnalyzer``: scans a cloned repository in worker processes."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import TypeVar, final

import trio

from ..._domain.checks import positive_int
from ..._domain.inventory import AnalysisReport, RepositoryFacts
from ..._domain.vcs import ClonedSource
from ..preloads import SCAN_MODULES
from ..workers import add_default_preload, default_worker_limiter, run_in_worker
from .scan import (
    Listing,
    Part,
    PartResult,
    ScanResult,
    list_commit,
    scan_part,
)

# The workers' zygote loads the grammars and compiles the queries once (ADR 0003).
add_default_preload(SCAN_MODULES)

# Bumped whenever a change to detection or counting can change a report (ADR 0005).
ANALYZER_VERSION = "clonegate-analyzer/4"

# Below this many candidate files per part, another process costs more than it saves:
# each part opens the repository and its pack index again (bench/README.md).
MIN_FILES_PER_PART = 100

T = TypeVar("T")


@final
class TestInventoryAnalyzer:
    """Takes the test inventory of a :class:`clonegate.ClonedSource`.

    Parsing is CPU-bound and the GIL would serialize it, so it runs in worker
    processes, a fresh one per job (ADR 0003): one job lists the commit's tree,
    then the candidate files are split into parts scanned side by side, so that one
    large repository uses every CPU. Every job waits on one limiter, which all
    analyses of this analyzer share: however many analyses the caller runs at once,
    at most ``processes`` processes parse, and memory stays bounded. The default
    (``None``) is one limiter per ``trio.run`` with a token per CPU, shared by every
    analyzer made with the default.

    Cancelling the caller kills the workers. The report does not depend on how the
    files were split.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, *, processes: int | None = None) -> None:
        self._limiter = (
            trio.CapacityLimiter(positive_int("processes", processes))
            if processes is not None
            else None
        )

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        path = str(source.path)
        cpus = self._limiter or default_worker_limiter()
        listing: Listing = await _in_worker(cpus, list_commit, path, source.commit)
        parts = split(listing.candidates, int(cpus.total_tokens))
        results = await _all(
            [
                functools.partial(_in_worker, cpus, scan_part, path, part, listing.scopes)
                for part in parts
            ]
        )
        result = ScanResult.merge(listing, results)
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


def split(candidates: Part, processes: int, min_files: int = MIN_FILES_PER_PART) -> list[Part]:
    """At most ``processes`` parts of at least ``min_files`` files each (one part if fewer).

    Files are dealt out in turn, not cut into runs: candidates are in path order, so
    a run would give one part all the Go files and another all the Python ones, and
    the languages do not cost the same to parse.
    """
    count = max(1, min(processes, len(candidates) // min_files))
    return [candidates[i::count] for i in range(count)]


async def _in_worker(limiter: trio.CapacityLimiter, function: Callable[..., T], *args: object) -> T:
    async with limiter:
        return await run_in_worker(function, *args)


async def _all(jobs: list[Callable[[], Awaitable[PartResult]]]) -> list[PartResult]:
    """Run ``jobs`` side by side; the first failure cancels (kills) the rest and is raised.

    The caller sees the job's own exception, not an ExceptionGroup: the use case turns
    any analyzer exception into one repository's failure and carries on.
    """
    results: list[PartResult | None] = [None] * len(jobs)
    failure: Exception | None = None

    async def run(index: int, job: Callable[[], Awaitable[PartResult]]) -> None:
        nonlocal failure
        try:
            results[index] = await job()
        except Exception as exc:
            if failure is None:
                failure = exc
            nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        for index, job in enumerate(jobs):
            nursery.start_soon(run, index, job)
    if failure is not None:
        raise failure
    return [r for r in results if r is not None]

"""``TestInventoryAnalyzer``: scans a cloned repository in worker processes."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, final

import trio

from ..._domain.errors import AnalysisError, ErrorKind
from ..._domain.inventory import (
    AnalysisReport,
    RepositoryFacts,
    ScanError,
    TestFile,
)
from ..._domain.job_memory import held_for_job
from ..._domain.sizes import format_size
from ..._domain.store import AnalysisCache
from ..._domain.vcs import ClonedSource
from ..._domain.work_clock import holding_slot, waiting_for_slot
from ..workers import WorkerDied, WorkerPool, default_worker_limiter, run_in_worker, run_pool
from ..workers.wire import Named
from .refreshing import Refreshing
from .results import MIN_FILES_PER_PART, Part, PartResult, ScanResult, split
from .settings import AnalysisSettings

# The parsers, the grammars and the frameworks' definitions (.scan, .config,
# .cache_keys) run in the workers; the parent loads them only for a listing it splits
# or a cache it consults, never for a small repository's finished scan (issue 14).
if TYPE_CHECKING:
    from .cache_keys import Outcome
    from .config import ConfigScopes
    from .scan import Listing

__all__ = [
    "ANALYZER_VERSION",
    "MIN_FILES_PER_PART",
    "AnalyzerStatistics",
    "TestInventoryAnalyzer",
    "split",
]

logger = logging.getLogger("clonegate")

# Bumped whenever a change to detection or counting can change a report (ADR 0005).
ANALYZER_VERSION = "clonegate-analyzer/9"

T = TypeVar("T")


class _SCAN:
    """The scan module's jobs, by name (see :class:`..workers.wire.Named`)."""

    list_or_scan = Named(f"{__package__}.scan", "list_or_scan")
    list_commit = Named(f"{__package__}.scan", "list_commit")
    scan_part = Named(f"{__package__}.scan", "scan_part")


@dataclass(frozen=True, slots=True)
class AnalyzerStatistics:
    """What one :class:`TestInventoryAnalyzer` did since it was made, over every analysis.

    ``files_parsed``: candidate files read from a clone and parsed (a file that could
    not be read is not counted). With a cache: ``cache_hits``, candidate files whose
    outcome came from the cache; ``cache_misses``, those it did not answer, or answered
    with a value that does not decode, or all of them when its lookup failed;
    ``entries_kept``: entries handed to the cache's ``keep`` that it accepted (a
    file's outcome once per distinct key).
    """

    files_parsed: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    entries_kept: int = 0


@final
class TestInventoryAnalyzer:
    """Takes the test inventory of a :class:`clonegate.ClonedSource`.

    Parsing is CPU-bound and the GIL would serialize it, so it runs in worker
    processes (served ones, ADR 0003): one job lists the commit's tree, and scans the
    candidates too when they make one part (most repositories: one job, and the
    parent never loads the parsers); otherwise they are split into parts scanned
    side by side, so that one large repository uses every CPU. Every job waits on
    one limiter, which all analyses of this analyzer share: however many analyses
    the caller runs at once, at most ``processes`` processes parse, and memory stays
    bounded. The default
    (``None``) is one limiter per ``trio.run`` with a token per CPU, shared by every
    analyzer made with the default.

    Cancelling the caller kills the workers. The report does not depend on how the
    files were split.

    With a ``cache`` (:class:`clonegate._domain.store.AnalysisCache`), each candidate
    file's outcome is looked up by its content key (:mod:`.cache_keys`) in the parent,
    before any part goes to a worker: only the misses are read and parsed (a
    repository fully cached starts no scan worker), and their outcomes are kept. The
    inventory is the one an uncached analysis gives; ``bytes_read`` counts only the
    files read, so a cached file adds 0. A cache whose ``lookup`` fails leaves that
    analysis uncached; one whose ``keep`` fails loses those entries; either logs one
    warning on the ``clonegate`` logger and the report is made all the same.

    ``settings.max_memory``: bytes each of its worker processes may use on top of its start
    (default 1 GiB), enforced as the worker's address-space limit (ADR 0003). An
    analysis that needs more, or whose worker dies, raises
    :class:`clonegate.AnalysisError` (``out_of_memory``, ``analysis_error``); the
    worker is replaced. A wait for a process is marked (``waiting_for_slot``), so that
    it does not count against the repository's limits (issue 38).
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self, settings: AnalysisSettings | None = None, *, pool: WorkerPool | None = None
    ) -> None:
        self.settings = settings = settings if settings is not None else AnalysisSettings()
        self._pool = pool  # None: the run's own, when a job first needs it
        processes = settings.processes
        self._limiter = trio.CapacityLimiter(processes) if processes is not None else None
        cache = settings.cache
        self._cache = Refreshing(cache) if cache is not None and settings.refresh_cache else cache
        self._max_memory = settings.max_memory
        self._parsed = self._hits = self._misses = self._kept = 0

    @property
    def processes(self) -> int | None:
        """At most this many analysis processes at once; None: one per CPU."""
        return self.settings.processes

    @property
    def version(self) -> str:
        """The version its reports carry: :data:`ANALYZER_VERSION`, read when asked."""
        return ANALYZER_VERSION

    def statistics(self) -> AnalyzerStatistics:
        """The counts since this analyzer was made (not a checkpoint)."""
        return AnalyzerStatistics(self._parsed, self._hits, self._misses, self._kept)

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        path = str(source.path)
        limiter = self._limiter or default_worker_limiter()
        processes = _Processes(self._pool or run_pool(), limiter, self._max_memory)
        version = ANALYZER_VERSION  # read once, so that the keys and the report agree
        if self._cache is None:
            # One job when the candidates make one part; else the listing, to split.
            # The workers recall the files and trees they met earlier (.memo).
            first: Listing | ScanResult = await processes.run(
                _SCAN.list_or_scan, path, source.commit, processes.count, True
            )
            if isinstance(first, ScanResult):
                result = first
            else:
                parts = _parts(first.candidates, processes)
                results = await _scan(processes, path, parts, first.scopes, recall=True)
                result = ScanResult.merge(first, results)
        else:
            listing: Listing = await processes.run(_SCAN.list_commit, path, source.commit)
            results = await self._scan_cached(self._cache, processes, source, listing, version)
            result = ScanResult.merge(listing, results)
        self._parsed += result.parsed
        facts = RepositoryFacts(
            branch=source.branch,
            commit=source.commit,
            committed_at=source.committed_at,
            files_scanned=result.files_scanned,
            bytes_on_disk=source.bytes_on_disk,
            bytes_read=result.bytes_read,
            files_per_language=result.files_per_language,
            unread=result.unread,
            unread_conventions=result.unread_conventions,
        )
        return AnalysisReport(facts, result.inventory, version)

    async def _scan_cached(
        self,
        cache: AnalysisCache,
        processes: _Processes,
        source: ClonedSource,
        listing: Listing,
        version: str,
    ) -> list[PartResult]:
        """The parts' results, the cached files' outcomes as one more part (0 bytes read)."""
        from .cache_keys import UndecodableValue, cache_key, decode

        path, candidates = str(source.path), listing.candidates
        keys = [
            cache_key(sha, context, version)
            for (_, sha), context in zip(candidates, listing.contexts, strict=True)
        ]
        try:
            found = await cache.lookup(list(dict.fromkeys(keys)))
        except Exception as exc:  # failures only: trio.Cancelled is no Exception
            # Uncached for this analysis, keep included: a cache that cannot read is
            # unlikely to write, and one warning says it.
            logger.warning(
                "analysis cache lookup failed, %s analyzed without it: %s", source.url, exc
            )
            self._misses += len(candidates)
            parts = _parts(candidates, processes)
            return await _scan(processes, path, parts, listing.scopes)
        cached = _Outcomes()
        missing: list[tuple[str, bytes]] = []
        key_of: dict[str, bytes] = {}
        for (file, sha), key in zip(candidates, keys, strict=True):
            value = found.get(key)
            if value is not None:
                try:
                    cached.add(decode(value, file))
                    continue
                except UndecodableValue:  # an edited or damaged entry: analyze the file
                    pass
            missing.append((file, sha))
            key_of[file] = key
        self._hits += len(candidates) - len(missing)
        self._misses += len(missing)
        parts = _parts(tuple(missing), processes)
        results = await _scan(processes, path, parts, listing.scopes, encode=True)
        entries: dict[bytes, bytes] = {}
        decoded = [cached.result(bytes_read=0, parsed=0)]
        for part, result in zip(parts, results, strict=True):
            fresh = _Outcomes(result.errors)
            for (file, _), value in zip(part, result.values, strict=True):
                if value is not None:  # None: a read error, already in result.errors
                    entries[key_of[file]] = value
                    # Decoded like a hit, so that a warm cache gives what a cold one does.
                    fresh.add(decode(value, file))
            decoded.append(fresh.result(result.bytes_read, result.parsed))
        if entries:
            try:
                await cache.keep(entries)
            except Exception as exc:  # the report stands without them
                logger.warning("analysis cache keep failed for %s: %s", source.url, exc)
            else:
                self._kept += len(entries)
        return decoded


class _Outcomes:
    """Decoded outcomes gathered into a :class:`PartResult`."""

    def __init__(self, errors: tuple[ScanError, ...] = ()) -> None:
        self.files: list[TestFile] = []
        self.errors = list(errors)

    def add(self, outcome: Outcome) -> None:
        if isinstance(outcome, TestFile):
            self.files.append(outcome)
        elif outcome is not None:
            self.errors.append(outcome)

    def result(self, bytes_read: int, parsed: int) -> PartResult:
        return PartResult(tuple(self.files), tuple(self.errors), bytes_read, parsed)


@dataclass(frozen=True, slots=True)
class _Processes:
    """The analysis processes: the limiter every analysis shares, and each one's cap."""

    pool: WorkerPool
    cpus: trio.CapacityLimiter
    max_memory: int

    @property
    def count(self) -> int:
        return int(self.cpus.total_tokens)

    async def run(self, function: Callable[..., T], *args: object) -> T:
        """``function(*args)`` in a worker once a process is free; what the repository
        made the worker do (run out of memory, die) as an :class:`AnalysisError`."""
        # The wait is no work of this repository's: its limits stop (work_clock).
        with waiting_for_slot():
            await self.cpus.acquire()
        try:
            # With a memory budget, the job holds its share of it while it runs, and
            # says its peak (ADR 0014, issue 46); the wait stops the limits too.
            async with held_for_job() as job:
                with holding_slot():
                    return await run_in_worker(
                        self.pool,
                        function,
                        *args,
                        memory_allowance=self.max_memory,
                        reuse="analysis",
                        on_peak=job.measured,
                    )
        except MemoryError:
            # Raised in the worker past its cap, sent back as the job's error; the
            # worker ends after a failed job and the next one gets a fresh fork.
            raise self._out_of_memory("") from None
        except WorkerDied as exc:
            if exc.allowance_used_up:  # tree-sitter crashes when it cannot allocate
                raise self._out_of_memory(f" (its worker crashed: signal {exc.signal})") from None
            kind = ErrorKind.OUT_OF_MEMORY if exc.out_of_memory else "analysis_error"
            raise AnalysisError(kind, f"the analysis failed: {exc}") from None
        finally:
            self.cpus.release()

    def _out_of_memory(self, how: str) -> AnalysisError:
        cap = format_size(self.max_memory)
        reason = f"the analysis needed more than its {cap} memory cap{how}"
        return AnalysisError(ErrorKind.OUT_OF_MEMORY, reason)


def _parts(candidates: Part, processes: _Processes) -> list[Part]:
    # No part, and no worker, for no file (no tests, or all of them cached).
    return split(candidates, processes.count) if candidates else []


async def _scan(
    processes: _Processes,
    path: str,
    parts: list[Part],
    scopes: ConfigScopes,
    *,
    encode: bool = False,
    recall: bool = False,
) -> list[PartResult]:
    """Each part's result, in the parts' order (``encode``, ``recall``: ``scan_part``'s).
    Without a cache the workers recall the files they met earlier (.memo); with one,
    the cache alone says what is known, even when its lookup failed."""
    scan = _SCAN.scan_part
    return await _all(
        [
            functools.partial(processes.run, scan, path, p, scopes, encode, None, recall)
            for p in parts
        ]
    )


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

"""What the use case reports: one report per input repository, and a batch summary."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path

from .inventory import AnalysisReport, Inventory, ScanError
from .listed import Listed
from .retries import FailedAttempt
from .timeline import Phase
from .urls import redact, visible

__all__ = [
    "AnalysisTotals",
    "BatchSummary",
    "RefInfo",
    "ReportError",
    "RepositoryReport",
    "RepositoryStatus",
    "Timings",
]


class RepositoryStatus(StrEnum):
    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"

    @classmethod
    def of_error(cls, kind: str) -> RepositoryStatus:
        """The status of a repository that failed with an error of ``kind``."""
        # A read timeout is a timeout to the reader of a report, as it was before issue 43.
        statuses = {"timeout": cls.TIMEOUT, "read_timeout": cls.TIMEOUT}
        return {**statuses, "cancelled": cls.CANCELLED}.get(kind, cls.FAILED)


@dataclass(frozen=True, slots=True)
class ReportError:
    phase: str  # clone or analyze
    kind: str  # an ErrorKind value, or analysis_error
    message: str  # credentials redacted


@dataclass(frozen=True, slots=True)
class RefInfo:
    branch: str
    commit: str
    committed_at: datetime


@dataclass(frozen=True, slots=True)
class Timings:
    """Seconds spent waiting for a clone slot, setting up, cloning, and analyzing.

    ``setup`` is the VCS's own preparation once the slot is held (starting a worker
    process); ``clone`` starts after it, and so does the clone timeout. (``setup`` is
    the last field so that positional construction keeps its meaning.)
    """

    waited: float = 0.0
    clone: float = 0.0
    analysis: float = 0.0
    setup: float = 0.0


MAX_ERRORS_SHOWN = 100
MAX_ERROR_TEXT = 300


def _shown(error: ScanError) -> ScanError:
    def cut(text: str) -> str:
        text = visible(redact(text))
        return text if len(text) <= MAX_ERROR_TEXT else text[: MAX_ERROR_TEXT - 1] + "…"

    return ScanError(cut(error.path), error.phase, cut(error.message))


@dataclass(frozen=True, slots=True)
class AnalysisTotals:
    """The inventory's totals: what every report keeps, even when the details are dropped.

    ``errors`` names the files the analyzer could not take in (path, phase, reason), the
    first :data:`MAX_ERRORS_SHOWN` of ``scan_errors``; a repository chose their text, so
    each is shown escaped, without credentials, and cut at :data:`MAX_ERROR_TEXT`.
    ``unread``: test files of languages and frameworks the analyzer does not read, per
    language or framework, and ``unread_conventions`` per convention that matched
    (:class:`RepositoryFacts`); empty in a report made before they were counted.
    """

    test_files: int
    tests: int
    by_framework: dict[str, int]
    by_language: dict[str, int]
    by_status: dict[str, int]
    scan_errors: int
    files_scanned: int
    analyzer_version: str
    errors: tuple[ScanError, ...] = ()
    unread: dict[str, int] = field(default_factory=dict)
    unread_conventions: dict[str, int] = field(default_factory=dict)

    @property
    def unread_files(self) -> int:
        """Test files not read, in every language and framework."""
        return sum(self.unread.values())

    @classmethod
    def of(cls, report: AnalysisReport) -> AnalysisTotals:
        inventory = report.inventory
        return cls(
            test_files=inventory.test_files,
            tests=inventory.tests,
            by_framework=inventory.by_framework(),
            by_language=inventory.by_language(),
            by_status=inventory.by_status(),
            scan_errors=len(inventory.errors),
            files_scanned=report.facts.files_scanned,
            analyzer_version=report.analyzer_version,
            errors=tuple(_shown(e) for e in inventory.errors[:MAX_ERRORS_SHOWN]),
            unread=dict(report.facts.unread),
            unread_conventions=dict(report.facts.unread_conventions),
        )


@dataclass(frozen=True, slots=True)
class RepositoryReport:
    """The outcome for one input line.

    A later line naming the same repository as an earlier one (after normalizing
    scheme and host case, a trailing ``.git`` and ``/``) is not cloned again: its
    report has the first line's ``status`` and ``error``, and ``duplicate_of`` (the
    first line's index); the other details are in the first line's report (ADR 0006).
    ``inventory`` holds every test file, suite and test. ``path`` is where the clone
    was kept, if clones are kept. ``redirected_to`` is the repository URL an http(s)
    redirect led to, when the server redirected (a renamed or moved repository).
    ``reused`` says the report was not made in this run: an incremental run found the
    remote's HEAD at the commit of a stored result made by the same analyzer version,
    and reports that result (ADR 0016); ``timings`` are then this run's own (the
    remote's HEAD asked in ``clone``), not the stored ones. ``clone_memory`` is the
    most memory the clone used, in bytes, on top of what its worker process started
    with (what a memory budget learns from, ADR 0014); None when there was no clone
    or the VCS does not measure it. ``attempts`` holds each clone attempt that failed
    and was tried again (issue 43), oldest first: empty when the first attempt was the
    last (the JSON document then leaves it out). ``phases``: when it waited, cloned
    (each attempt) and was analyzed, wall-clock instants in order (ADR 0020); empty
    for a line that never started (a duplicate, no URL) and in reports made before
    they were kept. ``listed``: what a forge's listing said of the repository, when
    the line came from one (ADR 0023); None for a line given as a URL.
    """

    url: str
    index: int
    status: RepositoryStatus
    error: ReportError | None = None
    ref: RefInfo | None = None
    timings: Timings = field(default_factory=Timings)
    analysis: AnalysisTotals | None = None
    inventory: Inventory | None = None
    duplicate_of: int | None = None
    path: Path | None = None
    redirected_to: str | None = None
    reused: bool = False
    clone_memory: int | None = None
    attempts: tuple[FailedAttempt, ...] = ()
    phases: tuple[Phase, ...] = ()
    listed: Listed | None = None

    @classmethod
    def failure(
        cls,
        url: str,
        index: int,
        phase: str,
        kind: str,
        message: str,
        status: RepositoryStatus = RepositoryStatus.FAILED,
        timings: Timings | None = None,
        clone_memory: int | None = None,
    ) -> RepositoryReport:
        """A repository that failed (or timed out) in ``phase``: clone or analyze."""
        return cls(
            url=url,
            index=index,
            status=status,
            error=ReportError(phase, str(kind), message),
            timings=timings or Timings(),
            clone_memory=clone_memory,
        )

    @classmethod
    def duplicate(
        cls,
        url: str,
        index: int,
        first: int,
        status: RepositoryStatus,
        error: ReportError | None = None,
        listed: Listed | None = None,
    ) -> RepositoryReport:
        """Line ``index`` names the repository of line ``first``, which ended ``status``
        (and, unless it succeeded, with ``error``); ``listed``: this line's listing."""
        return cls(url, index, status, error=error, duplicate_of=first, listed=listed)


@dataclass(frozen=True, slots=True)
class BatchSummary:
    repositories: int = 0
    ok: int = 0
    failed: int = 0
    timeout: int = 0
    cancelled: int = 0
    duplicates: int = 0
    reused: int = 0
    test_files: int = 0
    tests: int = 0
    elapsed: float = 0.0
    unread_files: int = 0  # test files of languages and frameworks not read (ADR 0004)
    # Repositories cloned in more than one attempt, and the seconds they waited in all
    # between attempts, with no clone slot (issue 43).
    retried: int = 0
    retry_wait: float = 0.0
    # MiB the memory budget admitted when the batch began: with ``auto``, what it chose
    # (ADR 0014); None without a budget (ADR 0020).
    memory_budget: int | None = None
    # Stretches of sustained memory pressure while no running clone made progress
    # (issue 46, ADR 0014): the first is said on stderr as a warning.
    memory_thrash: int = 0

"""clonegate: clone many git repositories under a hard, fair limit, and analyze each clone."""

from . import _app  # noqa: F401  (wires the default adapters into AnalyzeUseCase)
from ._adapters.analysis.analyzer import ANALYZER_VERSION, TestInventoryAnalyzer
from ._adapters.git.dulwich_vcs import DulwichVCS
from ._domain.errors import (
    AuthenticationError,
    CloneCancelledError,
    CloneError,
    CloneTimeoutError,
    EmptyRepositoryError,
    ErrorKind,
    InvalidURLError,
    RepositoryNotFoundError,
    StorageError,
    TransportError,
)
from ._domain.events import Event, EventKind
from ._domain.inventory import (
    AnalysisReport,
    Analyzer,
    Inventory,
    RepositoryFacts,
    ScanError,
    TestCase,
    TestFile,
    TestStatus,
    TestSuite,
)
from ._domain.reports import (
    AnalysisTotals,
    BatchSummary,
    RefInfo,
    ReportError,
    RepositoryReport,
    RepositoryStatus,
    Timings,
)
from ._domain.semaphore import WeightedSemaphore, WeightedSemaphoreStatistics
from ._domain.urls import RepoURL, parse_repo_url, redact
from ._domain.vcs import VCS, ClonedSource
from ._usecase.analyze import AnalyzeUseCase
from ._usecase.batch import Batch
from ._usecase.gate import CloneGateStatistics, GateEntry
from ._usecase.options import (
    Option,
    UseCaseConfig,
    with_analysis_timeout,
    with_clone_depth,
    with_clone_timeout,
    with_clone_weight,
    with_event_hook,
    with_max_concurrent_analyses,
    with_max_concurrent_clones,
    with_stuck_threshold,
    with_token,
    with_work_dir,
)
from ._version import __version__

__all__ = [
    "ANALYZER_VERSION",
    "VCS",
    "AnalysisReport",
    "AnalysisTotals",
    "AnalyzeUseCase",
    "Analyzer",
    "AuthenticationError",
    "Batch",
    "BatchSummary",
    "CloneCancelledError",
    "CloneError",
    "CloneGateStatistics",
    "CloneTimeoutError",
    "ClonedSource",
    "DulwichVCS",
    "EmptyRepositoryError",
    "ErrorKind",
    "Event",
    "EventKind",
    "GateEntry",
    "InvalidURLError",
    "Inventory",
    "Option",
    "RefInfo",
    "RepoURL",
    "ReportError",
    "RepositoryFacts",
    "RepositoryNotFoundError",
    "RepositoryReport",
    "RepositoryStatus",
    "ScanError",
    "StorageError",
    "TestCase",
    "TestFile",
    "TestInventoryAnalyzer",
    "TestStatus",
    "TestSuite",
    "Timings",
    "TransportError",
    "UseCaseConfig",
    "WeightedSemaphore",
    "WeightedSemaphoreStatistics",
    "__version__",
    "parse_repo_url",
    "redact",
    "with_analysis_timeout",
    "with_clone_depth",
    "with_clone_timeout",
    "with_clone_weight",
    "with_event_hook",
    "with_max_concurrent_analyses",
    "with_max_concurrent_clones",
    "with_stuck_threshold",
    "with_token",
    "with_work_dir",
]

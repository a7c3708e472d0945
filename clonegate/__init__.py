"""clonegate: clone many git repositories under a hard, fair limit, and analyze each clone."""

from ._version import __version__

TYPE_CHECKING = False  # not typing's: a few ms before the CLI starts its zygote (ADR 0003)

if TYPE_CHECKING:
    from ._adapters.analysis.analyzer import (
        ANALYZER_VERSION,
        AnalyzerStatistics,
        TestInventoryAnalyzer,
    )
    from ._adapters.analysis.settings import AnalysisSettings
    from ._adapters.git.dulwich_vcs import DulwichVCS
    from ._adapters.git.settings import CloneSettings
    from ._adapters.netrc_file import with_netrc
    from ._adapters.redis import (
        ClusterSettings,
        Lease,
        RedisHolder,
        RedisSemaphore,
        RedisSemaphoreStatistics,
        RedisUnavailableError,
        RedisWaiter,
        RedisWorkQueue,
        Retrying,
        Running,
        RunStatus,
        open_redis,
    )
    from ._adapters.store import (
        Difference,
        HistoryEntry,
        RunInfo,
        SQLiteStore,
        StoreReader,
        StoreSettings,
        open_store,
        open_store_reader,
    )
    from ._adapters.workers import WorkerDied, WorkerPool, WorkerPoolStatistics, open_worker_pool
    from ._app import open_analyzer
    from ._domain.credentials import Credential, credential_for
    from ._domain.errors import (
        AnalysisError,
        AuthenticationError,
        CloneCancelledError,
        CloneError,
        CloneTimeoutError,
        EmptyRepositoryError,
        ErrorKind,
        InvalidRepositoryError,
        InvalidURLError,
        OutOfMemoryError,
        ProtocolError,
        RepositoryNotFoundError,
        StorageError,
        TooLargeError,
        TooSlowError,
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
    from ._domain.jobs import Job, JobQueue, Retry
    from ._domain.limits import (
        LeaseLostError,
        LimitConfigError,
        Limiter,
        LimitError,
        LimiterUnavailableError,
    )
    from ._domain.memory import MemoryReading, MemorySensor
    from ._domain.patience import Patience
    from ._domain.report_json import report_from_json, to_json
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
    from ._domain.sizes import parse_size
    from ._domain.store import (
        AnalysisCache,
        DamagedRow,
        DamagedRowError,
        ReportStore,
        StoredResult,
        StoreError,
    )
    from ._domain.urls import RepoURL, parse_repo_url, redact, visible
    from ._domain.vcs import VCS, ClonedSource, RemoteHead
    from ._usecase.analysis_limits import with_analysis_time_limit
    from ._usecase.analyze import AnalyzeUseCase
    from ._usecase.batch import Batch
    from ._usecase.gate import CloneGateStatistics, GateEntry
    from ._usecase.options import (
        Option,
        UseCaseConfig,
        with_analysis_timeout,
        with_clone_timeout,
        with_clone_weight,
        with_event_hook,
        with_global_limiter,
        with_host_limit,
        with_host_limiter,
        with_incremental,
        with_keep_clones,
        with_max_concurrent_clones,
        with_memory_budget,
        with_remote_head_limit,
        with_repository_timeout,
        with_result_store,
        with_stuck_threshold,
        with_token,
    )
    from ._usecase.pressure import BudgetDecision, PressureController
    from ._usecase.worker import ClusterWorker, WorkerTotals

# Where each public name lives, imported on first use: ``import clonegate`` stays cheap,
# and trio, dulwich and tree-sitter load only when a program uses them (ADR 0001).
# open_analyzer, the composition root, builds the default adapters (ADR 0017).
_LAZY = {
    name: module
    for module, names in {
        "._adapters.analysis.analyzer": (
            "ANALYZER_VERSION AnalyzerStatistics TestInventoryAnalyzer"
        ),
        "._adapters.git.dulwich_vcs": "DulwichVCS",
        "._adapters.redis": (
            "ClusterSettings Lease RedisHolder RedisSemaphore RedisSemaphoreStatistics "
            "RedisUnavailableError RedisWaiter RedisWorkQueue Retrying RunStatus Running "
            "open_redis"
        ),
        "._adapters.store": (
            "Difference HistoryEntry RunInfo SQLiteStore StoreReader StoreSettings open_store "
            "open_store_reader"
        ),
        "._adapters.workers": "WorkerDied WorkerPool WorkerPoolStatistics open_worker_pool",
        "._adapters.netrc_file": "with_netrc",
        "._app": "open_analyzer",
        "._adapters.git.settings": "CloneSettings",
        "._adapters.analysis.settings": "AnalysisSettings",
        "._domain.credentials": "Credential credential_for",
        "._domain.errors": (
            "AnalysisError AuthenticationError CloneCancelledError CloneError "
            "CloneTimeoutError EmptyRepositoryError ErrorKind InvalidRepositoryError "
            "InvalidURLError OutOfMemoryError ProtocolError RepositoryNotFoundError "
            "StorageError TooLargeError TooSlowError TransportError"
        ),
        "._domain.events": "Event EventKind",
        "._domain.inventory": (
            "AnalysisReport Analyzer Inventory RepositoryFacts ScanError TestCase TestFile "
            "TestStatus TestSuite"
        ),
        "._domain.jobs": "Job JobQueue Retry",
        "._domain.limits": (
            "LeaseLostError LimitConfigError LimitError Limiter LimiterUnavailableError"
        ),
        "._domain.memory": "MemoryReading MemorySensor",
        "._domain.patience": "Patience",
        "._domain.report_json": "report_from_json to_json",
        "._domain.reports": (
            "AnalysisTotals BatchSummary RefInfo ReportError RepositoryReport "
            "RepositoryStatus Timings"
        ),
        "._domain.semaphore": "WeightedSemaphore WeightedSemaphoreStatistics",
        "._domain.sizes": "parse_size",
        "._domain.store": (
            "AnalysisCache DamagedRow DamagedRowError ReportStore StoreError StoredResult"
        ),
        "._domain.urls": "RepoURL parse_repo_url redact visible",
        "._domain.vcs": "ClonedSource RemoteHead VCS",
        "._usecase.analysis_limits": "with_analysis_time_limit",
        "._usecase.analyze": "AnalyzeUseCase",
        "._usecase.batch": "Batch",
        "._usecase.gate": "CloneGateStatistics GateEntry",
        "._usecase.options": "Option UseCaseConfig",
        "._usecase.pressure": "BudgetDecision PressureController",
        "._usecase.worker": "ClusterWorker WorkerTotals",
    }.items()
    for name in names.split()
}
# Every other option (``with_*``) is the use case's, from one module.
_OPTIONS = "._usecase.options"


def __getattr__(name: str) -> object:
    module = _LAZY.get(name, _OPTIONS if name.startswith("with_") else None)
    if module is None or name not in __all__:
        raise AttributeError(f"module 'clonegate' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "ANALYZER_VERSION",
    "VCS",
    "AnalysisCache",
    "AnalysisError",
    "AnalysisReport",
    "AnalysisSettings",
    "AnalysisTotals",
    "AnalyzeUseCase",
    "Analyzer",
    "AnalyzerStatistics",
    "AuthenticationError",
    "Batch",
    "BatchSummary",
    "BudgetDecision",
    "CloneCancelledError",
    "CloneError",
    "CloneGateStatistics",
    "CloneSettings",
    "CloneTimeoutError",
    "ClonedSource",
    "ClusterSettings",
    "ClusterWorker",
    "Credential",
    "DamagedRow",
    "DamagedRowError",
    "Difference",
    "DulwichVCS",
    "EmptyRepositoryError",
    "ErrorKind",
    "Event",
    "EventKind",
    "GateEntry",
    "HistoryEntry",
    "InvalidRepositoryError",
    "InvalidURLError",
    "Inventory",
    "Job",
    "JobQueue",
    "Lease",
    "LeaseLostError",
    "LimitConfigError",
    "LimitError",
    "Limiter",
    "LimiterUnavailableError",
    "MemoryReading",
    "MemorySensor",
    "Option",
    "OutOfMemoryError",
    "Patience",
    "PressureController",
    "ProtocolError",
    "RedisHolder",
    "RedisSemaphore",
    "RedisSemaphoreStatistics",
    "RedisUnavailableError",
    "RedisWaiter",
    "RedisWorkQueue",
    "RefInfo",
    "RemoteHead",
    "RepoURL",
    "ReportError",
    "ReportStore",
    "RepositoryFacts",
    "RepositoryNotFoundError",
    "RepositoryReport",
    "RepositoryStatus",
    "Retry",
    "Retrying",
    "RunInfo",
    "RunStatus",
    "Running",
    "SQLiteStore",
    "ScanError",
    "StorageError",
    "StoreError",
    "StoreReader",
    "StoreSettings",
    "StoredResult",
    "TestCase",
    "TestFile",
    "TestInventoryAnalyzer",
    "TestStatus",
    "TestSuite",
    "Timings",
    "TooLargeError",
    "TooSlowError",
    "TransportError",
    "UseCaseConfig",
    "WeightedSemaphore",
    "WeightedSemaphoreStatistics",
    "WorkerDied",
    "WorkerPool",
    "WorkerPoolStatistics",
    "WorkerTotals",
    "__version__",
    "credential_for",
    "open_analyzer",
    "open_redis",
    "open_store",
    "open_store_reader",
    "open_worker_pool",
    "parse_repo_url",
    "parse_size",
    "redact",
    "report_from_json",
    "to_json",
    "visible",
    "with_analysis_time_limit",
    "with_analysis_timeout",
    "with_clone_timeout",
    "with_clone_weight",
    "with_event_hook",
    "with_global_limiter",
    "with_host_limit",
    "with_host_limiter",
    "with_incremental",
    "with_keep_clones",
    "with_max_concurrent_clones",
    "with_memory_budget",
    "with_netrc",
    "with_remote_head_limit",
    "with_repository_timeout",
    "with_result_store",
    "with_stuck_threshold",
    "with_token",
]

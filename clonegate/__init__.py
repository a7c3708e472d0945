"""clonegate: clone many git repositories under a hard, fair limit, and analyze each clone."""

from typing import TYPE_CHECKING

from ._version import __version__

if TYPE_CHECKING:
    from ._adapters.analysis.analyzer import ANALYZER_VERSION, TestInventoryAnalyzer
    from ._adapters.git.dulwich_vcs import DulwichVCS
    from ._adapters.workers import (
        WorkerDied,
        WorkerPool,
        WorkerPoolStatistics,
        open_worker_pool,
    )
    from ._domain.credentials import Credential, credential_for
    from ._domain.errors import (
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
    from ._domain.memory import MemoryReading, MemorySensor
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
    from ._domain.urls import RepoURL, parse_repo_url, redact, visible
    from ._domain.vcs import VCS, ClonedSource
    from ._usecase.analyze import AnalyzeUseCase
    from ._usecase.batch import Batch
    from ._usecase.gate import CloneGateStatistics, GateEntry
    from ._usecase.options import (
        Option,
        UseCaseConfig,
        with_analysis_timeout,
        with_ca_bundle,
        with_clone_depth,
        with_clone_memory_limit,
        with_clone_timeout,
        with_clone_weight,
        with_connect_timeout,
        with_event_hook,
        with_keep_clones,
        with_low_speed_limit,
        with_max_concurrent_analyses,
        with_max_concurrent_clones,
        with_max_repo_size,
        with_memory_budget,
        with_netrc,
        with_read_timeout,
        with_ssh_command,
        with_stuck_threshold,
        with_token,
        with_work_dir,
    )
    from ._usecase.pressure import BudgetDecision, PressureController

# Where each public name lives. Nothing is imported until it is used: ``import
# clonegate`` (and ``clonegate --version``) stays cheap, and the adapters' libraries
# (trio, dulwich, tree-sitter) load only when a program uses them (ADR 0001).
# AnalyzeUseCase comes from the composition root, which wires the default adapters.
_LAZY = {
    "ANALYZER_VERSION": "._adapters.analysis.analyzer",
    "TestInventoryAnalyzer": "._adapters.analysis.analyzer",
    "DulwichVCS": "._adapters.git.dulwich_vcs",
    "WorkerDied": "._adapters.workers",
    "WorkerPool": "._adapters.workers",
    "WorkerPoolStatistics": "._adapters.workers",
    "open_worker_pool": "._adapters.workers",
    "Credential": "._domain.credentials",
    "credential_for": "._domain.credentials",
    "AuthenticationError": "._domain.errors",
    "CloneCancelledError": "._domain.errors",
    "CloneError": "._domain.errors",
    "CloneTimeoutError": "._domain.errors",
    "EmptyRepositoryError": "._domain.errors",
    "ErrorKind": "._domain.errors",
    "InvalidRepositoryError": "._domain.errors",
    "InvalidURLError": "._domain.errors",
    "ProtocolError": "._domain.errors",
    "RepositoryNotFoundError": "._domain.errors",
    "StorageError": "._domain.errors",
    "TooLargeError": "._domain.errors",
    "TooSlowError": "._domain.errors",
    "OutOfMemoryError": "._domain.errors",
    "TransportError": "._domain.errors",
    "Event": "._domain.events",
    "EventKind": "._domain.events",
    "AnalysisReport": "._domain.inventory",
    "Analyzer": "._domain.inventory",
    "Inventory": "._domain.inventory",
    "RepositoryFacts": "._domain.inventory",
    "ScanError": "._domain.inventory",
    "TestCase": "._domain.inventory",
    "TestFile": "._domain.inventory",
    "TestStatus": "._domain.inventory",
    "TestSuite": "._domain.inventory",
    "AnalysisTotals": "._domain.reports",
    "BatchSummary": "._domain.reports",
    "RefInfo": "._domain.reports",
    "ReportError": "._domain.reports",
    "RepositoryReport": "._domain.reports",
    "RepositoryStatus": "._domain.reports",
    "Timings": "._domain.reports",
    "WeightedSemaphore": "._domain.semaphore",
    "WeightedSemaphoreStatistics": "._domain.semaphore",
    "RepoURL": "._domain.urls",
    "parse_repo_url": "._domain.urls",
    "parse_size": "._domain.sizes",
    "MemoryReading": "._domain.memory",
    "MemorySensor": "._domain.memory",
    "BudgetDecision": "._usecase.pressure",
    "PressureController": "._usecase.pressure",
    "with_memory_budget": "._usecase.options",
    "redact": "._domain.urls",
    "visible": "._domain.urls",
    "VCS": "._domain.vcs",
    "ClonedSource": "._domain.vcs",
    "AnalyzeUseCase": "._app",
    "Batch": "._usecase.batch",
    "CloneGateStatistics": "._usecase.gate",
    "GateEntry": "._usecase.gate",
    "Option": "._usecase.options",
    "UseCaseConfig": "._usecase.options",
    "with_analysis_timeout": "._usecase.options",
    "with_ca_bundle": "._usecase.options",
    "with_clone_depth": "._usecase.options",
    "with_clone_timeout": "._usecase.options",
    "with_clone_weight": "._usecase.options",
    "with_connect_timeout": "._usecase.options",
    "with_event_hook": "._usecase.options",
    "with_keep_clones": "._usecase.options",
    "with_max_concurrent_analyses": "._usecase.options",
    "with_max_concurrent_clones": "._usecase.options",
    "with_low_speed_limit": "._usecase.options",
    "with_clone_memory_limit": "._usecase.options",
    "with_max_repo_size": "._usecase.options",
    "with_netrc": "._usecase.options",
    "with_read_timeout": "._usecase.options",
    "with_ssh_command": "._usecase.options",
    "with_stuck_threshold": "._usecase.options",
    "with_token": "._usecase.options",
    "with_work_dir": "._usecase.options",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
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
    "AnalysisReport",
    "AnalysisTotals",
    "AnalyzeUseCase",
    "Analyzer",
    "AuthenticationError",
    "Batch",
    "BatchSummary",
    "BudgetDecision",
    "CloneCancelledError",
    "CloneError",
    "CloneGateStatistics",
    "CloneTimeoutError",
    "ClonedSource",
    "Credential",
    "DulwichVCS",
    "EmptyRepositoryError",
    "ErrorKind",
    "Event",
    "EventKind",
    "GateEntry",
    "InvalidRepositoryError",
    "InvalidURLError",
    "Inventory",
    "MemoryReading",
    "MemorySensor",
    "Option",
    "OutOfMemoryError",
    "PressureController",
    "ProtocolError",
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
    "TooLargeError",
    "TooSlowError",
    "TransportError",
    "UseCaseConfig",
    "WeightedSemaphore",
    "WeightedSemaphoreStatistics",
    "WorkerDied",
    "WorkerPool",
    "WorkerPoolStatistics",
    "__version__",
    "credential_for",
    "open_worker_pool",
    "parse_repo_url",
    "parse_size",
    "redact",
    "visible",
    "with_analysis_timeout",
    "with_ca_bundle",
    "with_clone_depth",
    "with_clone_memory_limit",
    "with_clone_timeout",
    "with_clone_weight",
    "with_connect_timeout",
    "with_event_hook",
    "with_keep_clones",
    "with_low_speed_limit",
    "with_max_concurrent_analyses",
    "with_max_concurrent_clones",
    "with_max_repo_size",
    "with_memory_budget",
    "with_netrc",
    "with_read_timeout",
    "with_ssh_command",
    "with_stuck_threshold",
    "with_token",
    "with_work_dir",
]

"""clonegate: clone many git repositories under a hard, fair limit, and analyze each clone.

The names here are the library's everyday API: the composition (``open_analyzer``),
the use case and its options, the adapters' settings, the ports, the reports and the
errors a caller catches. The rest of the public API lives in public submodules:
``clonegate.errors`` (one error type per failure kind), ``clonegate.store`` (the
result store), ``clonegate.cluster`` (the cluster mode on Redis) and
``clonegate.workers`` (the worker processes). Every other module is private.
"""

from ._exports import exports
from ._version import __version__ as __version__

TYPE_CHECKING = False  # not typing's: a few ms before the CLI starts its zygote (ADR 0003)

if TYPE_CHECKING:
    from ._adapters.analysis.analyzer import ANALYZER_VERSION as ANALYZER_VERSION
    from ._adapters.analysis.analyzer import AnalyzerStatistics as AnalyzerStatistics
    from ._adapters.analysis.analyzer import TestInventoryAnalyzer as TestInventoryAnalyzer
    from ._adapters.analysis.settings import AnalysisSettings as AnalysisSettings
    from ._adapters.git.dulwich_vcs import DulwichVCS as DulwichVCS
    from ._adapters.git.settings import CloneSettings as CloneSettings
    from ._adapters.netrc_file import with_netrc as with_netrc
    from ._app import open_analyzer as open_analyzer
    from ._domain.credentials import Credential as Credential
    from ._domain.errors import AnalysisError as AnalysisError
    from ._domain.errors import CloneError as CloneError
    from ._domain.errors import ErrorKind as ErrorKind
    from ._domain.errors import InvalidURLError as InvalidURLError
    from ._domain.events import Event as Event
    from ._domain.events import EventKind as EventKind
    from ._domain.inventory import AnalysisReport as AnalysisReport
    from ._domain.inventory import Analyzer as Analyzer
    from ._domain.inventory import Inventory as Inventory
    from ._domain.inventory import RepositoryFacts as RepositoryFacts
    from ._domain.inventory import ScanError as ScanError
    from ._domain.inventory import TestCase as TestCase
    from ._domain.inventory import TestFile as TestFile
    from ._domain.inventory import TestStatus as TestStatus
    from ._domain.inventory import TestSuite as TestSuite
    from ._domain.limits import Limiter as Limiter
    from ._domain.memory import MemoryReading as MemoryReading
    from ._domain.memory import MemorySensor as MemorySensor
    from ._domain.report_json import report_from_json as report_from_json
    from ._domain.report_json import to_json as to_json
    from ._domain.reports import AnalysisTotals as AnalysisTotals
    from ._domain.reports import BatchSummary as BatchSummary
    from ._domain.reports import RefInfo as RefInfo
    from ._domain.reports import ReportError as ReportError
    from ._domain.reports import RepositoryReport as RepositoryReport
    from ._domain.reports import RepositoryStatus as RepositoryStatus
    from ._domain.reports import Timings as Timings
    from ._domain.semaphore import WeightedSemaphore as WeightedSemaphore
    from ._domain.semaphore import WeightedSemaphoreStatistics as WeightedSemaphoreStatistics
    from ._domain.sizes import parse_size as parse_size
    from ._domain.urls import RepoURL as RepoURL
    from ._domain.urls import parse_repo_url as parse_repo_url
    from ._domain.urls import redact as redact
    from ._domain.urls import visible as visible
    from ._domain.vcs import VCS as VCS
    from ._domain.vcs import ClonedSource as ClonedSource
    from ._domain.vcs import RemoteHead as RemoteHead
    from ._usecase.analysis_limits import with_analysis_time_limit as with_analysis_time_limit
    from ._usecase.analyze import AnalyzeUseCase as AnalyzeUseCase
    from ._usecase.batch import Batch as Batch
    from ._usecase.gate import CloneGateStatistics as CloneGateStatistics
    from ._usecase.options import Option as Option
    from ._usecase.options import UseCaseConfig as UseCaseConfig
    from ._usecase.options import with_adaptive as with_adaptive
    from ._usecase.options import with_analysis_timeout as with_analysis_timeout
    from ._usecase.options import with_breaker as with_breaker
    from ._usecase.options import with_clone_timeout as with_clone_timeout
    from ._usecase.options import with_clone_weight as with_clone_weight
    from ._usecase.options import with_event_hook as with_event_hook
    from ._usecase.options import with_global_limiter as with_global_limiter
    from ._usecase.options import with_host_limit as with_host_limit
    from ._usecase.options import with_host_limiter as with_host_limiter
    from ._usecase.options import with_host_rate as with_host_rate
    from ._usecase.options import with_incremental as with_incremental
    from ._usecase.options import with_keep_clones as with_keep_clones
    from ._usecase.options import with_max_concurrent_clones as with_max_concurrent_clones
    from ._usecase.options import with_memory_budget as with_memory_budget
    from ._usecase.options import with_remote_head_limit as with_remote_head_limit
    from ._usecase.options import with_repository_timeout as with_repository_timeout
    from ._usecase.options import with_result_store as with_result_store
    from ._usecase.options import with_retries as with_retries
    from ._usecase.options import with_stuck_threshold as with_stuck_threshold
    from ._usecase.options import with_token as with_token

# The one table of this module's names: where each lives (ADR 0001).
_TABLE = {
    "._version": "__version__",
    # The composition root builds the default adapters (ADR 0017).
    "._app": "open_analyzer",
    "._usecase.analyze": "AnalyzeUseCase",
    "._usecase.batch": "Batch",
    "._usecase.gate": "CloneGateStatistics",
    "._usecase.options": (
        "Option UseCaseConfig with_adaptive with_analysis_timeout with_breaker "
        "with_clone_timeout with_clone_weight with_event_hook with_global_limiter "
        "with_host_limit with_host_limiter with_host_rate "
        "with_incremental with_keep_clones with_max_concurrent_clones with_memory_budget "
        "with_remote_head_limit with_repository_timeout with_result_store with_retries "
        "with_stuck_threshold with_token"
    ),
    "._usecase.analysis_limits": "with_analysis_time_limit",
    "._adapters.netrc_file": "with_netrc",
    "._adapters.git.settings": "CloneSettings",
    "._adapters.git.dulwich_vcs": "DulwichVCS",
    "._adapters.analysis.settings": "AnalysisSettings",
    "._adapters.analysis.analyzer": "ANALYZER_VERSION AnalyzerStatistics TestInventoryAnalyzer",
    # The ports, and the values that cross them.
    "._domain.vcs": "VCS ClonedSource RemoteHead",
    "._domain.inventory": (
        "AnalysisReport Analyzer Inventory RepositoryFacts ScanError TestCase TestFile "
        "TestStatus TestSuite"
    ),
    "._domain.limits": "Limiter",
    "._domain.memory": "MemoryReading MemorySensor",
    "._domain.credentials": "Credential",
    "._domain.semaphore": "WeightedSemaphore WeightedSemaphoreStatistics",
    "._domain.reports": (
        "AnalysisTotals BatchSummary RefInfo ReportError RepositoryReport RepositoryStatus Timings"
    ),
    "._domain.report_json": "report_from_json to_json",
    "._domain.events": "Event EventKind",
    # The bases; each kind's own type is in clonegate.errors.
    "._domain.errors": "AnalysisError CloneError ErrorKind InvalidURLError",
    "._domain.urls": "RepoURL parse_repo_url redact visible",
    "._domain.sizes": "parse_size",
}

__all__, __getattr__, __dir__ = exports(__name__, _TABLE)

"""clonegate: clone many git repositories under a hard, fair limit, and analyze each clone."""

from ._analysis._analyzer import ANALYZER_VERSION, TestInventoryAnalyzer
from ._dulwich_vcs import DulwichVCS
from ._errors import (
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
from ._inventory import (
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
from ._semaphore import WeightedSemaphore, WeightedSemaphoreStatistics
from ._urls import RepoURL, parse_repo_url, redact
from ._vcs import VCS, ClonedSource
from ._version import __version__

__all__ = [
    "ANALYZER_VERSION",
    "VCS",
    "AnalysisReport",
    "Analyzer",
    "AuthenticationError",
    "CloneCancelledError",
    "CloneError",
    "CloneTimeoutError",
    "ClonedSource",
    "DulwichVCS",
    "EmptyRepositoryError",
    "ErrorKind",
    "InvalidURLError",
    "Inventory",
    "RepoURL",
    "RepositoryFacts",
    "RepositoryNotFoundError",
    "ScanError",
    "StorageError",
    "TestCase",
    "TestFile",
    "TestInventoryAnalyzer",
    "TestStatus",
    "TestSuite",
    "TransportError",
    "WeightedSemaphore",
    "WeightedSemaphoreStatistics",
    "__version__",
    "parse_repo_url",
    "redact",
]

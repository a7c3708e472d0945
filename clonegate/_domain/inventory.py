"""The test inventory of a repository: test files, their suites and tests, and totals."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from .vcs import ClonedSource

__all__ = [
    "ANALYSIS_MEMORY_LIMIT",
    "ANALYSIS_TIME_LIMIT",
    "AnalysisReport",
    "Analyzer",
    "Inventory",
    "RepositoryFacts",
    "ScanError",
    "TestCase",
    "TestFile",
    "TestStatus",
    "TestSuite",
]


class TestStatus(StrEnum):
    """How a test would run. ADR 0005 says which marker gives which status."""

    __test__ = False  # not a pytest test class

    ACTIVE = "active"
    SKIPPED = "skipped"
    TODO = "todo"
    FOCUSED = "focused"
    XFAIL = "xfail"


@dataclass(frozen=True, slots=True)
class TestCase:
    """One test as written in the source; a parametrized test counts once."""

    __test__ = False

    name: str
    line: int  # 1-based
    status: TestStatus = TestStatus.ACTIVE

    # Inventories are pickled back from the analyzer's worker processes, tens of
    # thousands of objects at a time: rebuilding from positional fields costs a third
    # of the slots dataclass's own state protocol (bench/README.md).
    def __reduce__(self) -> tuple[type[TestCase], tuple[str, int, TestStatus]]:
        return TestCase, (self.name, self.line, self.status)


@dataclass(frozen=True, slots=True)
class TestSuite:
    """A group of tests: a describe block, a test class, a Go test with subtests, a Rust module."""

    __test__ = False

    name: str
    line: int
    suites: tuple[TestSuite, ...] = ()
    tests: tuple[TestCase, ...] = ()

    def all_tests(self) -> Iterator[TestCase]:
        return _all_tests(self.tests, self.suites)

    def __reduce__(self) -> tuple[type[TestSuite], tuple[object, ...]]:  # see TestCase
        return TestSuite, (self.name, self.line, self.suites, self.tests)


@dataclass(frozen=True, slots=True)
class TestFile:
    """A file with tests, relative to the repository root (POSIX separators).

    ``config_note`` says when the framework's defaults were used although a config
    file exists, and why (``vitest.config.ts is code: vitest's default include``).
    """

    __test__ = False

    path: str
    framework: str  # pytest, unittest, jest, vitest, mocha, go-testing, junit4, junit5, cargo-test
    language: str  # python, javascript, typescript, tsx, go, java, rust
    suites: tuple[TestSuite, ...] = ()
    tests: tuple[TestCase, ...] = ()
    config_note: str = ""

    def all_tests(self) -> Iterator[TestCase]:
        return _all_tests(self.tests, self.suites)

    def __reduce__(self) -> tuple[type[TestFile], tuple[object, ...]]:  # see TestCase
        return TestFile, (
            self.path,
            self.framework,
            self.language,
            self.suites,
            self.tests,
            self.config_note,
        )


def _all_tests(tests: tuple[TestCase, ...], suites: tuple[TestSuite, ...]) -> Iterator[TestCase]:
    """Direct tests first, then each suite's, depth first: the order of the file."""
    yield from tests
    for suite in suites:
        yield from suite.all_tests()


@dataclass(frozen=True, slots=True)
class ScanError:
    """A file the analyzer could not take in; the rest of the repository still was."""

    path: str
    phase: str  # read, parse
    message: str


@dataclass(frozen=True, slots=True)
class Inventory:
    files: tuple[TestFile, ...] = ()
    errors: tuple[ScanError, ...] = ()

    @property
    def test_files(self) -> int:
        return len(self.files)

    @property
    def tests(self) -> int:
        return sum(1 for f in self.files for _ in f.all_tests())

    def by_framework(self) -> dict[str, int]:
        """Tests per framework."""
        return dict(sorted(Counter(f.framework for f in self.files for _ in f.all_tests()).items()))

    def by_language(self) -> dict[str, int]:
        """Tests per language."""
        return dict(sorted(Counter(f.language for f in self.files for _ in f.all_tests()).items()))

    def by_status(self) -> dict[str, int]:
        """Tests per status; every status is present, zero or not."""
        counts = Counter(t.status for f in self.files for t in f.all_tests())
        return {status.value: counts[status] for status in TestStatus}


@dataclass(frozen=True, slots=True)
class RepositoryFacts:
    """Basic facts about the analyzed commit.

    ``unread``: files that look like tests of a language or framework the analyzer
    does not read, per language or framework (``{"ruby": 34}``), and
    ``unread_conventions`` the same files per convention they matched
    (``{"spec/**/*_spec.rb": 34}``), ADR 0004: "0 tests" with files here means not
    understood, not none.
    """

    branch: str
    commit: str
    committed_at: datetime
    files_scanned: int  # regular files in the commit's tree (not symlinks, not submodules)
    bytes_on_disk: int  # the clone's size
    bytes_read: int  # what the analyzer read: the candidate test files
    files_per_language: dict[str, int] = field(default_factory=dict)
    unread: dict[str, int] = field(default_factory=dict)
    unread_conventions: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AnalysisReport:
    facts: RepositoryFacts
    inventory: Inventory
    analyzer_version: str


# One analysis's envelope by default (issue 38): seconds it may run (its waits for an
# analysis process do not count), and memory on top of its worker process's start.
ANALYSIS_TIME_LIMIT = 2 * 60.0
ANALYSIS_MEMORY_LIMIT = 1 << 30


class Analyzer(Protocol):
    """Takes the test inventory of a cloned repository.

    Failures that are the repository's doing (a limit passed, a worker that died)
    are raised as :class:`clonegate.AnalysisError`; an analyzer that waits for a
    slot other repositories share marks the wait (``clonegate._domain.work_clock``)
    so that it does not count against the repository's limits.
    """

    @property
    def version(self) -> str | None:
        """The version its reports will carry, known before analyzing: an incremental
        run reuses a stored result only if this version made it. None: it states none
        (an incremental run refuses such an analyzer)."""
        ...

    @property
    def processes(self) -> int | None:
        """How many analyses it runs at once; None: one per CPU. A batch keeps about
        twice the clones and analyses at once in flight, not more."""
        ...

    async def analyze(self, source: ClonedSource) -> AnalysisReport: ...

"""A stored report and its inventory as the store's tests write them: one repository,
nested suites, every status, a scan error."""

from __future__ import annotations

from datetime import UTC, datetime

from clonegate import (
    AnalysisTotals,
    Inventory,
    RefInfo,
    RepositoryReport,
    RepositoryStatus,
    ScanError,
    TestCase,
    TestFile,
    TestStatus,
    TestSuite,
)

KEY = "git://example.org/team/repo"
WHEN = datetime(2025, 3, 4, 5, 6, 7, tzinfo=UTC)

INVENTORY = Inventory(
    files=(
        TestFile(
            "tests/test_a.py",
            "pytest",
            "python",
            suites=(
                TestSuite(
                    "TestOuter",
                    3,
                    suites=(TestSuite("TestInner", 8, tests=(TestCase("test_deep", 9),)),),
                    tests=(TestCase("test_skipped", 4, TestStatus.SKIPPED),),
                ),
            ),
            tests=(TestCase("test_top", 1), TestCase("test_top", 20, TestStatus.XFAIL)),
        ),
        TestFile(
            "web/a.test.ts", "vitest", "typescript", tests=(TestCase("adds", 2),), config_note="n"
        ),
    ),
    errors=(ScanError("tests/broken.py", "parse", "syntax error at line 1: invalid syntax"),),
)


def report(
    index: int = 0, commit: str = "a" * 40, inventory: Inventory = INVENTORY
) -> RepositoryReport:
    return RepositoryReport(
        url="git://example.org/team/repo.git",
        index=index,
        status=RepositoryStatus.OK,
        ref=RefInfo("main", commit, WHEN),
        analysis=AnalysisTotals(2, 5, {"pytest": 4, "vitest": 1}, {}, {}, 1, 30, "v-test"),
        inventory=inventory,
    )

"""The test-inventory analyzer on a fixture repository whose every test was counted by hand.

tests/fixtures/inventory holds one file per framework; the comment on each test line
says the status it must get (ADR 0005). The repository made from it also gets a
symlink that points outside, a file over 10 MB, and files in vendored directories.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from clonegate import (
    ANALYZER_VERSION,
    CloneSettings,
    DulwichVCS,
    Inventory,
    TestCase,
    TestFile,
    TestInventoryAnalyzer,
    TestStatus,
    TestSuite,
)
from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file, scan_commit

from .support.inventory_fixture import FIXTURE, add_hazards
from .support.repos import commit_tree
from .support.servers import git_daemon

A, S, T, F, X = (
    TestStatus.ACTIVE,
    TestStatus.SKIPPED,
    TestStatus.TODO,
    TestStatus.FOCUSED,
    TestStatus.XFAIL,
)


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("inventory")
    head = commit_tree(FIXTURE, root, "inventory", extra=add_hazards)
    return root, head


@pytest.fixture(scope="module")
def inventory(fixture_repo: tuple[Path, str]) -> Inventory:
    root, head = fixture_repo
    return scan_commit(str(root / "inventory.git"), head).inventory


def _file(inventory: Inventory, path: str) -> TestFile:
    (found,) = (f for f in inventory.files if f.path == path)
    return found


def _statuses(tests: Iterator[TestCase]) -> list[tuple[str, TestStatus]]:
    return [(t.name, t.status) for t in tests]


def test_totals(inventory: Inventory) -> None:
    assert inventory.test_files == 11
    assert inventory.tests == 58
    assert inventory.by_framework() == {
        "cargo-test": 5,
        "go-testing": 5,
        "jest": 13,
        "junit4": 3,
        "junit5": 5,
        "mocha": 4,
        "pytest": 11,
        "unittest": 5,
        "vitest": 7,
    }
    assert inventory.by_status() == {
        "active": 28,
        "skipped": 21,
        "todo": 2,
        "focused": 2,
        "xfail": 5,
    }
    assert inventory.by_language() == {
        "go": 5,
        "java": 8,
        "javascript": 17,
        "python": 16,
        "rust": 5,
        "tsx": 2,
        "typescript": 5,
    }


def test_scan_errors_name_path_and_phase(inventory: Inventory) -> None:
    errors = {(e.path, e.phase): e.message for e in inventory.errors}
    assert set(errors) == {
        ("tests/test_broken.py", "parse"),
        ("src/broken.test.js", "parse"),
        ("tests/test_huge.py", "read"),
    }
    assert errors["tests/test_broken.py", "parse"].startswith("syntax error at line 1")
    assert errors["src/broken.test.js", "parse"].startswith("syntax error at line")
    assert errors["tests/test_huge.py", "read"] == (
        "10485770 bytes, larger than the 10 MiB file limit: skipped"
    )


def test_symlinks_vendored_and_non_test_files_are_not_read(inventory: Inventory) -> None:
    paths = {f.path for f in inventory.files} | {e.path for e in inventory.errors}
    assert not any("escape" in p for p in paths)
    assert not any(p.startswith(("node_modules/", "vendor/")) for p in paths)
    assert "tests/helpers.py" not in paths
    assert "rust/src/main.rs" not in paths
    assert "src/main/java/com/example/Calculator.java" not in paths


def test_pytest(inventory: Inventory) -> None:
    f = _file(inventory, "tests/test_calc.py")
    assert (f.framework, f.language) == ("pytest", "python")
    assert _statuses(iter(f.tests)) == [
        ("test_add", A),
        ("test_skip", S),
        ("test_skipif", S),
        ("test_xfail", X),
        ("test_param", A),
        ("test_async", A),
    ]
    group, skipped = f.suites
    assert (group.name, group.line) == ("TestGroup", 35)
    assert _statuses(group.all_tests()) == [("test_one", A), ("test_two", X), ("test_deep", A)]
    assert group.suites[0] == TestSuite("TestNested", 41, (), (TestCase("test_deep", 42, A),))
    assert _statuses(skipped.all_tests()) == [("test_a", S), ("test_b", S)]


def test_unittest(inventory: Inventory) -> None:
    f = _file(inventory, "tests/test_legacy.py")
    assert f.framework == "unittest"
    assert [s.name for s in f.suites] == ["LegacyTests", "SkippedTests"]
    assert _statuses(f.all_tests()) == [
        ("test_ok", A),
        ("test_skipped", S),
        ("test_skip_if", S),
        ("test_expected", X),
        ("test_x", S),
    ]


def test_jest(inventory: Inventory) -> None:
    f = _file(inventory, "src/__tests__/math.test.js")
    assert (f.framework, f.language) == ("jest", "javascript")  # by the root jest.config.js
    math, skipped, focused = f.suites
    assert _statuses(iter(math.tests)) == [
        ("adds", A),
        ("skipped", S),
        ("x skipped", S),
        ("later", T),
        ("each %i", A),
        ("known bug", X),
        ("loop ${n}", A),
    ]
    assert math.suites[0].name == "table %i"
    assert _statuses(math.suites[0].all_tests()) == [("inside table", A)]
    assert _statuses(skipped.all_tests()) == [("inherits skip", S), ("skip beats only", S)]
    assert _statuses(focused.all_tests()) == [("inherits focus", F), ("still todo", T)]
    assert f.tests == (TestCase("alone", 28, F),)


def test_vitest_typescript_and_tsx(inventory: Inventory) -> None:
    ts = _file(inventory, "web/src/util.spec.ts")
    assert (ts.framework, ts.language) == ("vitest", "typescript")  # by import
    assert _statuses(ts.all_tests()) == [
        ("typed", A),
        ("concurrent", A),
        ("skip on CI", S),
        ("fails", X),
        ("tagged $a", A),
    ]
    tsx = _file(inventory, "web/src/Button.test.tsx")
    # No framework import: the nearest config (web/vitest.config.ts) wins over the root's jest.
    assert (tsx.framework, tsx.language) == ("vitest", "tsx")
    assert _statuses(tsx.all_tests()) == [("renders", A), ("clicks", S)]


def test_mocha(inventory: Inventory) -> None:
    f = _file(inventory, "test/api.spec.js")
    assert f.framework == "mocha"  # by import, although the root has a jest config
    (api,) = f.suites
    assert api.suites[0].name == "when ok"
    assert _statuses(api.all_tests()) == [
        ("pending", S),
        ("x pending", S),
        ("responds", A),
        ("also", A),
    ]


def test_go(inventory: Inventory) -> None:
    f = _file(inventory, "pkg/calc/calc_test.go")
    assert (f.framework, f.language) == ("go-testing", "go")
    assert _statuses(iter(f.tests)) == [("TestAdd", A), ("TestSkipped", S)]
    (table,) = f.suites
    assert table.name == "TestTable"
    assert _statuses(iter(table.tests)) == [("tc.name", A)]
    assert table.suites[0].name == "nested"
    assert _statuses(table.suites[0].all_tests()) == [("deeper", A), ("skipped deeper", S)]


def test_junit(inventory: Inventory) -> None:
    five = _file(inventory, "src/test/java/com/example/CalculatorTest.java")
    assert five.framework == "junit5"
    (calculator,) = five.suites
    assert [s.name for s in calculator.suites] == ["WhenEmpty", "DisabledGroup"]
    assert _statuses(calculator.all_tests()) == [
        ("adds", A),
        ("disabled", S),
        ("param", A),
        ("isEmpty", A),
        ("inherits", S),
    ]
    four = _file(inventory, "src/test/java/com/example/LegacyTest.java")
    assert four.framework == "junit4"
    assert _statuses(four.all_tests()) == [("works", A), ("ignored", S), ("throwsIt", A)]


def test_rust(inventory: Inventory) -> None:
    lib = _file(inventory, "rust/src/lib.rs")
    assert (lib.framework, lib.language) == ("cargo-test", "rust")
    (module,) = lib.suites
    assert module.name == "tests"
    assert _statuses(module.all_tests()) == [
        ("adds", A),
        ("slow", S),
        ("async_works", A),
        ("panics", A),
    ]
    integration = _file(inventory, "rust/tests/integration.rs")
    assert integration.tests == (TestCase("integration", 2, A),)


def test_facts(fixture_repo: tuple[Path, str]) -> None:
    root, head = fixture_repo
    result = scan_commit(str(root / "inventory.git"), head)
    # Regular files only: the two symlinks are not counted.
    assert result.files_scanned == 21
    assert result.files_per_language["python"] == 5
    assert result.files_per_language["rust"] == 3
    assert result.bytes_read > 0


async def test_analyzer_end_to_end_in_a_worker(
    fixture_repo: tuple[Path, str], tmp_path: Path
) -> None:
    root, head = fixture_repo
    with git_daemon(root) as daemon:
        for checkout in (False, True):
            source = await DulwichVCS(CloneSettings(checkout=checkout, work_dir=tmp_path)).clone(
                daemon.url("inventory")
            )
            try:
                report = await TestInventoryAnalyzer().analyze(source)
            finally:
                await source.aclose()
            assert report.analyzer_version == ANALYZER_VERSION
            assert report.facts.commit == head
            assert report.facts.branch == "main"
            assert report.facts.files_scanned == 21
            assert report.inventory.tests == 58
            assert report.inventory.by_status()["skipped"] == 21
            assert len(report.inventory.errors) == 3


def test_javascript_call_chains() -> None:
    source = b"""
const { expect } = require('chai');
describe('chains', function () {
  it('slow', function () {}).timeout(5000);
  it.each([1, 2])('each %i', (n) => {});
  describe.skip.each([1])('table %i', () => { test('inner', () => {}); });
  helpers.it('not a test', () => {});
  register(describe, it);
  const test = makeTest();
});
"""
    scopes = ConfigScopes(["package.json"], lambda _: b'{"devDependencies": {"mocha": "^10"}}')
    found = analyze_file("test/chains.spec.js", source, scopes)
    assert found is not None
    assert found.framework == "mocha"
    (chains,) = found.suites
    assert [(t.name, t.line) for t in chains.tests] == [("slow", 4), ("each %i", 5)]
    (table,) = chains.suites
    assert (table.name, _statuses(iter(table.tests))) == ("table %i", [("inner", S)])


def test_scan_errors_are_in_the_json_with_path_phase_and_a_safe_reason() -> None:
    """Which file failed and why reaches the JSON; a repository chose the path and the
    text, so both are escaped, carry no credentials, and are cut short."""
    from datetime import UTC, datetime

    from clonegate import AnalysisTotals
    from clonegate._domain.inventory import AnalysisReport, RepositoryFacts, ScanError
    from clonegate_cli._output import as_json

    hostile = ScanError(
        "tests/\x1b[2Jtest_x.py",
        "parse",
        "syntax error near https://user:secret@example.com/x " + "y" * 1000,
    )
    facts = RepositoryFacts("main", "0" * 40, datetime(2026, 1, 1, tzinfo=UTC), 1, 0, 0)
    totals = AnalysisTotals.of(AnalysisReport(facts, Inventory((), (hostile,)), "v"))
    document = as_json(totals)
    assert document["scan_errors"] == 1
    [error] = document["errors"]
    assert error["path"] == "tests/\\x1b[2Jtest_x.py"
    assert error["phase"] == "parse"
    assert error["message"].startswith("syntax error near https://***@example.com/x yyy")
    assert "secret" not in error["message"]
    assert len(error["message"]) == 300

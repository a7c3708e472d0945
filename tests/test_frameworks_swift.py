"""XCTest and Swift Testing (issue 41, ADR 0005): which Swift files are test files, and
what each holds, table-driven with the cases that must count nothing."""

from __future__ import annotations

import textwrap

import pytest

from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file

from .support.scans import found, grammars_built

XCTEST = [
    (
        "test methods of an XCTestCase subclass",
        """
        import XCTest
        final class ParserTests: XCTestCase {
            func testA() {}
            func testB() async throws {}
            func helper() {}
        }
        """,
        [("ParserTests/testA", "active"), ("ParserTests/testB", "active")],
    ),
    (
        "not tests: parameters, a result, static, private, a struct",
        """
        import XCTest
        class ParserTests: XCTestCase {
            func testWith(_ x: Int) {}
            func testValue() -> Int { 1 }
            static func testStatic() {}
            class func testClass() {}
            private func testPrivate() {}
            fileprivate func testFilePrivate() {}
            func test() {}
        }
        struct Other { func testNot() {} }
        class Plain { func testNot() {} }
        func testFree() {}
        """,
        [("ParserTests/test", "active")],
    ),
    (
        "a runtime skip as a top-level statement is skipped; inside an if it stays active",
        """
        import XCTest
        class SkipTests: XCTestCase {
            func testThrow() throws { throw XCTSkip("later") }
            func testIf() throws { try XCTSkipIf(isLinux, "no") }
            func testUnless() throws { try XCTSkipUnless(hasNetwork) }
            func testInside() throws { if isLinux { throw XCTSkip() } }
            func testGuard() throws { guard ok else { throw XCTSkip() } }
            func testOther() throws { throw MyError() }
        }
        """,
        [
            ("SkipTests/testThrow", "skipped"),
            ("SkipTests/testIf", "skipped"),
            ("SkipTests/testUnless", "skipped"),
            ("SkipTests/testInside", "active"),
            ("SkipTests/testGuard", "active"),
            ("SkipTests/testOther", "active"),
        ],
    ),
    (
        "a subclass of a test class of the file, an extension, a TestCase base",
        """
        import XCTest
        class Derived: BaseTests {
            func testD() {}
        }
        class BaseTests: XCTestCase {}
        extension BaseTests { func testE() {} }
        extension OtherTests { func testF() {} }
        extension String { func testNot() {} }
        class Snapshot: SnapshotTestCase { func testS() {} }
        """,
        [
            ("Derived/testD", "active"),
            ("BaseTests/testE", "active"),
            ("OtherTests/testF", "active"),
            ("Snapshot/testS", "active"),
        ],
    ),
    (
        "nested classes nest; a function local to a test is no test",
        """
        import XCTest
        enum Outer {
            final class InnerTests: XCTestCase {
                func testA() { func testLocal() {} }
            }
        }
        """,
        [("Outer/InnerTests/testA", "active")],
    ),
    (
        "without an XCTest import or an XCTestCase subclass: nothing",
        """
        import Foundation
        class ParserTests: Base { func testA() {} }
        """,
        [],
    ),
]

SWIFT_TESTING = [
    (
        "@Test functions, at the top level and in types",
        """
        import Testing
        @Test func top() {}
        @Test("a display name") func named() async throws {}
        struct ParserTests {
            @Test func a() {}
            func helper() {}
        }
        func notATest() {}
        """,
        [("top", "active"), ("named", "active"), ("ParserTests/a", "active")],
    ),
    (
        "traits: .disabled and .enabled(if:) are skipped, arguments once",
        """
        import Testing
        @Test(.disabled("flaky")) func off() {}
        @Test(.enabled(if: isCI)) func cond() {}
        @Test("rows", arguments: [1, 2, 3]) func rows(x: Int) {}
        @Test(.tags(.slow), .bug("x")) func tagged() {}
        @Test(.serialized) func serial() {}
        """,
        [
            ("off", "skipped"),
            ("cond", "skipped"),
            ("rows", "active"),
            ("tagged", "active"),
            ("serial", "active"),
        ],
    ),
    (
        "a @Suite's traits apply inside it; nested suites nest",
        """
        import Testing
        @Suite(.disabled()) struct Off {
            @Test func a() {}
            @Suite struct Inner { @Test func b() {} }
        }
        @Suite("Named") struct On { @Test func c() {} }
        extension On { @Test func d() {} }
        """,
        [("Off/a", "skipped"), ("Off/Inner/b", "skipped"), ("On/c", "active"), ("On/d", "active")],
    ),
    (
        "withKnownIssue as a top-level statement is xfail; inside an if it stays active",
        """
        import Testing
        @Test func known() { withKnownIssue { #expect(false) } }
        @Test func awaited() async { await withKnownIssue("x") { } }
        @Test func inside() { if flag { withKnownIssue { } } }
        """,
        [("known", "xfail"), ("awaited", "xfail"), ("inside", "active")],
    ),
    (
        "not tests: no @Test, a @Test on something else's local function",
        """
        import Testing
        struct S { func test() {} }
        @Test func outer() { @Sendable func inner() {} }
        """,
        [("outer", "active")],
    ),
    (
        "an extension of a ...Tests type holds no XCTest method in a Swift Testing file",
        """
        import Testing
        extension ParserTests {
            @Test func a() {}
            func testNotMarked() {}
        }
        """,
        [("ParserTests/a", "active")],
    ),
    (
        "every branch of an #if counts, at the top level and in a type",
        """
        import Testing
        #if os(macOS)
        @Test func a() {}
        #endif
        struct S {
        #if DEBUG
            @Test func b() {}
        #else
            @Test func c() {}
        #endif
        }
        """,
        [("a", "active"), ("S/b", "active"), ("S/c", "active")],
    ),
    (
        "a file importing neither framework: nothing",
        """
        import Foundation
        func test() {}
        """,
        [],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), XCTEST, ids=[c[0] for c in XCTEST])
def test_xctest(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("Tests/CoreTests/ParserTests.swift", source) == expected


@pytest.mark.parametrize(
    ("case", "source", "expected"), SWIFT_TESTING, ids=[c[0] for c in SWIFT_TESTING]
)
def test_swift_testing(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    assert found("Tests/CoreTests/ParserTests.swift", source) == expected


FRAMEWORK_OF = [
    ("import XCTest", "class ATests: XCTestCase { func testA() {} }", "xctest"),
    ("import XCTVapor", "class ATests: XCTestCase { func testA() {} }", "xctest"),
    ("import Testing", "@Test func a() {}", "swift-testing"),
    ("import Testing\nimport XCTest", "@Test func a() {}", "swift-testing"),
]


@pytest.mark.parametrize(("imports", "body", "framework"), FRAMEWORK_OF)
def test_a_swift_file_is_listed_under_the_framework_it_uses(
    imports: str, body: str, framework: str
) -> None:
    result = analyze_file(
        "ATests.swift", f"{imports}\n{body}\n".encode(), ConfigScopes([], lambda _: b"")
    )
    assert result is not None
    assert (result.framework, result.language) == (framework, "swift")


SOURCE = b"import XCTest\nclass A: XCTestCase { func testA() {} }\n"
SELECTION = [
    # path, files beside it, selected
    ("Tests/CoreTests/Helpers.swift", ["Package.swift"], True),
    ("Tests/CoreTests/Helpers.swift", [], False),  # no SwiftPM package: by name only
    ("Sources/Core/Helpers.swift", ["Package.swift"], False),
    ("Sources/Core/CoreTests.swift", [], True),
    ("App/AppTests/LoginTests.swift", [], True),
    ("pkg/Tests/A/Helpers.swift", ["pkg/Package.swift"], True),
    ("pkg/Tests/A/Helpers.swift", ["other/Package.swift"], False),
    ("Tests/Fixtures/ATest.swift", [], False),
]


@pytest.mark.parametrize(("path", "beside", "selected"), SELECTION)
def test_swift_test_files(path: str, beside: list[str], selected: bool) -> None:
    """SwiftPM's test targets are the ``Tests/`` of a package; Xcode's are named
    ``*Tests.swift`` by convention."""
    files = dict.fromkeys(beside, b"// swift-tools-version:5.9\n")
    scopes = ConfigScopes([*files, path], lambda p: files.get(p, SOURCE))
    result = analyze_file(path, SOURCE, scopes)
    assert (result is not None) == selected


def test_the_swift_parser_is_built_only_when_a_swift_file_is_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with grammars_built(monkeypatch, "swift") as built:
        found("tests/test_a.py", "def test_a():\n    pass\n")
        # a Swift test file naming no framework is never parsed
        found("Tests/ATests.swift", "import Foundation\nfunc testA() {}\n")
        assert built == []
        assert found("ATests.swift", textwrap.dedent(SOURCE.decode()))
        assert built == ["swift"]

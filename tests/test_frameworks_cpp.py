"""GoogleTest and Catch2 cases, table-driven (issue 41; ADR 0005): what each tool's
``--gtest_list_tests``/``--list-tests`` lists, once per place a test is written, and
what is NOT a test. Paths are ``suite/…/name``; Catch2's sections are nested tests."""

from __future__ import annotations

import textwrap

import pytest

from clonegate._adapters.analysis import cpp, cpp_lexing
from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.frameworks.cpp_sources import MAX_SOURCES, read_cmake
from clonegate._adapters.analysis.frameworks.definition import Settings
from clonegate._adapters.analysis.scan import analyze_file, is_candidate
from clonegate._adapters.analysis.unread import unread_files

from .support.scans import found

GTEST = [
    (
        "TEST is a test of its suite",
        "TEST(Math, Adds) { EXPECT_EQ(2, 1 + 1); }",
        [("Math/Adds", "active")],
    ),
    (
        "TEST_F, TEST_P, TYPED_TEST and TYPED_TEST_P once each",
        """\
        TEST_F(Fix, A) {}
        TEST_P(Param, B) {}
        INSTANTIATE_TEST_SUITE_P(Many, Param, ::testing::Values(1, 2, 3));
        TYPED_TEST(Typed, C) {}
        TYPED_TEST_P(TypedP, D) {}
        GTEST_TEST(Plain, E) {}""",
        [
            ("Fix/A", "active"),
            ("Param/B", "active"),
            ("Typed/C", "active"),
            ("TypedP/D", "active"),
            ("Plain/E", "active"),
        ],
    ),
    (
        "DISABLED_ on the test or its suite skips it",
        """\
        TEST(S, DISABLED_Slow) {}
        TEST(DISABLED_Suite, Any) {}
        TEST(S, NotDISABLED_) {}""",
        [
            ("S/DISABLED_Slow", "skipped"),
            ("S/NotDISABLED_", "active"),
            ("DISABLED_Suite/Any", "skipped"),
        ],
    ),
    (
        "GTEST_SKIP at top level skips, inside an if it does not",
        """\
        TEST(S, Always) { GTEST_SKIP() << "not here"; }
        TEST(S, Sometimes) { if (slow) { GTEST_SKIP(); } }""",
        [("S/Always", "skipped"), ("S/Sometimes", "active")],
    ),
    (
        "no test: FRIEND_TEST, a declaration, comments, strings and #defines",
        """\
        class A { FRIEND_TEST(S, Friend); };
        // TEST(S, Commented) {}
        /* TEST(S, Block) {} */
        const char* s = "TEST(S, InString) {}";
        #define MY_TEST(a, b) TEST(a, b) {}
        TEST(S, NoBody);""",
        [],
    ),
    (
        "a namespace and comments between the macro and its block",
        """\
        namespace a { namespace b {
        TEST(S, Inside) /* why */ {
        }
        }}""",
        [("S/Inside", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), GTEST, ids=[c[0] for c in GTEST])
def test_googletest(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    body = "#include <gtest/gtest.h>\n\n" + textwrap.dedent(source)
    assert found("src/x_test.cc", body) == expected


CATCH2 = [
    ("TEST_CASE is a test", 'TEST_CASE("adds", "[math]") { REQUIRE(1); }', [("adds", "active")]),
    (
        "sections are nested tests, leaves counted",
        """\
        TEST_CASE("vector") {
            std::vector<int> v;
            SECTION("push") { SECTION("twice") {} SECTION("once") {} }
            SECTION("empty, (really)") {}
        }""",
        [
            ("vector/empty, (really)", "active"),
            ("vector/push/twice", "active"),
            ("vector/push/once", "active"),
        ],
    ),
    (
        "SCENARIO, GIVEN, WHEN, THEN with Catch2's prefixes",
        """\
        SCENARIO("resize", "[vector]") {
            GIVEN("a vector") { WHEN("grown") { THEN("bigger") {} AND_THEN("same") {} } }
        }""",
        [
            ("Scenario: resize/Given: a vector/When: grown/Then: bigger", "active"),
            ("Scenario: resize/Given: a vector/When: grown/And: same", "active"),
        ],
    ),
    (
        "hidden tags skip, [!shouldfail] is xfail, other tags are nothing",
        """\
        TEST_CASE("dot", "[.]") {}
        TEST_CASE("hide", "[!hide][x]") {}
        TEST_CASE("dot-tag", "[.integration]") {}
        TEST_CASE("fails", "[!shouldfail]") {}
        TEST_CASE("mayfail", "[!mayfail][a.b]") {}""",
        [
            ("dot", "skipped"),
            ("hide", "skipped"),
            ("dot-tag", "skipped"),
            ("fails", "xfail"),
            ("mayfail", "active"),
        ],
    ),
    (
        "a hidden test case's sections are skipped too",
        'TEST_CASE("h", "[.]") { SECTION("s") {} }',
        [("h/s", "skipped")],
    ),
    (
        "template and method test cases once each, CATCH_ prefix too",
        """\
        TEMPLATE_TEST_CASE("typed", "[t]", int, float, (std::tuple<int, long>)) {}
        TEST_CASE_METHOD(Fixture, "method", "[m]") {}
        CATCH_TEST_CASE("prefixed") { CATCH_SECTION("inner") {} }""",
        [("typed", "active"), ("method", "active"), ("prefixed/inner", "active")],
    ),
    (
        "no test: comments, strings, a section outside any test case",
        """\
        // TEST_CASE("commented") {}
        const char* s = "TEST_CASE(\\"x\\") {}";
        void helper() { SECTION("orphan") {} }""",
        [],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), CATCH2, ids=[c[0] for c in CATCH2])
def test_catch2(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    body = "#include <catch2/catch_test_macros.hpp>\n\n" + textwrap.dedent(source)
    assert found("tests/x.cpp", body) == expected


def _framework(path: str, source: str, scopes: ConfigScopes) -> str | None:
    result = analyze_file(path, textwrap.dedent(source).encode(), scopes)
    return result.framework if result is not None else None


NO_CONFIG = ConfigScopes([], lambda _: b"")


@pytest.mark.parametrize(
    ("path", "source", "expected"),
    [
        ("a/b_test.cc", "TEST(S, T) {}", "googletest"),  # no include: the macros say it
        ("a/b_unittest.cpp", '#include "catch.hpp"\nTEST_CASE("x") {}', "catch2"),
        ("tests/b.cxx", '#include "helpers.h"\nTEST_CASE("x") {}', "catch2"),
        ("src/b.cc", "TEST(S, T) {}", None),  # not a test source by convention
        ("test/b.cc", "int main() { return 0; }", None),  # no test macro
        ("test/b.h", "TEST(S, T) {}", None),  # headers are not read
        ("tests/d.cpp", '#include <doctest/doctest.h>\nTEST_CASE("x") {}', "doctest"),  # not Catch2
    ],
)
def test_test_sources_by_convention(path: str, source: str, expected: str | None) -> None:
    assert _framework(path, source, NO_CONFIG) == expected


def test_cmake_add_executable_names_test_sources() -> None:
    cmake = b"""
    add_executable(runner main.cc checks/parse.cc ${GENERATED}/gen.cc ../up.cc star*.cc)
    gtest_discover_tests(runner)
    add_library(lib lib.cc)
    """
    settings = read_cmake("CMakeLists.txt", cmake, Settings(interface="googletest"))
    assert settings.files == ("main.cc", "checks/parse.cc")
    scopes = ConfigScopes(["proj/CMakeLists.txt"], lambda _: cmake)
    assert is_candidate("proj/checks/parse.cc", scopes)
    assert not is_candidate("proj/lib.cc", scopes)
    assert not is_candidate("proj/gen.cc", scopes)
    assert not is_candidate("proj/star1.cc", scopes)  # a literal path, never a glob
    assert _framework("proj/main.cc", "TEST(S, T) {}", scopes) == "googletest"


def test_cmake_sources_are_bounded() -> None:
    cmake = b"add_executable(big " + b" ".join(b"s%d.cc" % i for i in range(5_000)) + b")"
    settings = read_cmake("CMakeLists.txt", cmake, Settings())
    assert len(settings.files) == MAX_SOURCES


def test_a_grammar_error_around_the_macros_is_not_a_scan_error() -> None:
    source = 'TEMPLATE_TEST_CASE("t", "", int, float) { GIVEN("g") {} }'
    assert found("tests/t.cpp", '#include "catch.hpp"\n' + source) == [("t/Given: g", "active")]


def test_cpp_test_sources_are_read_not_unread() -> None:
    paths = ["src/foo_test.cc", "base/bar_unittest.cc", "tests/parser.cpp", "lib/x_tests.cxx"]
    found = unread_files(paths, lambda p: is_candidate(p, NO_CONFIG), lambda _: b"")
    assert found.by_language == {}


def test_lines_are_the_macros_first_lines() -> None:
    source = (
        '#include "catch.hpp"\nTEST_CASE("a") {}\n\nTEST_CASE(\n  "b") {\n'
        '  SECTION("s") {}\n}\n// TEST_CASE("c") {}\nTEST_CASE("d") {}\n'
    )
    result = analyze_file("tests/t.cpp", source.encode(), NO_CONFIG)
    assert result is not None
    lines = sorted(((t.name, t.line) for t in result.all_tests()), key=lambda t: t[1])
    assert lines == [("a", 2), ("s", 6), ("d", 9)]


@pytest.mark.parametrize(
    "source",
    [
        b'#include "catch.hpp"\n' + b"TEST_CASE(x " * 20_000,  # never closed
        b"#include <gtest/gtest.h>\nTEST(a, b) /*" + b"TEST(c, d) " * 20_000 + b"*/ {}",
    ],
    ids=["unclosed", "in-a-comment"],
)
def test_a_hostile_run_of_macros_is_lexed_once(
    source: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each byte is lexed once: a candidate inside the arguments (or the space after
    them) of the one before is not lexed again (before: 64 KiB per candidate, 120 s+)."""
    lexed = 0
    real = cpp_lexing.arguments

    def counting(data: bytes, at: int) -> tuple[list[str] | None, int]:
        nonlocal lexed
        arguments, stop = real(data, at)
        lexed += stop - at
        return arguments, stop

    monkeypatch.setattr(cpp_lexing, "arguments", counting)
    cpp.read("tests/h.cc", source, "cpp")
    assert 0 < lexed <= len(source)


def test_many_sections_in_one_test_case_are_each_a_test() -> None:
    source = '#include "catch.hpp"\nTEST_CASE("x") {\n' + 'SECTION("s") {}\n' * 20_000 + "}\n"
    result = analyze_file("tests/h.cpp", source.encode(), NO_CONFIG)
    assert result is not None
    assert sum(1 for _ in result.all_tests()) == 20_000


@pytest.mark.timeout(60)  # re: 160 s for 400 KB, quadratic; RE2: milliseconds for 1 MB
def test_a_long_word_of_test_macro_names_is_searched_in_linear_time() -> None:
    """The hint that a file holds test macros is searched in linear time: with ``re``,
    ``(?:TEST|SCENARIO)\\w*\\s*\\(`` ran from each ``TEST`` of one long word to its end
    (no punctuation, so nothing refuses the file before)."""
    source = b"#include <gtest/gtest.h>\nint " + b"TEST" * 250_000 + b";\nTEST(S, T) {}\n"
    result = analyze_file("tests/a_test.cc", source, NO_CONFIG)
    assert result is not None
    assert [t.name for t in result.all_tests()] == ["T"]

"""doctest cases, table-driven (issue 41; ADR 0005): what doctest's
``--list-test-cases`` lists, once per place a test is written, its subcases as nested
tests like Catch2's sections, and what is NOT a test. Paths are ``suite/…/name``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from clonegate._adapters.analysis import cpp, cpp_lexing
from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file, scan_commit
from tests.support.repos import git

from .support.scans import found

NO_CONFIG = ConfigScopes([], lambda _: b"")

DOCTEST = [
    ("TEST_CASE is a test", 'TEST_CASE("adds") { CHECK(1 + 1 == 2); }', [("adds", "active")]),
    (
        "subcases are nested tests, leaves counted",
        """\
        TEST_CASE("vector") {
            std::vector<int> v;
            SUBCASE("push") { SUBCASE("twice") {} SUBCASE("once") {} }
            SUBCASE("empty, (really)") {}
        }""",
        [
            ("vector/empty, (really)", "active"),
            ("vector/push/twice", "active"),
            ("vector/push/once", "active"),
        ],
    ),
    (
        "SCENARIO, GIVEN, WHEN, THEN named as doctest lists them",
        """\
        SCENARIO("resize") {
            GIVEN("a vector") { WHEN("grown") { THEN("bigger") {} AND_THEN("same") {} } }
        }""",
        [
            ("  Scenario: resize/   Given: a vector/    When: grown/    Then: bigger", "active"),
            ("  Scenario: resize/   Given: a vector/    When: grown/     And: same", "active"),
        ],
    ),
    (
        "fixture, class and template test cases once each, DOCTEST_ prefix too",
        """\
        TEST_CASE_FIXTURE(Fixture, "fixture") {}
        TEST_CASE_TEMPLATE("typed", T, int, float, std::tuple<int, long>) {}
        TEST_CASE_TEMPLATE_DEFINE("defined", T, my_id) {}
        TEST_CASE_TEMPLATE_INVOKE(my_id, int, char);
        TEST_CASE_TEMPLATE_APPLY(my_id, std::tuple<long>);
        DOCTEST_TEST_CASE("prefixed") { DOCTEST_SUBCASE("inner") {} }""",
        [
            ("fixture", "active"),
            ("typed", "active"),
            ("defined", "active"),
            ("prefixed/inner", "active"),
        ],
    ),
    (
        "in a class, a namespace; a template scenario once; a loop's subcase once",
        """\
        struct S { int x; TEST_CASE_CLASS("in class") { CHECK(1); } };
        namespace a { TEST_SUITE("s") { TEST_CASE("x") {} } }
        SCENARIO_TEMPLATE("st", T, int, long) { GIVEN("g") {} }
        TEST_CASE("loop") { for (auto& c : cases) { SUBCASE(c.name.c_str()) {} } }""",
        [
            ("in class", "active"),
            ("s/x", "active"),
            ("  Scenario: st/   Given: g", "active"),
            ("loop/c.name.c_str()", "active"),
        ],
    ),
    (
        "decorators: skip, should_fail, expected_failures are markers, may_fail nothing",
        """\
        TEST_CASE("s" * doctest::skip()) {}
        TEST_CASE("s-true" * doctest::skip(true)) {}
        TEST_CASE("s-false" * doctest::skip(false)) {}
        TEST_CASE("s-cond" * doctest::skip(!has_network())) {}
        TEST_CASE("short" * skip() * timeout(0.5)) {}
        TEST_CASE("fail" * doctest::should_fail()) {}
        TEST_CASE("two" * doctest::description("d") * doctest::expected_failures(2)) {}
        TEST_CASE("may" * doctest::may_fail()) {}
        TEST_CASE("named * doctest::skip()") {}""",
        [
            ("s", "skipped"),
            ("s-true", "skipped"),
            ("s-false", "active"),
            ("s-cond", "skipped"),
            ("short", "skipped"),
            ("fail", "xfail"),
            ("two", "xfail"),
            ("may", "active"),
            ("named * doctest::skip()", "active"),
        ],
    ),
    (
        "a skipped test case's subcases are skipped too",
        'TEST_CASE("h" * doctest::skip()) { SUBCASE("s") {} }',
        [("h/s", "skipped")],
    ),
    (
        "TEST_SUITE blocks: a suite, its decorators inside, suites do not nest",
        """\
        TEST_SUITE("math" * doctest::skip()) {
            TEST_CASE("off") {}
            TEST_CASE("on" * doctest::skip(false)) {}
            TEST_SUITE("inner") { TEST_CASE("innermost wins") {} }
            TEST_CASE("after inner") {}
        }
        TEST_CASE("outside") {}
        TEST_SUITE("math") { TEST_CASE("same suite") {} }""",
        [
            ("outside", "active"),
            ("math/off", "skipped"),
            ("math/on", "active"),
            ("math/after inner", "skipped"),
            ("math/same suite", "active"),
            ("inner/innermost wins", "active"),
        ],
    ),
    (
        "TEST_SUITE_BEGIN to TEST_SUITE_END is a suite, either END form",
        """\
        TEST_SUITE_BEGIN("io" * doctest::should_fail());
        TEST_CASE("read") {}
        TEST_SUITE_END();
        TEST_CASE("free") {}
        DOCTEST_TEST_SUITE_BEGIN("net");
        TEST_CASE("send") {}
        DOCTEST_TEST_SUITE_END;
        TEST_CASE("free again") {}""",
        [
            ("free", "active"),
            ("free again", "active"),
            ("io/read", "xfail"),
            ("net/send", "active"),
        ],
    ),
    (
        "a test_suite decorator names the test case's suite",
        """\
        using doctest::test_suite;
        TEST_CASE("parse" * test_suite("parser")) {}
        TEST_SUITE("a") { TEST_CASE("moved" * doctest::test_suite("b")) {} }""",
        [("parser/parse", "active"), ("b/moved", "active")],
    ),
    (
        "no test: comments, strings, #defines, a declaration, Catch2's sections",
        """\
        // TEST_CASE("commented") {}
        /* TEST_CASE("block") {} */
        const char* s = "TEST_CASE(\\"x\\") {}";
        #define MY_CASE(n) TEST_CASE(n) {}
        TEST_CASE("declared");
        void helper() { SUBCASE("orphan") {} }
        TEST_CASE("real") { SECTION("catch2's") {} CATCH_SECTION("also") {} }""",
        [("real", "active")],
    ),
    (
        "no switch: TEST_SUITE_BEGIN in a comment, a string or a test's arguments",
        """\
        // TEST_SUITE_BEGIN("commented");
        const char* s = "TEST_SUITE_BEGIN(\\"quoted\\");";
        TEST_CASE("TEST_SUITE_BEGIN(\\"argument\\");") {}
        TEST_CASE("plain") {}""",
        [('TEST_SUITE_BEGIN(\\"argument\\");', "active"), ("plain", "active")],  # as written,
    ),
    (
        "a test case inside another's block, or a suite inside one, is nothing",
        """\
        TEST_CASE("outer") {
            TEST_SUITE("no") {}
            TEST_CASE("inner") {}
        }""",
        [("outer", "active")],
    ),
]


@pytest.mark.parametrize(("case", "source", "expected"), DOCTEST, ids=[c[0] for c in DOCTEST])
def test_doctest(case: str, source: str, expected: list[tuple[str, str]]) -> None:
    body = "#include <doctest/doctest.h>\n\n" + textwrap.dedent(source)
    assert found("tests/x.cpp", body) == expected


def _framework(path: str, source: str) -> str | None:
    result = analyze_file(path, textwrap.dedent(source).encode(), NO_CONFIG)
    return result.framework if result is not None else None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('#include <doctest/doctest.h>\nTEST_CASE("x") {}', "doctest"),
        ('#include "doctest.h"\nTEST_CASE("x") {}', "doctest"),
        ('#include <thirdparty/doctest/doctest.h>\nTEST_CASE("x") {}', "doctest"),
        ('#include <doctest.hpp>\nSCENARIO("x") {}', "doctest"),
        ('#include "helpers.h"\nTEST_CASE("x") { SUBCASE("s") {} }', "doctest"),  # only doctest's
        ('#include "helpers.h"\nDOCTEST_TEST_CASE("x") {}', "doctest"),
        ('#include "helpers.h"\nTEST_CASE_FIXTURE(F, "x") {}', "doctest"),
        ('#include "helpers.h"\nTEST_CASE("x") {}', "catch2"),  # Catch2's as before
        ('#include <catch2/catch_test_macros.hpp>\nTEST_CASE("x") {}', "catch2"),
        ('#include "catch.hpp"\nSCENARIO("x") { GIVEN("g") {} }', "catch2"),
        ('#include "my_doctest_helpers.h"\nTEST_CASE("x") {}', "catch2"),  # not a doctest part
        ("#include <doctest/doctest.h>\nint main() { return 0; }", None),  # no test case
        ('#include <doctest/doctest.h>\nCATCH_TEST_CASE("x") {}', None),  # Catch2's prefix
        ("#include <gtest/gtest.h>\nTEST(S, T) {}", "googletest"),
    ],
)
def test_the_framework_is_chosen_by_include_or_macros(source: str, expected: str | None) -> None:
    assert _framework("tests/t.cpp", source) == expected


def test_lines_are_the_macros_first_lines() -> None:
    source = (
        '#include "doctest.h"\nTEST_SUITE_BEGIN("s");\n\nTEST_CASE(\n  "b") {\n'
        '  SUBCASE("c") {}\n}\nTEST_SUITE_END();\n// TEST_CASE("d") {}\nTEST_CASE("e") {}\n'
    )
    result = analyze_file("tests/t.cpp", source.encode(), NO_CONFIG)
    assert result is not None
    assert [(s.name, s.line) for s in result.suites] == [("s", 2)]
    lines = sorted(((t.name, t.line) for t in result.all_tests()), key=lambda t: t[1])
    assert lines == [("c", 6), ("e", 10)]


def test_a_doctest_file_is_no_longer_a_silent_zero(tmp_path: Path) -> None:
    """Before doctest was read, its file was selected (``tests/``), claimed by no
    framework and so neither counted nor reported unread: a plain 0."""
    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "tests" / "parse_test.cpp").write_text(
        '#include <doctest/doctest.h>\nTEST_CASE("a") { SUBCASE("x") {} SUBCASE("y") {} }\n'
        'TEST_CASE("b" * doctest::skip()) {}\n'
    )
    git("init", "-q", str(work))
    git("add", ".", cwd=work)
    git("commit", "-qm", "doctest", cwd=work)
    result = scan_commit(str(work), git("rev-parse", "HEAD", cwd=work))
    assert result.inventory.tests == 3
    assert [f.framework for f in result.inventory.files] == ["doctest"]
    assert result.unread == {}


@pytest.mark.parametrize(
    "source",
    [
        b'#include <doctest/doctest.h>\nTEST_CASE("x") {}\n' + b"TEST_SUITE_BEGIN(x " * 20_000,
        b'#include <doctest/doctest.h>\nTEST_CASE("x") {}\n/*' + b"TEST_SUITE_BEGIN(x) " * 20_000,
    ],
    ids=["unclosed", "in-a-comment"],
)
def test_a_hostile_run_of_suite_switches_is_lexed_once(
    source: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each byte after a ``TEST_SUITE_BEGIN(`` is lexed once, not once per switch."""
    lexed = 0
    real = cpp_lexing.arguments

    def counting(data: bytes, at: int) -> tuple[list[str] | None, int]:
        nonlocal lexed
        arguments, stop = real(data, at)
        lexed += stop - at
        return arguments, stop

    monkeypatch.setattr(cpp_lexing, "arguments", counting)
    reading = cpp.read("tests/h.cc", source, "cpp")
    assert reading is not None
    assert 0 < lexed <= len(source)


def test_many_subcases_in_one_test_case_are_each_a_test() -> None:
    source = '#include "doctest.h"\nTEST_CASE("x") {\n' + 'SUBCASE("s") {}\n' * 20_000 + "}\n"
    result = analyze_file("tests/h.cpp", source.encode(), NO_CONFIG)
    assert result is not None
    assert sum(1 for _ in result.all_tests()) == 20_000


def test_blocks_tree_sitter_cannot_place_are_closed_by_their_tokens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Braces in a macro's parenthesised arguments (``({{"k", 1}})``, toml11's tests)
    made tree-sitter lose the test case's block, or give the whole file up as one
    error: its blocks are then closed by the tokens alone, not lost."""
    source = """\
        #include "doctest.h"
        TEST_CASE("braces in parentheses") {
            CHECK_PAIR(table, ({{"k", 1}, {"j", 2}}), ({{"k", 3}}));
            SUBCASE("after them") { CHECK('}' == *"}"); }
        }
        TEST_CASE("next") {}"""
    calls = 0
    real = cpp_lexing.closing_braces

    def counting(data: bytes) -> dict[int, int]:
        nonlocal calls
        calls += 1
        return real(data)

    monkeypatch.setattr(cpp_lexing, "closing_braces", counting)
    assert found("tests/x.cpp", source) == [
        ("next", "active"),
        ("braces in parentheses/after them", "active"),
    ]
    assert calls == 1  # once per file, and only where the tree failed


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (b"{ { } }", {0: 7, 2: 5}),
        (b"{ \"}\" '}' // }\n /* } */ }", {0: 25}),
        (b'{ R"x(})x" }', {0: 12}),
        (b"{ /* never closed }", {}),
        (b'{ "never closed }\n }', {0: 20}),  # a string ends with its line
        (b"} { 1'000'000; }", {2: 16}),  # digit separators
    ],
)
def test_closing_braces_skip_comments_and_literals(source: bytes, expected: dict[int, int]) -> None:
    assert cpp_lexing.closing_braces(source) == expected

"""Test files of languages and frameworks the analyzer does not read (issue 40, ADR
0004): each convention, with files that match it and files that do not; a file some
framework of the analyzer selects is never counted; a repository without any such
file is a plain zero."""

from __future__ import annotations

from pathlib import Path

import pytest

from clonegate import ScanError
from clonegate._adapters.analysis.scan import list_commit
from clonegate._adapters.analysis.unread import MAX_PROJECT_BYTES, UNREAD, unread_files

from .support.repos import git

AVA_PACKAGE = b'{"name": "x", "devDependencies": {"ava": "^6.0.0"}}'
OTHER_PACKAGE = b'{"name": "y", "devDependencies": {"tap": "^18.0.0"}}'

# (language, files that look like its tests, files that do not)
CONVENTIONS = [
    ("c", ["src/foo_test.c", "tests/test_parse.c"], ["tests/helpers.c", "src/contest.c"]),
    (
        "scala",
        ["src/test/scala/FooSpec.scala", "core/test/src/BarTests.scala"],
        ["src/main/scala/FooSpec.scala"],
    ),
    ("groovy", ["src/test/groovy/FooSpec.groovy"], ["src/main/groovy/Foo.groovy"]),
    ("elixir", ["test/foo_test.exs", "apps/a/test/b_test.exs"], ["test/test_helper.exs"]),
    ("dart", ["test/foo_test.dart"], ["lib/foo_test.dart", "test/helpers.dart"]),
    ("clojure", ["test/app/core_test.clj", "test/a_test.cljs"], ["src/app/core.clj"]),
    ("haskell", ["test/ParserSpec.hs"], ["src/Parser.hs", "test/Spec.hs"]),
    ("lua", ["spec/parser_spec.lua"], ["src/parser.lua", "spec/helper.lua"]),
    ("perl", ["t/basic.t", "t/unit/parse.t"], ["lib/t.pm", "tools/x.t"]),
]


@pytest.mark.parametrize(
    ("language", "tests", "others"), CONVENTIONS, ids=[f"{c[0]}-{c[1][0]}" for c in CONVENTIONS]
)
def test_each_convention(language: str, tests: list[str], others: list[str]) -> None:
    found = unread_files([*tests, *others], lambda _: False, _no_read)
    assert found.by_language == {language: len(tests)}
    assert sum(found.by_convention.values()) == len(tests)
    assert set(found.by_convention) <= set(UNREAD[language].patterns)
    assert unread_files(others, lambda _: False, _no_read).by_language == {}


AVA = [
    (
        "the package depends on ava: its test files",
        {"package.json": AVA_PACKAGE},
        ["test.js", "test/a.js", "test/deep/b.mjs", "tests/c.cjs", "src/test-d.js"],
        ["test/helpers/h.js", "test/fixtures/f.js", "test/_util.js", "src/index.js", "test/a.ts"],
    ),
    (
        "no ava in the package: nothing",
        {"package.json": OTHER_PACKAGE},
        [],
        ["test.js", "test/a.js"],
    ),
    (
        "the nearest package.json decides",
        {"package.json": AVA_PACKAGE, "packages/b/package.json": OTHER_PACKAGE},
        ["packages/a/test/x.js"],
        ["packages/b/test/x.js"],
    ),
    ("no package.json at all: nothing", {}, [], ["test/a.js"]),
]


@pytest.mark.parametrize(("case", "packages", "tests", "others"), AVA, ids=[c[0] for c in AVA])
def test_ava(case: str, packages: dict[str, bytes], tests: list[str], others: list[str]) -> None:
    found = unread_files([*packages, *tests, *others], lambda _: False, packages.__getitem__)
    assert found.by_language == ({"ava": len(tests)} if tests else {})


def test_a_file_a_framework_of_the_analyzer_selects_is_not_unread() -> None:
    """Read (or a scan error if it cannot be), never "not read": AVA's ``test/a.js`` that
    mocha selects, a Kotlin file once a reader for it selects it."""
    paths = ["package.json", "test/a.js", "test/b.js", "src/test/kotlin/ATest.kt"]
    read = {"test/a.js", "src/test/kotlin/ATest.kt"}
    found = unread_files(paths, read.__contains__, {"package.json": AVA_PACKAGE}.__getitem__)
    assert found.by_language == {"ava": 1}


def test_files_count_once_under_their_first_convention() -> None:
    found = unread_files(
        ["test/a_test.c", "test/test_b.c", "test/a_test.exs"], lambda _: False, _no_read
    )
    assert found.by_language == {"c": 2, "elixir": 1}
    assert found.by_convention == {
        "*{_test,_unittest}.c": 1,
        "{test,tests}/**/test_*.c": 1,
        "test/**/*_test.exs": 1,
    }


def test_a_repository_without_test_like_files_is_a_plain_zero() -> None:
    paths = ["README.md", "src/main.rb", "lib/a.php", "src/a.cc", "Sources/A.swift"]
    found = unread_files(paths, lambda _: False, _no_read)
    assert (found.by_language, found.by_convention) == ({}, {})


def test_an_unreadable_project_file_is_a_scan_error_naming_it() -> None:
    """Too large or corrupt: named once, its files not counted, the rest still is."""

    def fails(path: str) -> bytes:
        raise ValueError(f"corrupt {path}")

    paths = ["package.json", "test/a.js", "test/b.js", "test/a_test.exs"]
    found = unread_files(paths, lambda _: False, fails)
    assert found.by_language == {"elixir": 1}
    assert found.errors == (
        ScanError(
            "package.json",
            "read",
            "not read for the test files below it: ValueError: corrupt package.json",
        ),
    )


def test_a_project_file_over_the_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A hostile tree of many large ``package.json`` files: each is refused from its
    pack header (never inflated), and named; the listing goes on."""
    work = tmp_path / "w"
    files = {
        f"p{i}/package.json": b'{"devDependencies": {"ava": "1"}}' + b" " * MAX_PROJECT_BYTES
        for i in range(3)
    }
    files |= {f"p{i}/test/a.js": b"test()" for i in range(3)}
    files |= {"small/package.json": AVA_PACKAGE, "small/test/a.js": b"test()"}
    for path, data in files.items():
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(data)
    git("init", "-q", str(work))
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "x", cwd=work)
    listing = list_commit(str(work), git("rev-parse", "HEAD", cwd=work))
    assert listing.unread.by_language == {"ava": 1}
    assert sorted(e.path for e in listing.errors) == [f"p{i}/package.json" for i in range(3)]
    assert all("larger than the 1 MiB file limit" in e.message for e in listing.errors)


@pytest.mark.parametrize("language", sorted(UNREAD))
def test_every_pattern_holds_a_hint(language: str) -> None:
    """The hints pass over files without running a pattern: each path a pattern can
    match must hold one, in every alternative of its braces."""
    conventions = UNREAD[language]
    for pattern in conventions.patterns:
        for written in _expanded(pattern.lower()):
            assert any(hint in written for hint in conventions.hints), (pattern, written)


def _expanded(pattern: str) -> list[str]:
    """``a{b,c}d`` -> ``abd``, ``acd`` (the table's braces do not nest)."""
    start = pattern.find("{")
    if start < 0:
        return [pattern]
    end = pattern.index("}", start)
    head, options, tail = pattern[:start], pattern[start + 1 : end].split(","), pattern[end + 1 :]
    return [head + o + rest for o in options for rest in _expanded(tail)]


def _no_read(path: str) -> bytes:
    raise AssertionError(f"{path} read: no convention here needs a package.json")

"""C++ tests, read with tree-sitter: GoogleTest's, Catch2's and doctest's macros (ADR 0005).

Test macros are not C++ that tree-sitter-cpp can place: ``TEST(a, b) {…}`` parses as a
function definition, ``TEST_CASE("x") {…}`` as a call missing its ``;`` and a block,
``GIVEN("g") {…}`` or ``TEMPLATE_TEST_CASE("t", "", int, float) {…}`` as errors, and
recovering from those errors made the parse ten times slower. So a test macro is
found in the bytes (its name, its arguments lexed with their strings, then a ``{``),
each one found is blanked out with spaces (offsets and lines kept), and tree-sitter
parses what is left: the tree says whether the macro was code (not in a comment, a
string or a ``#define``) and where its block ends. A test case's macro is blanked to
``void f()`` and a suite's to ``namespace`` where they fit, a section's to spaces: the
blocks are then a function's body and a statement, C++ where they are written (a plain
block at namespace scope, with the project's own macros called without a ``;`` inside,
could make the whole file one error). A macro with no block (``FRIEND_TEST(a, b);``, a
declaration) is no test.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import re2
from tree_sitter import Node

from ..._domain.inventory import TestStatus
from . import cpp_lexing
from .frameworks.definition import Reading, Settings
from .outline import Outline
from .syntax import kit

# GoogleTest: each defines one test of a suite, parameterised or typed ones once.
GTEST_MACROS = frozenset({"TEST", "GTEST_TEST", "TEST_F", "TEST_P", "TYPED_TEST", "TYPED_TEST_P"})
# Catch2 (also with its ``CATCH_`` prefix): the name argument's index, and the prefix
# Catch2 itself puts before a BDD name.
CATCH_TESTS = {
    "TEST_CASE": 0,
    "SCENARIO": 0,
    "TEST_CASE_METHOD": 1,
    "SCENARIO_METHOD": 1,
    "TEMPLATE_TEST_CASE": 0,
    "TEMPLATE_TEST_CASE_SIG": 0,
    "TEMPLATE_PRODUCT_TEST_CASE": 0,
    "TEMPLATE_PRODUCT_TEST_CASE_SIG": 0,
    "TEMPLATE_LIST_TEST_CASE": 0,
    "TEMPLATE_TEST_CASE_METHOD": 1,
    "TEMPLATE_TEST_CASE_METHOD_SIG": 1,
    "TEMPLATE_PRODUCT_TEST_CASE_METHOD": 1,
    "TEMPLATE_LIST_TEST_CASE_METHOD": 1,
}
CATCH_SECTIONS = {
    "SECTION": "",
    "DYNAMIC_SECTION": "",
    "GIVEN": "Given: ",
    "AND_GIVEN": "And given: ",
    "WHEN": "When: ",
    "AND_WHEN": "And when: ",
    "THEN": "Then: ",
    "AND_THEN": "And: ",
}
# doctest (also with its ``DOCTEST_`` prefix): the name argument's index, and the
# prefix doctest itself puts before a BDD name (its outline: :mod:`.cpp_doctest`).
DOCTEST_TESTS = {
    "TEST_CASE": 0,
    "TEST_CASE_CLASS": 0,
    "TEST_CASE_FIXTURE": 1,
    "TEST_CASE_TEMPLATE": 0,
    "TEST_CASE_TEMPLATE_DEFINE": 0,
    "SCENARIO": 0,
    "SCENARIO_CLASS": 0,
    "SCENARIO_TEMPLATE": 0,
    "SCENARIO_TEMPLATE_DEFINE": 0,
}
DOCTEST_SUBCASES = {
    "SUBCASE": "",
    "GIVEN": "   Given: ",
    "WHEN": "    When: ",
    "AND_WHEN": "And when: ",
    "THEN": "    Then: ",
    "AND_THEN": "     And: ",
}
DOCTEST_SUITE = "TEST_SUITE"
_DOCTEST = {*DOCTEST_TESTS, *DOCTEST_SUBCASES, DOCTEST_SUITE}
# Macros only doctest writes: they name it where no include does.
_DOCTEST_ONLY = _DOCTEST - set(CATCH_TESTS) - set(CATCH_SECTIONS)
_CATCH = {*CATCH_TESTS, *CATCH_SECTIONS}
# Which names each prefix can stand before (``DOCTEST_TEST(a, b)`` is nobody's).
_PREFIXED = {"": GTEST_MACROS | _CATCH | _DOCTEST, "CATCH_": _CATCH, "DOCTEST_": _DOCTEST}
_CANDIDATE = re.compile(
    rb"\b(CATCH_|DOCTEST_)?("
    + "|".join(sorted(_PREFIXED[""], key=len, reverse=True)).encode()
    + rb")\s*\("
)
QUERY = "(comment) @comment"  # the tree is walked by offsets, not queried
# Nodes whose text is not code: a macro found in one (blanked there) is no test.
_NOT_CODE = frozenset(
    {"comment", "string_literal", "raw_string_literal", "char_literal", "preproc_arg"}
)
# Only a file holding one of these is parsed (the test macros' common parts). On RE2:
# ``re`` ran from each ``TEST`` of one long word to the word's end (``TESTTEST…``, no
# punctuation to refuse it: 160 s for 400 KB), RE2 is linear (ADR 0012).
_HINT = re2.compile(rb"(?:TEST|SCENARIO)\w*[ \t\n\r\f\v]*\(")
_GTEST_SKIP = re.compile(rb"GTEST_SKIP\s*\(")
_TAG = re.compile(r"\[([^\]]*)\]")


# What a macro is blanked to (at its start, if its first line holds it), to leave C++.
_FILLERS = dict.fromkeys(GTEST_MACROS | set(CATCH_TESTS) | set(DOCTEST_TESTS), b"void f()")
_FILLERS[DOCTEST_SUITE] = b"namespace"


def _blank(macro: bytes, filler: bytes) -> bytes:
    spaces = re.sub(rb"[^\n]", b" ", macro)
    line = macro.find(b"\n")
    if len(filler) <= (len(macro) if line < 0 else line):
        return filler + spaces[len(filler) :]
    return spaces


@dataclass(frozen=True, slots=True)
class _Macro:
    name: str  # without its prefix
    arguments: list[str]
    line: int
    start: int  # its block's ``{``
    end: int  # after its block's ``}``
    body: Node | None  # the block in the tree; None where the tree could not place it
    prefix: str = ""


def read(path: str, data: bytes, language: str) -> Reading | None:
    if _HINT.search(data) is None:
        return None  # no test macro: nothing to parse for
    candidates = _candidates(data)
    blanked = bytearray(data)
    for _, name, start, _, _, _, brace in candidates:
        blanked[start:brace] = _blank(data[start:brace], _FILLERS.get(name, b""))
    root = kit("cpp", QUERY).parse(bytes(blanked), tolerate_errors=True)
    closing = functools.cache(lambda: cpp_lexing.closing_braces(data))  # only if the tree fails
    macros = (_macro(root, closing, *c) for c in candidates)
    found = [m for m in macros if m is not None]
    includes = _includes(data)
    # doctest writes TEST_CASE, SCENARIO, GIVEN… too: a file naming it is no Catch2 file.
    doctest = _names_doctest(includes) or any(
        m.prefix == "DOCTEST_" or m.name in _DOCTEST_ONLY for m in found
    )
    signals = frozenset(filter(None, (_signal(m, doctest) for m in found)))
    switches: list[Switch] = []
    if "doctest" in signals:
        from .cpp_doctest import suite_switches  # it reads with this module's parts

        switches = suite_switches(data, root, candidates)
    return Reading(frozenset(includes), signals, lambda s: _outline(found, s, switches))


def _signal(macro: _Macro, doctest: bool) -> str | None:
    """The framework a test macro names, in a file that names doctest or not."""
    if macro.name in GTEST_MACROS and not macro.prefix:
        return "googletest"
    if doctest:
        return "doctest" if macro.name in DOCTEST_TESTS and macro.prefix != "CATCH_" else None
    return "catch2" if macro.name in CATCH_TESTS and macro.prefix != "DOCTEST_" else None


def _names_doctest(includes: set[str]) -> bool:
    """``doctest.h``, ``doctest/doctest.h``, ``third_party/doctest/doctest.h``, its
    single-header ``doctest.hpp`` copies and ``doctest_fwd.h``: a part named doctest."""
    return any(part.startswith("doctest") for i in includes for part in i.split("/"))


def _outline(macros: list[_Macro], settings: Settings, switches: list[Switch]) -> Outline:
    if settings.interface == "doctest":
        from .cpp_doctest import outline_doctest

        return outline_doctest(macros, switches)
    if settings.interface == "catch2":
        return outline_catch2(macros)
    return outline_googletest(macros)


def outline_googletest(macros: list[_Macro]) -> Outline:
    """``TEST(Suite, Name)`` is test ``Name`` of suite ``Suite`` (one suite per name in
    a file). ``DISABLED_`` before the suite's or the test's name skips it, as does a
    ``GTEST_SKIP()`` among the body's top-level statements (inside an ``if`` it stays
    active)."""
    outline = Outline()
    suites: dict[str, Outline] = {}
    for macro in macros:
        if macro.name not in GTEST_MACROS or macro.prefix or len(macro.arguments) != 2:
            continue
        suite_name, name = macro.arguments
        suite = suites.get(suite_name)
        if suite is None:
            disabled = TestStatus.SKIPPED if suite_name.startswith("DISABLED_") else None
            suite = suites[suite_name] = outline.suite(suite_name, macro.line, disabled)
        skipped = name.startswith("DISABLED_") or (macro.body is not None and _skips(macro.body))
        suite.test(name, macro.line, TestStatus.SKIPPED if skipped else None)
    return outline


def outline_catch2(macros: list[_Macro]) -> Outline:
    """A ``TEST_CASE`` (or ``SCENARIO``, a template test case once) is a test; with
    ``SECTION``s (``GIVEN``/``WHEN``/``THEN``) it is a suite of them, each leaf section
    a test, like Go's ``t.Run`` (ADR 0005). A test case tagged ``[.]``, ``[!hide]`` or
    ``[.tag]`` is hidden: skipped; ``[!shouldfail]`` is xfail. A test case inside
    another's block, or a section outside any, is nothing. One pass over the macros in
    source order, with the blocks still open on a stack: a file of 100,000 sections
    costs 100,000 steps, not their square."""
    roots: list[_Open] = []
    stack: list[_Open] = []
    for macro in macros:
        if macro.name not in _CATCH or macro.prefix == "DOCTEST_":
            continue  # another framework's macro (a SUBCASE in a Catch2 file is nothing)
        while stack and stack[-1].macro.end <= macro.start:
            stack.pop()
        if macro.name in CATCH_TESTS:
            if stack:
                continue  # a test case's text inside another's block is no test of its
            node = _Open(macro)
            roots.append(node)
        elif stack:
            node = _Open(macro)
            stack[-1].children.append(node)
        else:
            continue
        stack.append(node)
    outline = Outline()
    emit([(root, outline, _marker(root.macro)) for root in roots], _title)
    return outline


def emit(
    roots: list[tuple[_Open, Outline, TestStatus | None]], title: Callable[[_Macro], str]
) -> None:
    """Each test case into its outline with its marker: a leaf is a test, one holding
    sections a suite of them (the marker applies to what it holds)."""
    work = list(reversed(roots))
    while work:
        node, into, marker = work.pop()
        name, line = title(node.macro), node.macro.line
        if not node.children:
            into.test(name, line, marker)
            continue
        suite = into.suite(name, line, marker)
        work.extend((child, suite, None) for child in reversed(node.children))


@dataclass
class _Open:
    macro: _Macro
    children: list[_Open] = field(default_factory=list)


def _title(macro: _Macro) -> str:
    """A test case's or section's name as Catch2 shows it."""
    if macro.name in CATCH_SECTIONS:
        label = _literal(macro.arguments[0]) if macro.arguments else ""
        return CATCH_SECTIONS[macro.name] + label
    index = CATCH_TESTS[macro.name]
    name = _literal(macro.arguments[index]) if len(macro.arguments) > index else ""
    return "Scenario: " + name if macro.name.startswith("SCENARIO") else name


def _marker(test: _Macro) -> TestStatus | None:
    index = CATCH_TESTS[test.name] + 1
    return _tag_marker(_literal(test.arguments[index]) if len(test.arguments) > index else "")


def _tag_marker(tags: str) -> TestStatus | None:
    names = _TAG.findall(tags)
    if any(t == "!hide" or t.startswith(".") for t in names):
        return TestStatus.SKIPPED
    if "!shouldfail" in names:
        return TestStatus.XFAIL
    return None


def _skips(body: Node) -> bool:
    return any(
        s.type == "expression_statement" and _GTEST_SKIP.match(s.text or b"") is not None
        for s in body.named_children
    )


# doctest's ``TEST_SUITE_BEGIN(decorators);`` (the argument's text) and
# ``TEST_SUITE_END;`` (None) between the test cases: ``(offset, line, argument)``.
Switch = tuple[int, int, str | None]
# A test macro found in the bytes: ``(prefix, name, start, line, arguments, end of
# arguments, brace)``.
Candidate = tuple[str, str, int, int, list[str], int, int]


def _candidates(data: bytes) -> list[Candidate]:
    """Each test macro with arguments and a ``{`` after them, outside another's
    arguments, in source order."""
    found: list[Candidate] = []
    after = counted = 0
    line = 1  # at offset ``counted``: lines are counted once over the file
    for match in _CANDIDATE.finditer(data):
        if match.start() < after:
            continue  # in the arguments, or the space after them, of the one before
        prefix, name = (match.group(1) or b"").decode(), match.group(2).decode()
        if name not in _PREFIXED[prefix]:
            continue
        arguments, end = cpp_lexing.arguments(data, match.end() - 1)
        brace = cpp_lexing.skip_space(data, end) if arguments is not None else end
        # Each byte is lexed once: a hostile run of ``TEST(`` in one long comment or
        # argument list costs its length, not its square.
        after = brace
        if arguments is not None and brace < len(data) and data[brace] == ord("{"):
            line += data.count(b"\n", counted, match.start())
            counted = match.start()
            found.append((prefix, name, match.start(), line, arguments, end, brace))
    return found


def _macro(
    root: Node,
    closing: Callable[[], dict[int, int]],
    prefix: str,
    name: str,
    start: int,
    line: int,
    arguments: list[str],
    end: int,
    brace: int,
) -> _Macro | None:
    """The macro if it was code and its ``{`` opens a block in the blanked tree, or
    closes by the tokens alone where the tree could not place it (:mod:`.cpp_lexing`)."""
    if not is_code(root, start):
        return None
    token = root.descendant_for_byte_range(brace, brace + 1)
    body = token.parent if token is not None and token.type == "{" else None
    if body is not None and body.start_byte == brace:
        return _Macro(name, arguments, line, brace, body.end_byte, body, prefix)
    closes = closing().get(brace)
    return None if closes is None else _Macro(name, arguments, line, brace, closes, None, prefix)


def is_code(root: Node, at: int) -> bool:
    """Whether the byte at ``at`` is code: not in a comment, a string or a #define."""
    # A blanked space is in a comment, a string (or its content) or a #define's
    # body, or between tokens: the smallest node and its parent say which.
    node = root.descendant_for_byte_range(at, at + 1)
    parent = node.parent if node is not None else None
    return not any(n is not None and n.type in _NOT_CODE for n in (node, parent))


def _literal(argument: str) -> str:
    """A string literal argument's text (adjacent literals joined); else the source."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', argument)
    return "".join(parts) if parts else argument


_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


def _includes(data: bytes) -> set[str]:
    return {m.group(1).decode("utf-8", "replace") for m in _INCLUDE.finditer(data)}

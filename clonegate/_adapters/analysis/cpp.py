"""C++ tests, read with tree-sitter: GoogleTest's, Catch2's and doctest's macros (ADR 0005).

Test macros are not C++ that tree-sitter-cpp can place: ``TEST(a, b) {…}`` parses as a
function definition, ``TEST_CASE("x") {…}`` as a call missing its ``;`` and a block,
``GIVEN("g") {…}`` or ``TEMPLATE_TEST_CASE("t", "", int, float) {…}`` as errors, and
recovering from those errors made the parse ten times slower. So a test macro is
found in the bytes (its name, its arguments lexed with their strings, then a ``{``),
each one found is blanked out with spaces (offsets and lines kept), and tree-sitter
parses what is left, plain blocks: the tree says whether the macro was code (not in a
comment, a string or a ``#define``) and where its block ends. A macro with no block
(``FRIEND_TEST(a, b);``, a declaration) is no test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from ..._domain.inventory import TestStatus
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
# Only a file holding one of these is parsed (the test macros' common parts).
_HINT = re.compile(rb"(?:TEST|SCENARIO)\w*\s*\(")
_GTEST_SKIP = re.compile(rb"GTEST_SKIP\s*\(")
_TAG = re.compile(r"\[([^\]]*)\]")
# A macro's arguments are lexed up to this many bytes: real ones are a line or two.
_MAX_ARGUMENTS = 64 * 1024


@dataclass(frozen=True, slots=True)
class _Macro:
    name: str  # without its prefix
    arguments: list[str]
    line: int
    body: Node
    prefix: str = ""


def read(path: str, data: bytes, language: str) -> Reading | None:
    if _HINT.search(data) is None:
        return None  # no test macro: nothing to parse for
    candidates = _candidates(data)
    blanked = bytearray(data)
    for _, _, start, _, _, _, brace in candidates:
        blanked[start:brace] = re.sub(rb"[^\n]", b" ", data[start:brace])
    root = kit("cpp", QUERY).parse(bytes(blanked), tolerate_errors=True)
    macros = (_macro(root, *c) for c in candidates)
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
        skipped = name.startswith("DISABLED_") or _skips(macro.body)
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
        while stack and stack[-1].macro.body.end_byte <= macro.body.start_byte:
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
        arguments, end = _arguments(data, match.end() - 1)
        brace = _skip_space(data, end) if arguments is not None else end
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
    prefix: str,
    name: str,
    start: int,
    line: int,
    arguments: list[str],
    end: int,
    brace: int,
) -> _Macro | None:
    """The macro if it was code and its ``{`` opens a block in the blanked tree."""
    if not is_code(root, start):
        return None
    token = root.descendant_for_byte_range(brace, brace + 1)
    body = token.parent if token is not None and token.type == "{" else None
    if body is None or body.start_byte != brace:
        return None
    return _Macro(name, arguments, line, body, prefix)


def is_code(root: Node, at: int) -> bool:
    """Whether the byte at ``at`` is code: not in a comment, a string or a #define."""
    # A blanked space is in a comment, a string (or its content) or a #define's
    # body, or between tokens: the smallest node and its parent say which.
    node = root.descendant_for_byte_range(at, at + 1)
    parent = node.parent if node is not None else None
    return not any(n is not None and n.type in _NOT_CODE for n in (node, parent))


def _arguments(data: bytes, at: int) -> tuple[list[str] | None, int]:
    """The top-level arguments of the parenthesised list at ``at``, as source text,
    and the offset after its ``)``; None (and where the lexing stopped) if it has no
    end before a ``;``, a brace or :data:`_MAX_ARGUMENTS` bytes."""
    limit = min(len(data), at + _MAX_ARGUMENTS)
    depth, begin, found = 0, at + 1, []
    i = at
    while i < limit:
        byte = data[i]
        if byte in b"\"'":
            i = _end_of_quoted(data, i, limit)
            continue
        if byte in b";{}":
            return None, i  # no macro's arguments hold these: a string or comment misread
        if byte in b"([":
            depth += 1
        elif byte in b")]":
            depth -= 1
            if depth == 0:
                found.append(data[begin:i])
                return [a.decode("utf-8", "replace").strip() for a in found], i + 1
        elif byte == ord(",") and depth == 1:
            found.append(data[begin:i])
            begin = i + 1
        i += 1
    return None, i


def _end_of_quoted(data: bytes, start: int, limit: int) -> int:
    quote, i = data[start], start + 1
    while i < limit and data[i] != quote:
        i += 2 if data[i] == ord("\\") else 1
    return i + 1


def _skip_space(data: bytes, at: int) -> int:
    """The offset of the next byte that is not space or part of a comment."""
    while at < len(data):
        if data[at : at + 1].isspace():
            at += 1
        elif data.startswith(b"//", at):
            newline = data.find(b"\n", at)
            at = len(data) if newline < 0 else newline + 1
        elif data.startswith(b"/*", at):
            close = data.find(b"*/", at + 2)
            at = len(data) if close < 0 else close + 2
        else:
            break
    return at


def _literal(argument: str) -> str:
    """A string literal argument's text (adjacent literals joined); else the source."""
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', argument)
    return "".join(parts) if parts else argument


_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]', re.M)


def _includes(data: bytes) -> set[str]:
    return {m.group(1).decode("utf-8", "replace") for m in _INCLUDE.finditer(data)}

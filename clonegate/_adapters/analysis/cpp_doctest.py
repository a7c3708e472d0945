"""doctest's test cases, subcases and suites, from the C++ reader's macros (ADR 0005).

doctest writes a test's options as decorators multiplied into its name:
``TEST_CASE("x" * doctest::skip())``. Its suites do not nest: a test case is in one,
the innermost ``TEST_SUITE("s") {…}`` block around it, else the one the last
``TEST_SUITE_BEGIN("s");`` before it opened (until a ``TEST_SUITE_END``), and its own
``test_suite("t")`` decorator renames it. The suite's decorators apply to the test case
and its own after them (doctest copies the suite's, then applies the test case's:
``skip(false)`` runs a test of a skipped suite). Subcases nest like Catch2's sections.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from . import cpp_lexing
from .cpp import (
    DOCTEST_SUBCASES,
    DOCTEST_SUITE,
    DOCTEST_TESTS,
    Candidate,
    Switch,
    _literal,
    _Macro,
    _Open,
    emit,
    is_code,
)
from .outline import Outline

_SWITCH = re.compile(rb"\b(?:DOCTEST_)?TEST_SUITE_(BEGIN|END)\b")
# The name: adjacent string literals first in the argument (``"  Scenario: " "x"``).
_NAME = re.compile(r'\s*((?:"(?:[^"\\]|\\.)*"\s*)+)')
# ``* doctest::skip()``, ``* skip(true)`` (``using namespace doctest``), with an
# argument of one level of parentheses (``skip(!has_network())``).
_DECORATOR = re.compile(
    r"\*\s*(?:(?:::)?\s*doctest\s*::\s*)?"
    r"(skip|should_fail|expected_failures|may_fail|test_suite)\s*\(((?:[^()]|\([^()]*\))*)\)"
)
_OFF = frozenset({"false", "0"})
_SCENARIO = "  Scenario: "  # as doctest names a SCENARIO


@dataclass(frozen=True, slots=True)
class _Options:
    """What a name argument says: its name and decorators (None: not said)."""

    name: str
    skip: bool | None = None
    xfail: bool | None = None
    suite: str | None = None

    def status(self, suite: _Options) -> TestStatus | None:
        """A test case's marker under ``suite``: its own decorators, else the suite's.
        A conditional ``skip(cond)`` counts as skipped (ADR 0005)."""
        skip = self.skip if self.skip is not None else suite.skip
        xfail = self.xfail if self.xfail is not None else suite.xfail
        if skip:
            return TestStatus.SKIPPED
        return TestStatus.XFAIL if xfail else None


_NO_SUITE = _Options("")


def outline_doctest(macros: list[_Macro], switches: list[Switch]) -> Outline:
    """A test case (once, a template one whatever its types) is a test, or a suite of
    its subcases (leaves are tests, like Catch2's sections); a test case inside
    another's block, or a subcase outside any, is nothing. One pass in source order,
    the open blocks on stacks."""
    outline = Outline()
    suites: dict[str, Outline] = {}
    roots: list[tuple[_Open, Outline, TestStatus | None]] = []
    blocks: list[tuple[int, _Options, int]] = []  # open TEST_SUITE blocks: end, options, line
    stack: list[_Open] = []  # the open test case and its subcases
    begun, begun_line, switch = _NO_SUITE, 0, 0
    for macro in macros:
        at = macro.start
        begun, begun_line, switch = _switched(switches, switch, at, begun, begun_line)
        while stack and stack[-1].macro.end <= at:
            stack.pop()
        while blocks and blocks[-1][0] <= at:
            blocks.pop()
        if macro.prefix == "CATCH_":
            continue  # Catch2's, not doctest's
        if macro.name == DOCTEST_SUITE:
            if not stack:  # a suite inside a test case's block is no suite
                blocks.append((macro.end, _options(_argument(macro, 0)), macro.line))
        elif macro.name in DOCTEST_TESTS:
            if stack:
                continue  # a test case's text inside another's block is no test of its
            node = _Open(macro)
            suite, line = (blocks[-1][1], blocks[-1][2]) if blocks else (begun, begun_line)
            roots.append((node, *_test_case(macro, suite, line, outline, suites)))
            stack.append(node)
        elif macro.name in DOCTEST_SUBCASES and stack:
            node = _Open(macro)
            stack[-1].children.append(node)
            stack.append(node)
    emit(roots, _title)
    return outline


def _switched(
    switches: list[Switch], switch: int, at: int, begun: _Options, begun_line: int
) -> tuple[_Options, int, int]:
    """``(suite, its line, next switch)`` after the ``TEST_SUITE_BEGIN``/``END`` switches
    written before byte ``at``, from ``switch`` on."""
    while switch < len(switches) and switches[switch][0] < at:
        _, line, argument = switches[switch]
        begun = _options(argument) if argument is not None else _NO_SUITE  # None: END
        begun_line, switch = line, switch + 1
    return begun, begun_line, switch


def _test_case(
    macro: _Macro, suite: _Options, line: int, outline: Outline, suites: dict[str, Outline]
) -> tuple[Outline, TestStatus | None]:
    """A test case's container (its suite's, made at its first test case; ``line``: the
    enclosing suite's) and its status."""
    options = _options(_argument(macro, DOCTEST_TESTS[macro.name]))
    name = options.suite if options.suite is not None else suite.name
    if not name:
        return outline, options.status(suite)
    if name not in suites:
        suites[name] = outline.suite(name, line if name == suite.name else macro.line)
    return suites[name], options.status(suite)


def _title(macro: _Macro) -> str:
    """A test case's or subcase's name as doctest shows it."""
    if macro.name in DOCTEST_SUBCASES:
        return DOCTEST_SUBCASES[macro.name] + _options(_argument(macro, 0)).name
    name = _options(_argument(macro, DOCTEST_TESTS[macro.name])).name
    return _SCENARIO + name if macro.name.startswith("SCENARIO") else name


def _argument(macro: _Macro, index: int) -> str:
    return macro.arguments[index] if len(macro.arguments) > index else ""


def _options(argument: str) -> _Options:
    """The name (its leading string literals, else the text before a ``*``) and the
    decorators after it."""
    leading = _NAME.match(argument)
    if leading is not None:
        name, rest = _literal(leading.group(1)), argument[leading.end() :]
    else:
        before, star, after = argument.partition("*")
        name, rest = before.strip(), star + after
    skip = xfail = None
    suite = None
    for kind, value in _DECORATOR.findall(rest):
        on = value.strip() not in _OFF
        if kind == "test_suite":
            suite = _literal(value.strip())
        elif kind == "skip":
            skip = on
        elif kind in ("should_fail", "expected_failures"):
            xfail = on
    return _Options(name, skip, xfail, suite)


def suite_switches(data: bytes, root: Node, candidates: list[Candidate]) -> list[Switch]:
    """Each ``TEST_SUITE_BEGIN(…)`` and ``TEST_SUITE_END`` that is code, outside a test
    macro's arguments, in source order; each byte lexed once, lines counted once."""
    found: list[Switch] = []
    spans = [(c[2], c[6]) for c in candidates]  # each macro's name up to its brace
    after = counted = span = 0
    line = 1
    for match in _SWITCH.finditer(data):
        start = match.start()
        if start < after:
            continue
        while span < len(spans) and spans[span][1] <= start:
            span += 1
        if span < len(spans) and spans[span][0] <= start:
            continue  # in a test macro's arguments (blanked: not in the tree)
        argument = None
        if match.group(1) == b"BEGIN":
            paren = cpp_lexing.skip_space(data, match.end())
            if paren >= len(data) or data[paren] != ord("("):
                continue
            arguments, after = cpp_lexing.arguments(data, paren)
            if arguments is None:
                continue
            argument = arguments[0]
        if is_code(root, start):
            line += data.count(b"\n", counted, start)
            counted = start
            found.append((start, line, argument))
    return found

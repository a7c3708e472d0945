"""Playwright Test's calls, read from a file the JavaScript reader parsed (ADR 0005).

Playwright names everything through ``test``: ``test('x', fn)`` is a test,
``test.describe('x', fn)`` (and ``.serial``, ``.parallel``, ``.only``, ``.skip``,
``.fixme``) a suite; ``test.skip``/``fixme``/``fail``/``only`` with a title and a
function declare a marked test; without them (``test.skip()``, ``test.skip(cond,
'why')``) they mark what they stand in: the test or suite whose body holds them as a
statement of its own, or the whole file at its top level. Inside an ``if`` the mark
is conditional on something only a run knows: the test stays active, as a ``t.Skip``
inside an ``if`` does in Go. ``test.step``, ``test.use``, hooks and
``test.describe.configure`` are not tests.
"""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .javascript import Callee, has_callback, shadows_of
from .outline import Outline
from .syntax import Captures, string_value, text

_MARKERS = {
    "skip": TestStatus.SKIPPED,
    "fixme": TestStatus.SKIPPED,
    "fail": TestStatus.XFAIL,
    "only": TestStatus.FOCUSED,
}
_SUITE_MODES = frozenset({"serial", "parallel"})
_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function"})
_ORDER = (TestStatus.TODO, TestStatus.SKIPPED, TestStatus.FOCUSED, TestStatus.XFAIL)


def outline_playwright(
    calls: list[tuple[str, Node]],
    root: Node,
    captures: Captures | None,
    aliases: dict[str, Callee],
) -> Outline:
    """The tests and suites of a Playwright file; see the module docstring."""
    shadows = shadows_of(captures.get("bound", []) if captures is not None else [])
    outline = Outline()
    open_suites: list[tuple[int, Outline]] = [(len(root.text or b""), outline)]
    suites: dict[int, Outline] = {}  # by the start of their call
    tests: dict[int, tuple[Outline, int]] = {}  # container and index, by call start
    for name, call in calls:
        kind = _kind(call.child_by_field_name("function"), aliases)
        if kind is None:
            continue
        role, marker = kind
        if _shadowed(name, call, aliases, shadows):
            continue
        arguments = call.child_by_field_name("arguments")
        first = arguments.named_children[0] if arguments and arguments.named_children else None
        if role == "mark" and not _titled_with_callback(first, arguments):
            _mark_owner(call, marker, outline, suites, tests)
        elif first is not None:
            while open_suites[-1][0] <= call.start_byte:
                open_suites.pop()
            _add(call, first, role == "suite", marker, open_suites, suites, tests)
    return outline


def _shadowed(
    name: str, call: Node, aliases: dict[str, Callee], shadows: list[tuple[str, int, int]]
) -> bool:
    """Whether ``call``'s base name is bound to something else where it is written."""
    base = aliases[name][0] if name in aliases else name
    return any(n == base and start <= call.start_byte < end for n, start, end in shadows)


def _titled_with_callback(first: Node | None, arguments: Node | None) -> bool:
    """A literal title and a callback: ``test.skip("title", fn)`` defines a test."""
    titled = first is not None and string_value(first) is not None
    return titled and has_callback(arguments)


def _add(
    call: Node,
    first: Node,
    is_suite: bool,
    marker: TestStatus | None,
    open_suites: list[tuple[int, Outline]],
    suites: dict[int, Outline],
    tests: dict[int, tuple[Outline, int]],
) -> None:
    """A suite's or a test's call, ``first`` its first argument, into the innermost
    open suite; a suite is opened until the call's end."""
    container = open_suites[-1][1]
    line = call.start_point[0] + 1
    title = string_value(first)
    if is_suite:
        # test.describe(fn): an anonymous group
        suite = container.suite(title if title is not None else "", line, marker)
        open_suites.append((call.end_byte, suite))
        suites[call.start_byte] = suite
    else:
        tests[call.start_byte] = (container, len(container.tests))
        container.test(title if title is not None else text(first), line, marker)


def _kind(
    function: Node | None, aliases: dict[str, Callee]
) -> tuple[str, TestStatus | None] | None:
    """``test`` -> (test, None); ``test.describe.skip`` -> (suite, skipped); ``test.fixme``
    -> (mark, skipped); anything else on ``test`` (step, use, hooks) -> None."""
    properties: list[str] = []
    node = function
    while node is not None and node.type == "member_expression":
        properties.append(text(node.child_by_field_name("property")))
        node = node.child_by_field_name("object")
    if node is None or node.type != "identifier":
        return None
    base = text(node)
    if base in aliases:
        base, modifiers = aliases[base]
        properties.extend(reversed(modifiers))
    if base != "test":
        return None
    properties.reverse()
    if not properties:
        return "test", None
    if properties[0] == "describe":
        modes = properties[1:]
        if not all(m in _SUITE_MODES or m in _MARKERS for m in modes) or "fail" in modes:
            return None  # test.describe.configure({...})
        return "suite", _strongest(modes)
    if all(p in _MARKERS for p in properties):
        return "mark", _strongest(properties)
    return None


def _strongest(modifiers: list[str]) -> TestStatus | None:
    statuses = {_MARKERS[m] for m in modifiers if m in _MARKERS}
    return next((s for s in _ORDER if s in statuses), None)


def _mark_owner(
    call: Node,
    marker: TestStatus | None,
    outline: Outline,
    suites: dict[int, Outline],
    tests: dict[int, tuple[Outline, int]],
) -> None:
    """``test.skip()`` as a statement of a test's or suite's body, or of the file."""
    statement = call.parent
    if marker is None or statement is None or statement.type != "expression_statement":
        return
    block = statement.parent
    if block is not None and block.type == "program":
        outline.marker = _stronger(outline.marker, marker)
        return
    function = block.parent if block is not None and block.type == "statement_block" else None
    arguments = function.parent if function is not None and function.type in _FUNCTIONS else None
    owner = arguments.parent if arguments is not None and arguments.type == "arguments" else None
    if owner is None:
        return  # inside an if, a loop, a helper: conditional on the run
    if owner.start_byte in tests:
        container, index = tests[owner.start_byte]
        name, line, own = container.tests[index]
        container.tests[index] = (name, line, _stronger(own, marker))
    elif owner.start_byte in suites:
        suite = suites[owner.start_byte]
        suite.marker = _stronger(suite.marker, marker)


def _stronger(one: TestStatus | None, other: TestStatus) -> TestStatus:
    if one is None:
        return other
    return next(s for s in _ORDER if s in (one, other))

"""jest, vitest and mocha files (JavaScript, TypeScript, TSX), read with tree-sitter."""

from __future__ import annotations

from tree_sitter import Node

from .._inventory import TestStatus
from ._outline import Outline
from ._syntax import Captures, string_value, text

SUITE_CALLS = frozenset({"describe", "context", "suite", "fdescribe", "xdescribe", "xcontext"})
TEST_CALLS = frozenset({"it", "test", "specify", "fit", "xit", "xtest", "xspecify"})
MODIFIER_STATUS = {
    "skip": TestStatus.SKIPPED,
    "skipIf": TestStatus.SKIPPED,  # vitest: conditionally skipped counts as skipped
    "only": TestStatus.FOCUSED,
    "todo": TestStatus.TODO,
    "fails": TestStatus.XFAIL,  # vitest
    "failing": TestStatus.XFAIL,  # jest
}


def js_imports(captures: Captures) -> set[str]:
    """Module specifiers of ``import ... from 'x'``, ``import 'x'`` and ``require('x')``."""
    return {v for node in captures.get("source", ()) if (v := string_value(node)) is not None}


def outline_javascript(captures: Captures, root: Node) -> Outline:
    """Every ``describe``/``it``/``test`` call site with a name; nesting from the source.

    A call whose result is called again (``it.each(table)``) is the factory, not the
    test: ``it.each(table)('name', fn)`` counts once, as does a test inside a loop.
    """
    outline = Outline()
    open_suites: list[tuple[int, Outline]] = [(len(root.text or b""), outline)]
    for call in captures.get("call", ()):  # in source order: parents before children
        parent = call.parent
        if (
            parent is not None
            and parent.type == "call_expression"
            and parent.child_by_field_name("function") == call
        ):
            continue
        kind = _callee(call.child_by_field_name("function"))
        if kind is None:
            continue
        base, modifiers = kind
        arguments = call.child_by_field_name("arguments")
        first = arguments.named_children[0] if arguments and arguments.named_children else None
        if first is None:
            continue
        while open_suites[-1][0] <= call.start_byte:
            open_suites.pop()
        name = string_value(first) or text(first)
        line = call.start_point[0] + 1
        marker = _marker(base, modifiers)
        container = open_suites[-1][1]
        if base in SUITE_CALLS:
            open_suites.append((call.end_byte, container.suite(name, line, marker)))
        else:
            container.test(name, line, marker)
    return outline


def callee_roots(captures: Captures) -> set[str]:
    """The identifiers calls start from: ``vi`` in ``vi.fn()``, ``jest`` in ``jest.mock()``."""
    roots = set()
    for call in captures.get("call", ()):
        node = call.child_by_field_name("function")
        while node is not None and node.type in ("member_expression", "call_expression"):
            field = "object" if node.type == "member_expression" else "function"
            node = node.child_by_field_name(field)
        if node is not None and node.type == "identifier":
            roots.add(text(node))
    return roots


def _callee(function: Node | None) -> tuple[str, list[str]] | None:
    modifiers: list[str] = []
    node = function
    while node is not None:
        if node.type == "call_expression":  # it.each(table)(...), test.skipIf(cond)(...)
            node = node.child_by_field_name("function")
        elif node.type == "member_expression":
            prop = node.child_by_field_name("property")
            modifiers.append(text(prop))
            node = node.child_by_field_name("object")
        elif node.type == "identifier":
            base = text(node)
            if base in SUITE_CALLS or base in TEST_CALLS:
                return base, modifiers[::-1]
            return None
        else:
            return None
    return None


def _marker(base: str, modifiers: list[str]) -> TestStatus | None:
    if base.startswith("x"):
        return TestStatus.SKIPPED
    statuses = {MODIFIER_STATUS[m] for m in modifiers if m in MODIFIER_STATUS}
    if base.startswith("f"):
        statuses.add(TestStatus.FOCUSED)
    for status in (TestStatus.TODO, TestStatus.SKIPPED, TestStatus.FOCUSED, TestStatus.XFAIL):
        if status in statuses:
            return status
    return None

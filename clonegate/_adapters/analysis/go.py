"""Go ``testing`` files, read with tree-sitter: ``TestXxx`` functions and ``t.Run`` subtests."""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .outline import Outline
from .syntax import Captures, string_value, text

SKIP_CALLS = frozenset({"Skip", "SkipNow", "Skipf"})

QUERY = """
(function_declaration) @function
(call_expression
  function: (selector_expression field: (field_identifier) @_run (#eq? @_run "Run"))) @run
"""


def outline_go(captures: Captures) -> Outline:
    """A ``TestXxx(t *testing.T)`` function is a test; with ``t.Run`` calls it is a suite of them.

    Each ``t.Run`` call site counts once, so a table-driven loop is one test. A
    ``t.Skip`` among a test's top-level statements marks it skipped.
    """
    outline = Outline()
    runs = captures.get("run", [])
    for function in captures.get("function", ()):
        name = text(function.child_by_field_name("name"))
        if not _is_test_function(name, function):
            continue
        inside = [r for r in runs if function.start_byte < r.start_byte < function.end_byte]
        body = function.child_by_field_name("body")
        _add(outline, name, function, body, inside)
    return outline


def _add(into: Outline, name: str, node: Node, body: Node | None, runs: list[Node]) -> None:
    line = node.start_point[0] + 1
    marker = TestStatus.SKIPPED if _skips(body) else None
    direct = [r for r in runs if not any(o is not r and _contains(o, r) for o in runs)]
    if not direct:
        into.test(name, line, marker)
        return
    suite = into.suite(name, line, marker)
    for run in direct:
        arguments = run.child_by_field_name("arguments")
        args = arguments.named_children if arguments is not None else []
        if len(args) < 2:
            continue
        sub_name = string_value(args[0]) or text(args[0])
        literal_body = (
            args[1].child_by_field_name("body") if args[1].type == "func_literal" else None
        )
        nested = [r for r in runs if r is not run and _contains(run, r)]
        _add(suite, sub_name, run, literal_body, nested)


def _contains(outer: Node, inner: Node) -> bool:
    return outer.start_byte < inner.start_byte and inner.end_byte <= outer.end_byte


def _is_test_function(name: str, function: Node) -> bool:
    # go test: TestXxx where Xxx does not start with a lower-case letter.
    if not name.startswith("Test") or (len(name) > 4 and name[4].islower()):
        return False
    parameters = function.child_by_field_name("parameters")
    return parameters is not None and "testing.T" in text(parameters)


def _skips(body: Node | None) -> bool:
    if body is None:
        return False
    statements = body.named_children
    if len(statements) == 1 and statements[0].type == "statement_list":  # newer grammars
        statements = statements[0].named_children
    for statement in statements:
        call = statement.named_children[0] if statement.type == "expression_statement" else None
        if call is not None and call.type == "call_expression":
            function = call.child_by_field_name("function")
            if (
                function is not None
                and function.type == "selector_expression"
                and text(function.child_by_field_name("field")) in SKIP_CALLS
            ):
                return True
    return False

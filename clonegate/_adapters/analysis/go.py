"""Go ``testing`` files, read with tree-sitter: ``TestXxx`` functions and ``t.Run`` subtests."""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading
from .outline import Outline
from .syntax import Captures, kit, string_value, text

SKIP_CALLS = frozenset({"Skip", "SkipNow", "Skipf"})

QUERY = """
(function_declaration) @function
(call_expression
  function: (selector_expression field: (field_identifier) @_run (#eq? @_run "Run"))) @run
"""


def read(path: str, data: bytes, language: str) -> Reading:
    syntax = kit("go", QUERY)
    captures = syntax.capture(syntax.parse(data))
    return Reading(frozenset(), frozenset(), lambda _: outline_go(captures))


def outline_go(captures: Captures) -> Outline:
    """A ``func TestXxx(t *testing.T)`` is a test; with ``t.Run`` calls it is a suite of them.

    Only what ``go test`` runs: the exact signature (one ``*testing.T`` parameter, no
    result, no type parameters, not a method). A subtest is a ``Run`` call on the
    test's own ``*testing.T`` with a name and a function: ``exec.Command(...).Run()``,
    ``suite.Run(t, s)`` or ``srv.Run(ctx, h)`` are not subtests. Each call site counts
    once, so a table-driven loop is one test. A ``t.Skip`` among a test's top-level
    statements marks it skipped.
    """
    outline = Outline()
    runs = captures.get("run", [])
    for function in captures.get("function", ()):
        name = text(function.child_by_field_name("name"))
        receiver = _testing_t_parameter(name, function)
        if receiver is None:
            continue
        inside = [r for r in runs if _contains(function, r)]
        _add(outline, name, function, function.child_by_field_name("body"), receiver, inside)
    return outline


def _add(
    into: Outline, name: str, node: Node, body: Node | None, receiver: str, runs: list[Node]
) -> None:
    line = node.start_point[0] + 1
    marker = TestStatus.SKIPPED if _skips(body) else None
    direct = _direct_subtests(runs, receiver)
    if not direct:
        into.test(name, line, marker)
        return
    suite = into.suite(name, line, marker)
    for run in direct:
        _add_subtest(suite, run, runs, receiver)


def _direct_subtests(runs: list[Node], receiver: str) -> list[Node]:
    """The ``<receiver>.Run`` calls among ``runs`` that no other such call contains."""
    subtests = [r for r in runs if _subtest(r, receiver) is not None]
    return [r for r in subtests if not any(o is not r and _contains(o, r) for o in subtests)]


def _add_subtest(suite: Outline, run: Node, runs: list[Node], receiver: str) -> None:
    """``run``'s subtest in ``suite``, with the calls it contains as its own subtests."""
    sub_name, function = _subtest(run, receiver) or ("", None)
    literal = function if function is not None and function.type == "func_literal" else None
    nested = [r for r in runs if r is not run and _contains(run, r)]
    inner = _first_parameter_name(literal) if literal is not None else ""
    body = literal.child_by_field_name("body") if literal is not None else None
    _add(suite, sub_name, run, body, inner, nested)


def _subtest(run: Node, receiver: str) -> tuple[str, Node] | None:
    """``(name, function)`` if ``run`` is ``<receiver>.Run(name, function)``."""
    selector = run.child_by_field_name("function")
    operand = selector.child_by_field_name("operand") if selector is not None else None
    if not receiver or operand is None or operand.type != "identifier" or text(operand) != receiver:
        return None
    arguments = run.child_by_field_name("arguments")
    args = arguments.named_children if arguments is not None else []
    if len(args) != 2:
        return None
    value = string_value(args[0])
    return (value if value is not None else text(args[0])), args[1]


def _contains(outer: Node, inner: Node) -> bool:
    return outer.start_byte < inner.start_byte and inner.end_byte <= outer.end_byte


def _testing_t_parameter(name: str, function: Node) -> str | None:
    """The name of a test function's ``*testing.T`` parameter (``""`` if unnamed), or
    ``None`` if ``go test`` would not run the function as a test."""
    # TestXxx where Xxx does not start with a lower-case letter.
    if not name.startswith("Test") or (len(name) > 4 and name[4].islower()):
        return None
    if function.child_by_field_name("result") or function.child_by_field_name("type_parameters"):
        return None
    parameters = function.child_by_field_name("parameters")
    declarations = parameters.named_children if parameters is not None else []
    if len(declarations) != 1 or declarations[0].type != "parameter_declaration":
        return None
    declaration = declarations[0]
    kind = declaration.child_by_field_name("type")
    if kind is None or "".join(text(kind).split()) != "*testing.T":
        return None
    names = declaration.children_by_field_name("name")
    if len(names) > 1:
        return None
    return text(names[0]) if names and text(names[0]) != "_" else ""


def _first_parameter_name(literal: Node) -> str:
    parameters = literal.child_by_field_name("parameters")
    for declaration in parameters.named_children if parameters is not None else ():
        names = declaration.children_by_field_name("name")
        return text(names[0]) if names else ""
    return ""


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

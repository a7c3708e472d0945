"""What node:test adds to the JavaScript reader (:mod:`.javascript`): the names a file
gives node:test's functions where it imports them, subtests, and the test context's
own skips (ADR 0005).

node:test has no globals, so these apply only to a file that imports ``node:test`` (or
``test``, its npm port). A test created while another runs is that test's subtest,
whether through the context (``t.test('b', fn)``, ``const test = t.test``) or a plain
``test()`` inside its function: the outer test is then a suite, as a Go test with
``t.Run`` is.
"""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .syntax import kit, string_value, text

MODULES = frozenset({"node:test", "test"})
# The content signal of a file that makes subtests through a test context it is given
# (fastify's test/helper.js: ``function payloadMethod(method, t) { const test = t.test``):
# it runs only inside a node:test test, and names node:test without importing it.
CONTEXT_SIGNAL = "t.test"
# The functions node:test exports that make tests and suites.
FUNCTIONS = frozenset({"test", "it", "describe", "suite"})
# A context method called among the first statements of a test's function.
CONTEXT_STATUS = {"skip": TestStatus.SKIPPED, "todo": TestStatus.TODO}

_IMPORTS = """
(import_statement
  (import_clause
    (named_imports (import_specifier name: (identifier) @name alias: (identifier) @alias)))
  source: (string) @source)
(import_statement (import_clause (identifier) @default) source: (string) @source)
(import_statement
  (import_clause (namespace_import (identifier) @namespace)) source: (string) @source)
(variable_declarator
  name: (identifier) @default
  value: (call_expression
    function: (identifier) @_require (#eq? @_require "require")
    arguments: (arguments . (string) @source)))
"""


def imports_node_test(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(MODULES)


def names(root: Node, language: str) -> tuple[dict[str, str], frozenset[str]]:
    """``(aliases, namespaces)`` for node:test's imports in the file: ``import { test as
    nt }`` gives ``{"nt": "test"}``; ``import * as n``, ``import n from`` and ``const n =
    require`` make ``n`` a namespace (``n.test(…)``, ``n.describe(…)``), and the last
    two ``n`` itself too, node:test's default export being ``test``."""
    aliases: dict[str, str] = {}
    namespaces: set[str] = set()
    for captures in kit(language, _IMPORTS).matches(root):
        sources = captures.get("source", [])
        if not sources or string_value(sources[0]) not in MODULES:
            continue
        if "alias" in captures and text(captures["name"][0]) in FUNCTIONS:
            aliases[text(captures["alias"][0])] = text(captures["name"][0])
        for node in captures.get("default", ()):
            if text(node) not in FUNCTIONS:
                aliases[text(node)] = "test"
                namespaces.add(text(node))
        namespaces.update(text(node) for node in captures.get("namespace", ()))
    return aliases, frozenset(namespaces)


def callback(call: Node) -> Node | None:
    """The function a test call runs: its last argument, if that is a function."""
    arguments = call.child_by_field_name("arguments")
    last = arguments.named_children[-1] if arguments and arguments.named_children else None
    if last is not None and last.type in ("arrow_function", "function_expression", "function"):
        return last
    return None


def context_name(call: Node) -> str:
    """The name of the test context parameter of a test call's function ("" if none)."""
    function = callback(call)
    if function is None:
        return ""
    single = function.child_by_field_name("parameter")  # t => …
    if single is not None:
        return text(single) if single.type == "identifier" else ""
    parameters = function.child_by_field_name("parameters")
    first = parameters.named_children[0] if parameters and parameters.named_children else None
    if first is not None and first.type in ("required_parameter", "optional_parameter"):
        first = first.child_by_field_name("pattern")
    return text(first) if first is not None and first.type == "identifier" else ""


def subtest_calls(member_names: list[Node]) -> list[Node]:
    """The ``x.test(…)`` calls among captured ``test`` properties (``x`` an identifier)."""
    found = []
    for name in member_names:
        member = name.parent
        call = member.parent if member is not None else None
        owner = member.child_by_field_name("object") if member is not None else None
        if (
            call is not None
            and call.type == "call_expression"
            and call.child_by_field_name("function") == member
            and owner is not None
            and owner.type == "identifier"
        ):
            found.append(call)
    return found


def makes_subtests(member_names: list[Node]) -> bool:
    """Whether a captured ``x.test`` is bound (``const test = t.test``) or called with a
    function last (``t.test('name', fn)``; ``re.test(s)`` is not)."""
    for name in member_names:
        member = name.parent
        owner = member.parent if member is not None else None
        if owner is None or member is None:
            continue
        if owner.type == "variable_declarator" and owner.child_by_field_name("value") == member:
            return True
        if (
            owner.type == "call_expression"
            and owner.child_by_field_name("function") == member
            and callback(owner) is not None
        ):
            return True
    return False


def receiver(call: Node) -> str:
    """``t`` for ``t.test(…)``."""
    function = call.child_by_field_name("function")
    return text(function.child_by_field_name("object")) if function is not None else ""


def context_marker(call: Node) -> TestStatus | None:
    """skipped or todo when the test's function calls ``t.skip()`` or ``t.todo()`` as
    one of its top-level statements (``if (…) t.skip()`` is a condition: active)."""
    context = context_name(call)
    function = callback(call)
    body = function.child_by_field_name("body") if function is not None else None
    if not context or body is None or body.type != "statement_block":
        return None
    for statement in body.named_children:
        expression = (
            statement.named_children[0] if statement.type == "expression_statement" else None
        )
        while expression is not None and expression.type == "await_expression":
            expression = expression.named_children[0] if expression.named_children else None
        if expression is None or expression.type != "call_expression":
            continue
        function_node = expression.child_by_field_name("function")
        if function_node is None or function_node.type != "member_expression":
            continue
        method = text(function_node.child_by_field_name("property"))
        if (
            text(function_node.child_by_field_name("object")) == context
            and method in CONTEXT_STATUS
        ):
            return CONTEXT_STATUS[method]
    return None

"""kotest's DSL specs, read from a Kotlin syntax tree (ADR 0005).

A spec registers its tests in the lambda it passes to its style's constructor
(``class S : FunSpec({ ... })``) or in ``init`` blocks. Containers (``context``,
``describe``, ``given``, ``"x" should { }``, ``"x" - { }``...) are suites, never
tests; leaves (``test``, ``it``, ``then``, ``"x" { }``...) are tests, one per place
written: a leaf inside a loop or a ``forEach`` once, ``withData`` once where its
lambda holds no test of its own (else it is a container of those). A test factory
(``val shared = funSpec { ... }``) is read on its own, never again where a spec
includes it. The styles' function names do not collide, so one table serves all of
them.
"""

from __future__ import annotations

import re

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .outline import Outline
from .syntax import text

__all__ = ["FACTORIES", "STYLES", "read_spec", "spec_body"]

# AnnotationSpec is not here: its annotated functions are read as JUnit's.
STYLES = frozenset(
    {
        "FunSpec",
        "StringSpec",
        "ShouldSpec",
        "DescribeSpec",
        "BehaviorSpec",
        "WordSpec",
        "FreeSpec",
        "FeatureSpec",
        "ExpectSpec",
    }
)
# Test factories (``val shared = funSpec { ... }``, ``include(shared)`` in specs): their
# tests are counted once, where written, as a suite of their own.
FACTORIES = frozenset(style[0].lower() + style[1:] for style in STYLES)
_CONTAINERS = frozenset(
    {"context", "describe", "given", "Given", "when", "When", "and", "And", "feature"}
)
_LEAVES = frozenset({"test", "it", "should", "then", "Then", "scenario", "expect"})
_DISABLED = {f"x{name}" for name in _CONTAINERS | _LEAVES} | {
    f"x{name[0].upper()}{name[1:]}" for name in _CONTAINERS | _LEAVES
}
# Data-driven tests (kotest-framework-datatest): one test where written.
_DATA = frozenset({"withData", "withTests", "withContexts"})
_WORD_CONTAINERS = frozenset({"should", "when", "When"})  # WordSpec's infix forms
# ``config(enabled = false)``, or ``config(false)`` (``enabled`` is the first parameter).
# A condition to run (``enabledIf``, ``enabled = !ci``) is active, as vitest's ``runIf``
# is (ADR 0005).
_CONFIG_DISABLES = re.compile(r"\benabled\s*=\s*false\b|^\(\s*false\s*[,)]")
# Nodes whose inside registers nothing when the spec is built: declarations.
_OPAQUE = frozenset({"function_declaration", "class_declaration", "object_declaration"})


def spec_body(cls: Node) -> list[Node] | None:
    """The blocks where ``cls`` registers its tests when it extends a DSL spec style:
    the lambda passed to the style's constructor and the class's ``init`` blocks."""
    specifiers = next((c for c in cls.named_children if c.type == "delegation_specifiers"), None)
    for specifier in specifiers.named_children if specifiers is not None else ():
        call = _style_invocation(specifier)
        if call is None:
            continue
        arguments = call.named_children[-1] if len(call.named_children) == 2 else None
        bodies = [
            a.named_children[-1]
            for a in (arguments.named_children if arguments is not None else ())
            if a.named_children and a.named_children[-1].type == "lambda_literal"
        ]
        for member in _class_members(cls):
            if member.type == "anonymous_initializer":
                bodies.extend(member.named_children)
        return bodies
    return None


def _style_invocation(specifier: Node) -> Node | None:
    """The constructor call of a delegation specifier naming a spec style
    (``FunSpec({ … })``), else None."""
    call = specifier.named_children[0] if specifier.named_children else None
    if call is None or call.type != "constructor_invocation":
        return None
    user_type = call.named_children[0]
    if not user_type.named_children or text(user_type.named_children[-1]) not in STYLES:
        return None
    return call


def read_spec(bodies: list[Node], spec: Outline) -> None:
    """Add the tests and containers registered in ``bodies`` to ``spec``.

    Walks with an explicit stack: a tree may be as deep as the syntax bounds allow.
    A ``withData`` is read as a container, then made a test if nothing in it was one:
    deciding before reading it (reading its lambda twice) doubled the work at each
    level of nested ``withData`` (22 levels took 35 s).
    """
    # (container, withData's suite, how many tests the container had then), in order
    data: list[tuple[Outline, Outline, int]] = []
    stack = [(node, spec) for body in reversed(bodies) for node in reversed(body.named_children)]
    while stack:
        node, outline = stack.pop()
        found = _registration(node)
        if found is None:
            if node.type not in _OPAQUE and not is_factory(node):
                stack.extend((child, outline) for child in reversed(node.named_children))
            continue
        function, name, config, lambda_ = found
        status = _status(function, name, config)
        if function in _DATA or function.removeprefix("x") in _CONTAINERS:
            suite = outline.suite(name, node.start_point[0] + 1, status)
            stack.extend((child, suite) for child in reversed(lambda_.named_children))
            if function in _DATA:
                data.append((outline, suite, len(outline.tests)))
        else:
            outline.test(name, node.start_point[0] + 1, status)
    _data_without_containers_as_tests(data)


def _data_without_containers_as_tests(data: list[tuple[Outline, Outline, int]]) -> None:
    """Each ``withData`` suite that holds no test becomes a test, where it was written."""
    for container, suite, index in reversed(data):  # the innermost, the last first
        if not suite.tests and all(s.is_empty() for s in suite.suites):
            container.suites = [s for s in container.suites if s is not suite]
            container.tests.insert(index, (suite.name, suite.line, suite.marker))


def is_factory(node: Node) -> bool:
    """Whether ``node`` is a test factory's call: ``funSpec { }``, read on its own."""
    callee = node.named_children[0] if node.named_children else None
    return (
        node.type == "call_expression"
        and callee is not None
        and callee.type == "identifier"
        and text(callee) in FACTORIES
    )


def _registration(node: Node) -> tuple[str, str, str, Node] | None:
    """``(function, name, config arguments, lambda)`` when ``node`` registers a test or a
    container; the function is "" for a string invoked with a lambda (``"x" { }``)."""
    if node.type == "call_expression" and len(node.named_children) == 2:
        return _call_registration(node)
    if node.type in ("infix_expression", "binary_expression") and len(node.named_children) >= 2:
        return _operator_registration(node)
    return None


def _call_registration(node: Node) -> tuple[str, str, str, Node] | None:
    """As :func:`_registration`, of a call with a trailing lambda (``test("x") { }``)."""
    callee, trailing = node.named_children
    if trailing.type != "annotated_lambda" or not trailing.named_children:
        return None
    called = _callee(callee)
    if called is None:
        return None
    function, name, config = called
    lambda_ = trailing.named_children[-1]
    known = function in _LEAVES or function in _CONTAINERS or function in _DISABLED
    if function in _DATA:
        return function, function, config, lambda_  # named by each datum at run time
    if (known and name is not None) or function == "":
        return function, name or function, config, lambda_
    return None


def _operator_registration(node: Node) -> tuple[str, str, str, Node] | None:
    """As :func:`_registration`, of a container by its form: ``"x" - { }`` or
    ``"x" should { }``."""
    left, right = node.named_children[0], node.named_children[-1]
    if left.type != "string_literal" or right.type != "lambda_literal":
        return None
    if node.type == "infix_expression":
        operator = text(node.named_children[1]).strip("`")
        if len(node.named_children) != 3 or operator not in _WORD_CONTAINERS:
            return None
    elif not any(c.type == "-" for c in node.children):
        return None
    return "context", _string(left), "", right  # a container by its form


def _callee(callee: Node) -> tuple[str, str | None, str] | None:
    """``(function, name from the first argument, config arguments)`` of a call's callee."""
    if callee.type == "string_literal":
        return "", _string(callee), ""
    if callee.type != "call_expression" or len(callee.named_children) != 2:
        return None
    function, arguments = callee.named_children
    if arguments.type != "value_arguments":
        return None
    if function.type == "identifier":
        return text(function).strip("`"), _first_argument(arguments), ""
    if function.type == "navigation_expression" and len(function.named_children) == 2:
        receiver, member = function.named_children
        if text(member) != "config":
            return None
        inner = _callee(receiver)
        return (inner[0], inner[1], text(arguments)) if inner is not None else None
    return None


def _status(function: str, name: str, config: str) -> TestStatus | None:
    if function in _DISABLED or name.startswith("!") or _CONFIG_DISABLES.search(config):
        return TestStatus.SKIPPED
    if name.startswith("f:"):
        return TestStatus.FOCUSED
    return None


def _first_argument(arguments: Node) -> str | None:
    """The name a call's first argument gives: a string literal's content, else the
    expression as written (``test(case.name)``, ADR 0005); None without arguments."""
    first = arguments.named_children[0] if arguments.named_children else None
    value = first.named_children[-1] if first is not None and first.named_children else None
    if value is None:
        return None
    return _string(value) if value.type == "string_literal" else text(value)


def _string(node: Node) -> str:
    quote = '"""' if text(node).startswith('"""') else '"'
    return text(node).removeprefix(quote).removesuffix(quote)


def _class_members(cls: Node) -> list[Node]:
    body = next((c for c in cls.named_children if c.type == "class_body"), None)
    return body.named_children if body is not None else []

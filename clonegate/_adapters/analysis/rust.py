"""Rust tests, read with tree-sitter: ``#[test]`` functions (and ``#[tokio::test]``, any
``#[path::test]``) in modules, including those inside macro invocations."""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading
from .outline import Outline
from .syntax import Captures, innermost, kit, text

QUERY = """
(function_item) @function
(mod_item) @module
(macro_invocation (token_tree) @macro_body)
"""
# A macro inside a macro inside a macro is read; deeper nesting is not worth the cost.
_MACRO_DEPTH = 3


def read(path: str, data: bytes, language: str) -> Reading | None:
    if b"test" not in data:
        return None  # no #[test] / #[tokio::test]: nothing to parse for
    outline = Outline()
    _outline_into(outline, data, 0, 0)
    outline.drop_empty_suites()
    return Reading(frozenset(), frozenset(), lambda _: outline)


def _outline_into(outline: Outline, data: bytes, line_offset: int, depth: int) -> None:
    """Test functions are tests; a ``mod`` that contains tests is a suite.

    ``#[ignore]``, and ``#[cfg_attr(cond, ignore)]`` or ``#[rustversion::attr(cond,
    ignore)]`` (ignored somewhere, as ADR 0005 counts conditional skips), mark a test
    skipped. ``#[should_panic]`` tests are ordinary active tests: the panic is their
    pass condition. The items of a macro invocation (``rt_test! { #[test] fn a() {} }``)
    are left unparsed by tree-sitter; they are parsed again on their own, once per
    invocation (a ``macro_rules!`` template's tests, expanded by the compiler, are not
    counted: ADR 0005).
    """
    syntax = kit("rust", QUERY)
    try:
        captures = syntax.capture(syntax.parse(data))
    except SyntaxError:
        if depth:
            return  # a macro whose body is not items (a DSL): nothing to read
        raise
    _add(outline, captures, line_offset, depth)


def _add(outline: Outline, captures: Captures, line_offset: int, depth: int) -> None:
    modules = captures.get("module", [])
    suites: dict[int, Outline] = {}

    def container(node: Node) -> Outline:
        owner = innermost(node, modules)
        return suites[owner.id] if owner is not None else outline

    for module in modules:
        name = text(module.child_by_field_name("name"))
        suites[module.id] = container(module).suite(name, module.start_point[0] + 1 + line_offset)
    for function in captures.get("function", ()):
        attributes = _attributes(function)
        if not any(path == "test" or path.endswith("::test") for path, _ in attributes):
            continue
        ignored = any(_ignores(path, attribute) for path, attribute in attributes)
        container(function).test(
            text(function.child_by_field_name("name")),
            function.start_point[0] + 1 + line_offset,
            TestStatus.SKIPPED if ignored else None,
        )
    if depth >= _MACRO_DEPTH:
        return
    for body in captures.get("macro_body", ()):
        source = body.text or b""
        if b"#[" in source and b"test" in source:
            # The token tree without its delimiters; lines count from its first line.
            _outline_into(
                container(body), source[1:-1], line_offset + body.start_point[0], depth + 1
            )


def _ignores(path: str, attribute: Node) -> bool:
    if path == "ignore":
        return True
    if path == "cfg_attr" or path.endswith("::attr"):
        arguments = next((c for c in attribute.named_children if c.type == "token_tree"), None)
        return arguments is not None and any(
            c.type == "identifier" and text(c) == "ignore" for c in arguments.named_children
        )
    return False


def _attributes(function: Node) -> list[tuple[str, Node]]:
    """The attributes just above ``function``, with their paths: ``test``, ``tokio::test``..."""
    found: list[tuple[str, Node]] = []
    node = function.prev_named_sibling
    while node is not None and node.type in ("attribute_item", "line_comment", "block_comment"):
        if node.type == "attribute_item":
            attribute = next((c for c in node.named_children if c.type == "attribute"), None)
            if attribute is not None and attribute.named_children:
                found.append((text(attribute.named_children[0]), attribute))
        node = node.prev_named_sibling
    return found

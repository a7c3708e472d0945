"""Rust tests, read with tree-sitter: ``#[test]`` and ``#[tokio::test]`` functions in modules."""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .outline import Outline
from .syntax import Captures, innermost, text

TEST_ATTRIBUTES = frozenset({"test", "tokio::test"})

QUERY = """
(function_item) @function
(mod_item) @module
"""


def outline_rust(captures: Captures) -> Outline:
    """Test functions are tests; a ``mod`` that contains tests is a suite. ``#[ignore]`` skips.

    ``#[should_panic]`` tests are ordinary active tests: the panic is their pass condition.
    """
    outline = Outline()
    modules = captures.get("module", [])
    suites: dict[int, Outline] = {}
    for module in modules:
        owner = innermost(module, modules)
        container = suites[owner.id] if owner is not None else outline
        name = text(module.child_by_field_name("name"))
        suites[module.id] = container.suite(name, module.start_point[0] + 1)
    for function in captures.get("function", ()):
        attributes = _attributes(function)
        if not attributes & TEST_ATTRIBUTES:
            continue
        owner = innermost(function, modules)
        container = suites[owner.id] if owner is not None else outline
        marker = TestStatus.SKIPPED if "ignore" in attributes else None
        container.test(
            text(function.child_by_field_name("name")), function.start_point[0] + 1, marker
        )
    outline.drop_empty_suites()
    return outline


def _attributes(function: Node) -> set[str]:
    """Paths of the attributes just above ``function``: ``test``, ``tokio::test``, ``ignore``."""
    names = set()
    node = function.prev_named_sibling
    while node is not None and node.type in ("attribute_item", "line_comment", "block_comment"):
        if node.type == "attribute_item":
            attribute = next((c for c in node.named_children if c.type == "attribute"), None)
            if attribute is not None and attribute.named_children:
                names.add(text(attribute.named_children[0]))
        node = node.prev_named_sibling
    return names

"""PHP files, read with tree-sitter: PHPUnit test classes and Pest's ``it``/``test``/
``describe`` calls (ADR 0005). One reading serves both frameworks: a PHPUnit file
declares classes, a Pest file calls functions at its top level, and the signals say
which the file holds (``testcase``: a class extending another; ``pest``: a top-level
``it``, ``test`` or ``describe``)."""

from __future__ import annotations

import re

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading
from .outline import Outline, strongest
from .syntax import Captures, kit, text

QUERY = """
(namespace_use_declaration) @import
(class_declaration) @class
(program (expression_statement) @call)
"""
# PHPUnit's runtime skips, as a top-level statement of the test (ADR 0005).
_RUNTIME_SKIPS = frozenset({"markTestSkipped", "markTestIncomplete"})
_DOC_TEST = re.compile(r"@test\b")
_DOC_REQUIRES = re.compile(r"@requires\b")
_PEST_TESTS = frozenset({"it", "test"})
_PEST_CALLS = _PEST_TESTS | {"describe"}
_PEST_MARKERS = {"skip": TestStatus.SKIPPED, "todo": TestStatus.TODO, "only": TestStatus.FOCUSED}


def read(path: str, data: bytes, language: str) -> Reading:
    syntax = kit("php", QUERY)
    captures = syntax.capture(syntax.parse(data))
    # Pest runs a file with its calls, whatever classes it declares beside them.
    if any(_pest_call(c.named_children[0])[0] is not None for c in captures.get("call", ())):
        signals = {"pest"}
    elif any(_base(c) for c in captures.get("class", ())):
        signals = {"testcase"}
    else:
        signals = set()
    return Reading(frozenset(_imports(captures)), frozenset(signals), lambda _: outline(captures))


def outline(captures: Captures) -> Outline:
    """PHPUnit's classes, then Pest's calls, in one outline."""
    found = Outline()
    for cls in captures.get("class", ()):
        _read_class(cls, found)
    for statement in captures.get("call", ()):
        _read_pest(statement, found)
    found.drop_empty_suites()
    return found


def _imports(captures: Captures) -> set[str]:
    """``use A\\B\\C;`` as ``A.B.C``; a group ``use A\\{B, C}`` as ``A.B`` and ``A.C``."""
    found = set()
    for use in captures.get("import", ()):
        prefix = next((text(c) for c in use.named_children if c.type == "namespace_name"), "")
        for clause in _descendants(use, "namespace_use_clause"):
            name = text(clause.named_children[0]) if clause.named_children else ""
            found.add("\\".join(p for p in (prefix, name) if p).strip("\\").replace("\\", "."))
    return found


def _descendants(node: Node, kind: str) -> list[Node]:
    found = []
    for child in node.named_children:
        if child.type == kind:
            found.append(child)
        elif child.type == "namespace_use_group":
            found.extend(_descendants(child, kind))
    return found


def _base(cls: Node) -> str:
    base = next((c for c in cls.named_children if c.type == "base_clause"), None)
    return text(base.named_children[-1]) if base is not None and base.named_children else ""


def _read_class(cls: Node, root: Outline) -> None:
    """A class extending another is a suite of its tests: public methods named ``test*``
    or marked ``@test``/``#[Test]``. An abstract class is counted where written (its
    tests run in the subclasses, which add nothing: ADR 0005)."""
    if not _base(cls):
        return
    name = cls.child_by_field_name("name")
    suite = root.suite(text(name), _line(name), _requires(cls))
    body = cls.child_by_field_name("body")
    for method in body.named_children if body is not None else ():
        if method.type != "method_declaration" or not _public(method):
            continue
        if method.child_by_field_name("body") is None:
            continue  # abstract: run, and counted, where a subclass implements it
        method_name = text(method.child_by_field_name("name"))
        attributes = _attributes(method)
        doc = _docblock(method)
        if not (method_name.startswith("test") or "Test" in attributes or _DOC_TEST.search(doc)):
            continue
        marker = _requires(method) or _runtime_skip(method)
        # The name's line, as PHP's reflection tells it (not the attributes' above).
        suite.test(method_name, _line(method.child_by_field_name("name")), marker)


def _line(node: Node | None) -> int:
    return node.start_point[0] + 1 if node is not None else 0


def _public(method: Node) -> bool:
    """Public, explicitly or by default (PHP's methods without a visibility are)."""
    for child in method.named_children:
        if child.type == "visibility_modifier":
            return text(child) == "public"
    return True


def _attributes(node: Node) -> set[str]:
    """The simple names of the attributes on a declaration (``#[Test]``)."""
    found = set()
    for group in node.named_children:
        if group.type != "attribute_list":
            continue
        for attribute in group.named_children:
            for item in attribute.named_children:
                if item.type == "attribute" and item.named_children:
                    found.add(text(item.named_children[0]).rsplit("\\", 1)[-1])
    return found


def _docblock(node: Node) -> str:
    """The ``/** … */`` comment just before a declaration, or ""."""
    previous = node.prev_named_sibling
    if previous is not None and previous.type == "comment" and text(previous).startswith("/**"):
        return text(previous)
    return ""


def _requires(node: Node) -> TestStatus | None:
    """Skipped for ``@requires`` or ``#[Requires…]``: conditional skips (ADR 0005)."""
    conditional = any(a.startswith("Requires") for a in _attributes(node))
    if conditional or _DOC_REQUIRES.search(_docblock(node)):
        return TestStatus.SKIPPED
    return None


def _runtime_skip(method: Node) -> TestStatus | None:
    """Skipped for ``$this->markTestSkipped()``/``markTestIncomplete()`` (or ``self::``,
    ``static::``) as a top-level statement of the body; inside an ``if`` it stays active."""
    body = method.child_by_field_name("body")
    for statement in body.named_children if body is not None else ():
        call = statement.named_children[0] if statement.type == "expression_statement" else None
        if (
            call is not None
            and call.type in ("member_call_expression", "scoped_call_expression")
            and text(call.child_by_field_name("name")) in _RUNTIME_SKIPS
        ):
            return TestStatus.SKIPPED
    return None


def _pest_call(expression: Node | None) -> tuple[Node | None, list[str]]:
    """The ``it``/``test``/``describe`` call under a chain of method calls
    (``it(…)->with(…)->skip()``), and the chain's method names; (None, []) if none."""
    chain: list[str] = []
    node = expression
    while node is not None and node.type == "member_call_expression":
        chain.append(text(node.child_by_field_name("name")))
        node = node.child_by_field_name("object")
    if (
        node is not None
        and node.type == "function_call_expression"
        and text(node.child_by_field_name("function")) in _PEST_CALLS
    ):
        return node, chain
    return None, []


def _read_pest(statement: Node, container: Outline, todo: bool = False) -> None:
    """One Pest statement: a test (``it`` named "it …", as Pest shows it), or a
    ``describe`` suite with the statements of its closure. Datasets (``->with()``)
    once; ``->skip()`` skipped (whatever its condition), ``->todo()`` or no closure a
    todo, ``->only()`` focused; a ``describe``'s marker applies to its contents (its
    ``->todo()`` too, which a suite's marker does not pass on: ``todo``)."""
    call, chain = _statement_call(statement)
    if call is None:
        return
    function = text(call.child_by_field_name("function"))
    title, closure = _title_and_closure(call)
    if title is None:
        return  # a name computed at run time: not a test this reading can name
    marker = strongest(_PEST_MARKERS.get(m) for m in chain)
    line = call.start_point[0] + 1
    todo = todo or marker is TestStatus.TODO
    if function == "describe":
        suite = container.suite(title, line, None if todo else marker)
        _read_pest_body(closure, suite, todo)
        return
    if todo or (closure is None and marker is None):
        marker = TestStatus.TODO
    container.test(f"it {title}" if function == "it" else title, line, marker)


def _title_and_closure(call: Node) -> tuple[str | None, Node | None]:
    """A Pest call's literal title (None if computed) and its closure, if any."""
    arguments = [a.named_children[0] for a in _arguments(call) if a.named_children]
    title = _string(arguments[0]) if arguments else None
    return title, next((a for a in arguments[1:] if a.type in _CLOSURES), None)


def _statement_call(statement: Node) -> tuple[Node | None, list[str]]:
    """As :func:`_pest_call`, of an expression statement; ``(None, [])`` for another."""
    if statement.type != "expression_statement" or not statement.named_children:
        return None, []
    return _pest_call(statement.named_children[0])


def _read_pest_body(closure: Node | None, suite: Outline, todo: bool) -> None:
    """The statements of a ``describe``'s closure, read into its suite."""
    body = closure.child_by_field_name("body") if closure is not None else None
    for inner in body.named_children if body is not None else ():
        _read_pest(inner, suite, todo)


_CLOSURES = frozenset({"anonymous_function", "arrow_function"})


def _arguments(call: Node) -> list[Node]:
    arguments = call.child_by_field_name("arguments")
    return [a for a in arguments.named_children if a.type == "argument"] if arguments else []


def _string(node: Node) -> str | None:
    """A string literal's value when it holds no interpolation, else None."""
    if node.type not in ("string", "encapsed_string"):
        return None
    if any(c.type not in ("string_content", "escape_sequence") for c in node.named_children):
        return None
    return "".join(text(c) for c in node.named_children)

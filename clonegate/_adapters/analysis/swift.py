"""Swift files, read with tree-sitter: XCTest's ``test*`` methods of ``XCTestCase``
subclasses and Swift Testing's ``@Test`` functions, in one outline (ADR 0005).

A file holds either kind, or both while it migrates; its framework is the one it
imports (``XCTest``, ``Testing``) or, failing that, the one its content names (a class
inheriting ``XCTestCase`` in a file importing ``XCTVapor``, which re-exports XCTest).
"""

from __future__ import annotations

from collections.abc import Callable

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading
from .frameworks.swift_files import SIGNAL_TESTING, SIGNAL_XCTEST
from .outline import Outline
from .syntax import Captures, kit, owners, text

QUERY = """
(import_declaration (identifier) @import)
(class_declaration) @type
(protocol_declaration) @type
(function_declaration) @function
"""
# XCTest leaves these out: not visible to its discovery, or not instance methods.
_NOT_RUN = frozenset({"private", "fileprivate", "static", "class"})
# A base class from another file is taken for an XCTestCase subclass by the name its
# kind conventionally has (``BaseTestCase``); an extension of a ``…Tests`` class
# defined in another file holds that class's tests.
_BASE_SUFFIXES = ("TestCase",)
_EXTENDED_SUFFIXES = ("TestCase", "Tests")
_KINDS = frozenset({"class", "struct", "enum", "actor", "extension", "protocol"})
_SKIPS = frozenset({"XCTSkipIf", "XCTSkipUnless"})
_SKIPPING_TRAITS = frozenset({"disabled", "enabled"})

_Marks = Callable[[Node], "TestStatus | None"]


def read(path: str, data: bytes, language: str) -> Reading:
    syntax = kit("swift", QUERY)
    captures = syntax.capture(syntax.parse(data))
    imports = frozenset(text(node) for node in captures.get("import", ()))
    types = captures.get("type", [])
    signals = set()
    if any(_base(t) == "XCTestCase" for t in types):
        signals.add(SIGNAL_XCTEST)
    if any(
        _attribute(d, "Test") or _attribute(d, "Suite") for d in (*types, *_functions(captures))
    ):
        signals.add(SIGNAL_TESTING)
    return Reading(imports, frozenset(signals), lambda _: outline_swift(captures))


def _functions(captures: Captures) -> list[Node]:
    return captures.get("function", [])


def outline_swift(captures: Captures) -> Outline:
    """Each type holding tests is a suite (nested types nest, an extension is a suite
    of the type it extends); ``@Suite``'s traits mark what it holds."""
    outline = Outline()
    types = captures.get("type", [])
    imports = {text(node) for node in captures.get("import", ())}
    test_classes = _test_classes(types, by_name="XCTest" in imports)
    owner_of = owners(types, _functions(captures))
    suites = _suites(outline, types, owner_of)
    for function in _functions(captures):
        owner = owner_of.get(function.id)
        if not _declared_in_type_or_file(function, owner):
            continue
        container = suites[owner.id] if owner is not None else outline
        _add_function(container, function, owner is not None and owner.id in test_classes)
    outline.drop_empty_suites()
    return outline


def _suites(outline: Outline, types: list[Node], owner_of: dict[int, Node]) -> dict[int, Outline]:
    """Each type's suite by the type's id, nested in its owner's."""
    suites: dict[int, Outline] = {}
    for declaration in types:
        owner = owner_of.get(declaration.id)
        container = suites[owner.id] if owner is not None else outline
        name = text(_name(declaration))
        attribute = _attribute(declaration, "Suite")
        marker = _trait_marker(attribute) if attribute is not None else None
        suites[declaration.id] = container.suite(name, declaration.start_point[0] + 1, marker)
    return suites


def _declared_in_type_or_file(function: Node, owner: Node | None) -> bool:
    """False for a function local to a function, a closure or a computed property."""
    if owner is not None:
        return function.parent is None or function.parent.parent == owner
    return function.parent is None or function.parent.type == "source_file"


def _add_function(container: Outline, function: Node, in_test_class: bool) -> None:
    """``function`` as a test of ``container`` if ``@Test`` or an XCTest method says so."""
    name = text(_child(function, "simple_identifier")).strip("`")
    line = function.start_point[0] + 1
    attribute = _attribute(function, "Test")
    if attribute is not None:
        status = _trait_marker(attribute) or _body_marker(function, _known_issue)
        container.test(name, line, status)
    elif in_test_class and _is_xctest_method(function):
        container.test(name, line, _body_marker(function, _skip))


def _test_classes(types: list[Node], by_name: bool) -> set[int]:
    """The ids of the XCTestCase subclasses and their extensions in the file: a class
    inheriting ``XCTestCase``, a ``…TestCase`` base, or such a class of the file; with
    ``by_name`` (the file imports XCTest), an extension of a ``…Tests`` type too (in a
    Swift Testing file it is a suite whose tests say ``@Test``)."""
    # base name -> the classes inheriting it: each class is looked at once, in any
    # order of the file (a chain written backwards took a pass per link)
    subclasses: dict[str, list[Node]] = {}
    for cls in types:
        if _kind(cls) == "class":
            subclasses.setdefault(_base(cls), []).append(cls)
    roots = [n for base, nodes in subclasses.items() if _is_test_base(base) for n in nodes]
    known: set[str] = set()
    found: set[int] = set()
    while roots:
        cls = roots.pop()
        if cls.id in found:
            continue
        found.add(cls.id)
        name = text(_name(cls))
        if name not in known:
            known.add(name)
            roots.extend(subclasses.get(name, ()))
    for declaration in types:
        if _kind(declaration) == "extension":
            extended = text(_name(declaration)).rsplit(".", 1)[-1]
            if extended in known or (by_name and extended.endswith(_EXTENDED_SUFFIXES)):
                found.add(declaration.id)
    return found


def _is_test_base(base: str) -> bool:
    return base == "XCTestCase" or base.endswith(_BASE_SUFFIXES)


def _is_xctest_method(function: Node) -> bool:
    """``test…`` with no parameter, no result, and visible to XCTest as an instance
    method."""
    name = text(_child(function, "simple_identifier"))
    if not name.startswith("test") or _child(function, "parameter") is not None:
        return False
    # ``-> T`` is a result; ``class func`` keeps its ``class`` outside the modifiers
    if any(child.type in ("->", "class") for child in function.children):
        return False
    return not _modifiers(function) & _NOT_RUN


def _body_marker(function: Node, marks: _Marks) -> TestStatus | None:
    """The status a top-level statement of the body gives (inside an ``if`` or a
    closure it is conditional: the test stays active)."""
    body = _child(function, "function_body")
    statements = _child(body, "statements") if body is not None else None
    for statement in statements.named_children if statements is not None else ():
        status = marks(statement)
        if status is not None:
            return status
    return None


def _skip(statement: Node) -> TestStatus | None:
    """``throw XCTSkip(…)``, ``try XCTSkipIf(…)``, ``try XCTSkipUnless(…)``."""
    if statement.type == "control_transfer_statement":
        if _child(statement, "throw_keyword") is not None and _callee(statement) == "XCTSkip":
            return TestStatus.SKIPPED
    elif statement.type == "try_expression" and _callee(statement) in _SKIPS:
        return TestStatus.SKIPPED
    return None


def _known_issue(statement: Node) -> TestStatus | None:
    """``withKnownIssue { … }``, also under ``try``/``await``: expected to fail."""
    return TestStatus.XFAIL if _callee(statement) == "withKnownIssue" else None


def _callee(node: Node) -> str:
    """The function a statement calls, through ``try``/``await``/``throw``."""
    while node.type in ("try_expression", "await_expression", "control_transfer_statement"):
        inner = [c for c in node.named_children if c.type not in ("try_operator", "throw_keyword")]
        if not inner:
            return ""
        node = inner[-1]
    if node.type != "call_expression" or not node.named_children:
        return ""
    return text(node.named_children[0]).rsplit(".", 1)[-1]


def _trait_marker(attribute: Node) -> TestStatus | None:
    """Skipped for a ``.disabled(…)`` or ``.enabled(if:)`` trait (a condition counts
    as skipped, ADR 0005)."""
    for argument in attribute.named_children:
        if argument.type == "call_expression" and argument.named_children:
            callee = text(argument.named_children[0]).rsplit(".", 1)[-1]
            if callee in _SKIPPING_TRAITS:
                return TestStatus.SKIPPED
    return None


def _attribute(declaration: Node, name: str) -> Node | None:
    """The declaration's ``@name`` (or ``@Testing.name``) attribute."""
    modifiers = _child(declaration, "modifiers")
    for attribute in modifiers.named_children if modifiers is not None else ():
        if attribute.type != "attribute":
            continue
        user_type = _child(attribute, "user_type")
        if user_type is not None and text(user_type) in (name, "Testing." + name):
            return attribute
    return None


def _base(declaration: Node) -> str:
    """The simple name of the first type a class inherits from ("" if none)."""
    specifier = _child(declaration, "inheritance_specifier")
    return text(specifier).rsplit(".", 1)[-1].strip() if specifier is not None else ""


def _kind(declaration: Node) -> str:
    """``class``, ``struct``, ``enum``, ``actor``, ``extension`` or ``protocol``."""
    return next((c.type for c in declaration.children if c.type in _KINDS), "")


def _name(declaration: Node) -> Node | None:
    return _child(declaration, "type_identifier") or _child(declaration, "user_type")


def _modifiers(node: Node) -> set[str]:
    modifiers = _child(node, "modifiers")
    if modifiers is None:
        return set()
    return {text(c) for c in modifiers.named_children if c.type != "attribute"}


def _child(node: Node, kind: str) -> Node | None:
    return next((c for c in node.named_children if c.type == kind), None)

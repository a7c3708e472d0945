"""Kotlin files, read with tree-sitter: JUnit 4/5, ``kotlin.test`` and TestNG annotated
functions in (nested) classes, by the Java reader's rules; kotest specs by
:mod:`.kotest_specs`."""

from __future__ import annotations

from tree_sitter import Node

from .frameworks.definition import Reading
from .java import by_class, is_test, marker
from .kotest_specs import FACTORIES, read_spec, spec_body
from .outline import Outline
from .syntax import Captures, enclosing, kit, text

QUERY = f"""
(import (qualified_identifier) @import)
(class_declaration) @class
(object_declaration) @class
(function_declaration) @function
((call_expression (identifier) @name (annotated_lambda)) @factory
  (#any-of? @name {" ".join(f'"{name}"' for name in sorted(FACTORIES))}))
"""
_CLASSES = frozenset({"class_declaration", "object_declaration"})
_DECLARATIONS = frozenset({"property_declaration", "function_declaration"})
# Visibilities that keep a function from being a test by its TestNG class's ``@Test``
# (``internal`` is public to the JVM).
_NOT_PUBLIC = frozenset({"private", "protected"})


def read(path: str, data: bytes, language: str) -> Reading:
    syntax = kit("kotlin", QUERY)
    captures = syntax.capture(syntax.parse(data))
    imports = frozenset(text(node) for node in captures.get("import", ()))
    return Reading(imports, frozenset(), lambda _: outline_kotlin(captures))


def outline_kotlin(captures: Captures) -> Outline:
    """Each class with tests is a suite (nested and inner classes nest).

    A class extending a kotest spec style is read as that spec (its DSL, or its
    annotated functions for ``AnnotationSpec``); an abstract one is not run. Elsewhere,
    functions are tests by the Java reader's annotations (``@Test``,
    ``@ParameterizedTest`` once, ``@Disabled*``/``@Ignore`` skipped, TestNG's
    class-level ``@Test`` and ``enabled = false``).
    """
    outline = Outline()
    classes = captures.get("class", [])
    suites: dict[int, Outline] = {}
    for cls in classes:
        owner = enclosing(cls, _CLASSES)
        container = suites[owner.id] if owner is not None else outline
        name = text(_child(cls, "identifier"))
        status = marker(annotations_of(cls), of_class=True)
        suite = container.suite(name, cls.start_point[0] + 1, status)
        suites[cls.id] = suite
        body = spec_body(cls)
        if body is not None and "abstract" not in _modifiers(cls):
            read_spec(body, suite)
    for factory in captures.get("factory", ()):
        _read_factory(factory, suites, outline)
    for function in captures.get("function", ()):
        owner = enclosing(function, _CLASSES)
        if owner is None or function.parent is None or function.parent.parent != owner:
            continue  # top level, or local to a function or an object expression
        found = annotations_of(function)
        public = not _modifiers(function) & _NOT_PUBLIC and _returns_unit(function)
        if is_test(found) or (public and by_class(annotations_of(owner), found)):
            name = text(_child(function, "identifier")).strip("`")
            suites[owner.id].test(name, function.start_point[0] + 1, marker(found))
    outline.drop_empty_suites()
    return outline


def _read_factory(call: Node, suites: dict[int, Outline], root: Outline) -> None:
    """A kotest test factory's tests, in a suite named after the property or function
    that holds it (``val shared = funSpec { }``)."""
    declaration = enclosing(call, _DECLARATIONS)
    if declaration is None:
        name, line = text(call.named_children[0]), call.start_point[0] + 1
    else:
        named = _child(declaration, "variable_declaration") or declaration
        name, line = text(_child(named, "identifier")), declaration.start_point[0] + 1
    owner = enclosing(call, _CLASSES)
    container = suites[owner.id] if owner is not None else root
    lambda_ = call.named_children[-1].named_children[-1]
    read_spec([lambda_], container.suite(name, line))


def annotations_of(node: Node) -> dict[str, str]:
    """The annotations on a declaration: simple name -> its arguments' text."""
    modifiers = _child(node, "modifiers")
    found = {}
    for annotation in modifiers.named_children if modifiers is not None else ():
        if annotation.type != "annotation":
            continue
        target = _child(annotation, "constructor_invocation") or annotation
        user_type = _child(target, "user_type")
        if user_type is not None and user_type.named_children:
            arguments = _child(target, "value_arguments")
            found[text(user_type.named_children[-1])] = text(arguments)
    return found


def _returns_unit(function: Node) -> bool:
    """Whether ``function`` declares no result type, or ``Unit``: TestNG leaves out a
    method that returns a value."""
    after = False
    for child in function.named_children:
        if child.type == "function_value_parameters":
            after = True
        elif after and child.type not in ("function_body", "type_constraints"):
            return text(child) == "Unit"
    return True


def _modifiers(node: Node) -> set[str]:
    modifiers = _child(node, "modifiers")
    if modifiers is None:
        return set()
    return {text(c) for c in modifiers.named_children if c.type != "annotation"}


def _child(node: Node, kind: str) -> Node | None:
    return next((c for c in node.named_children if c.type == kind), None)

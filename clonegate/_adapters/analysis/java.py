"""JUnit 4 and 5 files, read with tree-sitter: annotated test methods in (nested) classes."""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading
from .outline import Outline
from .syntax import Captures, innermost, kit, text

TEST_ANNOTATIONS = frozenset(
    {"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"}
)
SKIP_ANNOTATIONS = frozenset({"Disabled", "Ignore"})
# TestNG's, which no JUnit runs; any other method annotation named *Test is taken as a
# composed annotation of JUnit 5 (``@MultiLocaleTest`` = ``@ParameterizedTest`` + a
# source, declared in another file of the repository, which this file cannot show).
NOT_TEST_ANNOTATIONS = frozenset({"BeforeTest", "AfterTest"})

QUERY = """
(import_declaration) @import
(class_declaration) @class
(method_declaration) @method
"""


def is_test_source(path: str) -> bool:
    """A test source by Maven/Gradle conventions: not under ``src/main``, and named
    ``*Test``/``*Tests``/``Test*`` or under a ``test``/``tests`` directory."""
    parts = path.split("/")
    if "/".join(parts[:2]) == "src/main" or "/src/main/" in f"/{path}":
        return False
    stem = parts[-1].removesuffix(".java")
    in_test_tree = "test" in parts[:-1] or "tests" in parts[:-1]
    return stem.endswith(("Test", "Tests")) or stem.startswith("Test") or in_test_tree


def read(path: str, data: bytes, language: str) -> Reading:
    syntax = kit("java", QUERY)
    captures = syntax.capture(syntax.parse(data))
    return Reading(frozenset(java_imports(captures)), frozenset(), lambda _: outline_java(captures))


def java_imports(captures: Captures) -> set[str]:
    """Imported names, e.g. ``org.junit.jupiter.api.Test`` or ``org.junit.Assert.*``."""
    found = set()
    for node in captures.get("import", ()):
        words = text(node).removeprefix("import").removesuffix(";").split()
        if words:
            found.add(words[-1])
    return found


def outline_java(captures: Captures) -> Outline:
    """Each class with tests is a suite (inner classes nest); each test method a test.

    Tests: methods annotated ``@Test``, ``@ParameterizedTest`` (once, whatever its
    sources), ``@RepeatedTest``, ``@TestFactory``, ``@TestTemplate``, a composed
    annotation named ``*Test`` (``@MultiLocaleTest``); in a JUnit 3
    ``TestCase`` subclass, ``public void test*()`` methods. ``@Disabled`` and
    ``@Ignore`` on a method or a class mark it skipped.
    """
    outline = Outline()
    suites: dict[int, Outline] = {}
    for cls in captures.get("class", ()):
        container = _enclosing(cls, captures["class"], suites, outline)
        marker = TestStatus.SKIPPED if _annotations(cls) & SKIP_ANNOTATIONS else None
        name = text(cls.child_by_field_name("name"))
        suites[cls.id] = container.suite(name, cls.start_point[0] + 1, marker)
    for method in captures.get("method", ()):
        owner = innermost(method, captures.get("class", []))
        if owner is None:
            continue
        annotations = _annotations(method)
        name = text(method.child_by_field_name("name"))
        junit3 = name.startswith("test") and "TestCase" in text(
            owner.child_by_field_name("superclass")
        )
        if _is_test(annotations) or junit3:
            marker = TestStatus.SKIPPED if annotations & SKIP_ANNOTATIONS else None
            suites[owner.id].test(name, method.start_point[0] + 1, marker)
    outline.drop_empty_suites()
    return outline


def _is_test(annotations: set[str]) -> bool:
    return bool(annotations & TEST_ANNOTATIONS) or any(
        a.endswith("Test") and a not in NOT_TEST_ANNOTATIONS for a in annotations
    )


def _annotations(node: Node) -> set[str]:
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    if modifiers is None:
        return set()
    names = set()
    for child in modifiers.named_children:
        if child.type in ("marker_annotation", "annotation"):
            names.add(text(child.child_by_field_name("name")).split(".")[-1])
    return names


def _enclosing(
    cls: Node, classes: list[Node], suites: dict[int, Outline], root: Outline
) -> Outline:
    owner = innermost(cls, classes)
    return suites[owner.id] if owner is not None else root

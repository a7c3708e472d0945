"""JUnit 4 and 5 and TestNG files, read with tree-sitter: annotated test methods in
(nested) classes. The annotation rules are shared with the Kotlin reader."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading
from .outline import Outline
from .syntax import Captures, kit, owners, text

TEST_ANNOTATIONS = frozenset(
    {"Test", "ParameterizedTest", "RepeatedTest", "TestFactory", "TestTemplate"}
)
# kotest's ``@Ignored`` on a spec class too.
SKIP_ANNOTATIONS = frozenset({"Disabled", "Ignore", "Ignored"})
# JUnit 5's conditions (``@DisabledOnOs``, ``@DisabledIf``...): conditional skips count
# as skipped (ADR 0005).
SKIP_PREFIX = "Disabled"
# TestNG's methods that a class-level ``@Test`` does not make tests.
CONFIG_ANNOTATIONS = frozenset(
    f"{when}{what}"
    for when in ("Before", "After")
    for what in ("Method", "Class", "Test", "Suite", "Groups")
) | {"DataProvider", "Factory"}
_DISABLED = re.compile(r"\benabled\s*=\s*false\b")
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
    """A test source by Maven/Gradle conventions: not under ``src/main`` (nor a Kotlin
    Multiplatform ``src/*Main``), and named ``*Test``/``*Tests``/``Test*`` or under a
    ``test``/``tests`` directory or a Gradle test source set (``src/jvmTest``)."""
    parts = path.split("/")
    sets = [parts[i + 1] for i in range(len(parts) - 2) if parts[i] == "src"]
    if any(s == "main" or s.endswith("Main") for s in sets):
        return False
    stem = posixpath.splitext(parts[-1])[0]
    in_test_tree = "test" in parts[:-1] or "tests" in parts[:-1]
    test_set = any(s.endswith("Test") for s in sets)
    return stem.endswith(("Test", "Tests")) or stem.startswith("Test") or in_test_tree or test_set


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
    ``TestCase`` subclass, ``public void test*()`` methods; in a class annotated
    TestNG ``@Test``, its public methods. ``@Disabled*`` and ``@Ignore`` on a method or
    a class mark it skipped, and so does ``@Test(enabled = false)`` on a method.
    """
    outline = Outline()
    suites: dict[int, Outline] = {}
    classes, methods = captures.get("class", []), captures.get("method", [])
    owner_of = owners(classes, methods)  # a walk up each one's ancestors cost depth²
    for cls in classes:
        owner = owner_of.get(cls.id)
        container = suites[owner.id] if owner is not None else outline
        name = text(cls.child_by_field_name("name"))
        line = cls.start_point[0] + 1
        suites[cls.id] = container.suite(name, line, marker(_annotations(cls), of_class=True))
    for method in methods:
        owner = owner_of.get(method.id)
        if owner is None:
            continue
        annotations = _annotations(method)
        name = text(method.child_by_field_name("name"))
        junit3 = name.startswith("test") and "TestCase" in text(
            owner.child_by_field_name("superclass")
        )
        # TestNG leaves out methods returning a value (static ones it runs).
        void = text(method.child_by_field_name("type")) == "void"
        public = void and "public" in _modifiers(method)
        if (
            is_test(annotations)
            or junit3
            or (public and by_class(_annotations(owner), annotations))
        ):
            suites[owner.id].test(name, method.start_point[0] + 1, marker(annotations))
    outline.drop_empty_suites()
    return outline


def is_test(annotations: Mapping[str, str]) -> bool:
    """Whether a method with these annotations (name: arguments) is a test."""
    return bool(annotations.keys() & TEST_ANNOTATIONS) or any(
        a.endswith("Test") and a not in NOT_TEST_ANNOTATIONS for a in annotations
    )


def by_class(owner: Mapping[str, str], annotations: Mapping[str, str]) -> bool:
    """Whether a public method is a test by its class's TestNG ``@Test`` alone."""
    return "Test" in owner and not annotations.keys() & CONFIG_ANNOTATIONS


def marker(annotations: Mapping[str, str], *, of_class: bool = False) -> TestStatus | None:
    """Skipped for ``@Disabled*``, ``@Ignore`` and TestNG's ``@Test(enabled = false)`` on
    a method. On a class, TestNG's ``enabled = false`` does nothing: each method's own
    ``@Test`` overrides it (enabled by default), and TestNG 6.9.12 runs the public
    methods it makes tests too (TestNG issues #151, #2603)."""
    skipped = any(a in SKIP_ANNOTATIONS or a.startswith(SKIP_PREFIX) for a in annotations)
    if skipped or (not of_class and _DISABLED.search(annotations.get("Test", ""))):
        return TestStatus.SKIPPED
    return None


def _annotations(node: Node) -> dict[str, str]:
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    if modifiers is None:
        return {}
    names = {}
    for child in modifiers.named_children:
        if child.type in ("marker_annotation", "annotation"):
            name = text(child.child_by_field_name("name")).split(".")[-1]
            names[name] = text(child.child_by_field_name("arguments"))
    return names


def _modifiers(node: Node) -> set[str]:
    modifiers = next((c for c in node.children if c.type == "modifiers"), None)
    return {c.type for c in modifiers.children} if modifiers is not None else set()

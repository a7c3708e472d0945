"""pytest and unittest files, read with the standard library's ``ast``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from ..._domain.inventory import TestStatus
from .outline import Outline

SKIP_MARKERS = frozenset({"skip", "skipif", "skipIf", "skipUnless"})
XFAIL_MARKERS = frozenset({"xfail", "expectedFailure"})
TEST_MODULES = frozenset({"pytest", "unittest", "mark"})


def statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement, at any depth, without visiting expressions (most of a tree's nodes)."""
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if children:
                for child in reversed(children):
                    # except handlers and match cases hold statements in their own body
                    is_statement = isinstance(child, ast.stmt)
                    stack.extend([child] if is_statement else reversed(child.body))


@dataclass(frozen=True, slots=True)
class PythonFacts:
    """What one walk over a module's statements finds: the top-level modules it imports
    (``import a.b`` and ``from a.b import c`` give ``a``), whether it defines a
    ``TestCase`` subclass, and the names it imports from pytest or unittest."""

    imports: frozenset[str]
    has_testcase: bool
    marker_names: frozenset[str]


def facts_of(tree: ast.Module) -> PythonFacts:
    imports: set[str] = set()
    names: set[str] = set()
    testcase = False
    for node in statements(tree):
        if isinstance(node, ast.Import):
            imports.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            imports.add(top)
            if top in ("pytest", "unittest"):
                names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.ClassDef) and not testcase:
            testcase = _is_testcase(node)
    return PythonFacts(frozenset(imports), testcase, frozenset(names))


def outline_python(tree: ast.Module, facts: PythonFacts) -> Outline:
    """Suites and tests as pytest collects them (unittest classes included).

    Module-level ``test*`` functions are tests; ``Test*`` classes without ``__init__``
    and ``unittest.TestCase`` subclasses are suites, nested classes nested suites, and
    their ``test*`` methods tests. Fixtures are not tests. Markers: ADR 0005.
    """
    markers = _Markers(facts.marker_names)
    markers.bind(tree.body)
    root = Outline()
    root.marker = _pytestmark(tree.body, markers)
    _collect(tree.body, root, markers)
    return root


class _Markers:
    """What a decorator name can mean in this file: names imported from pytest or
    unittest (``from pytest import mark``), and marks bound to a name at module level
    (``needs_db = pytest.mark.skipif(...)``, then ``@needs_db``)."""

    def __init__(self, imported: frozenset[str]) -> None:
        self.imported = imported
        self.bound: dict[str, TestStatus | None] = {}

    def bind(self, body: list[ast.stmt]) -> None:
        for node in body:
            if (
                isinstance(node, ast.Assign)
                and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and node.targets[0].id != "pytestmark"
                and _dotted(node.value)
            ):
                self.bound[node.targets[0].id] = _marker([node.value], self)


def _collect(body: list[ast.stmt], into: Outline, markers: _Markers) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if node.name.startswith("test") and not _is_fixture(node):
                into.test(node.name, node.lineno, _marker(node.decorator_list, markers))
        elif isinstance(node, ast.ClassDef) and _is_test_class(node):
            marker = _marker(node.decorator_list, markers) or _pytestmark(node.body, markers)
            suite = into.suite(node.name, node.lineno, marker)
            _collect(node.body, suite, markers)


def _is_test_class(node: ast.ClassDef) -> bool:
    if _is_testcase(node):
        return True
    has_init = any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body)
    return node.name.startswith("Test") and not has_init


def _is_testcase(node: ast.ClassDef) -> bool:
    return any(_dotted(base).endswith("TestCase") for base in node.bases)


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_dotted(d).split(".")[-1] == "fixture" for d in node.decorator_list)


def _marker(decorators: list[ast.expr], markers: _Markers) -> TestStatus | None:
    """The status the decorators give: skip wins over anything else, then xfail."""
    statuses = {_status_of(decorator, markers) for decorator in decorators}
    for status in (TestStatus.SKIPPED, TestStatus.XFAIL):
        if status in statuses:
            return status
    return None


def _status_of(decorator: ast.expr, markers: _Markers) -> TestStatus | None:
    parts = _dotted(decorator).split(".")
    if len(parts) == 1 and parts[0] in markers.bound:
        return markers.bound[parts[0]]  # needs_db = pytest.mark.skipif(...); @needs_db
    if len(parts) == 1 and parts[0] not in markers.imported:
        return None  # a bare name that did not come from pytest or unittest
    if len(parts) > 1 and parts[0] not in TEST_MODULES:
        return None
    if parts[-1] in SKIP_MARKERS:
        return TestStatus.SKIPPED
    return TestStatus.XFAIL if parts[-1] in XFAIL_MARKERS else None


def _pytestmark(body: list[ast.stmt], markers: _Markers) -> TestStatus | None:
    """``pytestmark = pytest.mark.skip`` (or a list of marks) at module or class level."""
    for node in body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets
        ):
            value = node.value
            marks = value.elts if isinstance(value, ast.List | ast.Tuple) else [value]
            return _marker(list(marks), markers)
    return None


def _dotted(node: ast.expr) -> str:
    """``pytest.mark.skip(reason=...)`` -> ``pytest.mark.skip``; anything else -> ``""``."""
    if isinstance(node, ast.Call):
        node = node.func
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return ""

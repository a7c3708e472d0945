"""pytest and unittest files, read with the standard library's ``ast``."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading, Settings
from .outline import Outline

SKIP_MARKERS = frozenset({"skip", "skipif", "skipIf", "skipUnless"})
# skipIfNonUnix, skip_if_no_network, skipUnlessDBFeature; not skipper or skipped.
_NAMED_SKIP = re.compile(r"skip(?:[A-Z_]\w*)?")
XFAIL_MARKERS = frozenset({"xfail", "expectedFailure"})
TEST_MODULES = frozenset({"pytest", "unittest", "mark"})


# The statements that hold statements, and the fields that hold them; an except
# handler's and a match case's statements are in their own ``body``. Only these are
# looked into: most statements are simple, and asking each for five fields that it
# does not have took most of a module's walk.
_NESTED: dict[type[ast.stmt], tuple[str, ...]] = {
    ast.FunctionDef: ("body",),
    ast.AsyncFunctionDef: ("body",),
    ast.ClassDef: ("body",),
    ast.If: ("body", "orelse"),
    ast.For: ("body", "orelse"),
    ast.AsyncFor: ("body", "orelse"),
    ast.While: ("body", "orelse"),
    ast.With: ("body",),
    ast.AsyncWith: ("body",),
    ast.Try: ("body", "handlers", "orelse", "finalbody"),
    ast.TryStar: ("body", "handlers", "orelse", "finalbody"),
    ast.Match: ("cases",),
}


@dataclass(frozen=True, slots=True)
class PythonFacts:
    """What one walk over a module's statements finds: the top-level modules it imports
    (``import a.b`` and ``from a.b import c`` give ``a``), whether it defines a
    ``TestCase`` subclass, and the names it imports from pytest or unittest."""

    imports: frozenset[str]
    has_testcase: bool
    marker_names: frozenset[str]


def facts_of(tree: ast.Module) -> PythonFacts:
    """The facts of every statement at any depth, without visiting expressions (most
    of a tree's nodes). In no particular order: the facts are sets and a flag.
    Iterative: a hostile file nests thousands of blocks."""
    imports: set[str] = set()
    names: set[str] = set()
    testcase = False
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            imports.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            _imported_from(node, imports, names)
        else:
            if isinstance(node, ast.ClassDef) and not testcase:
                testcase = _is_testcase(node)
            for field in _NESTED.get(type(node), ()):
                for child in getattr(node, field):
                    if isinstance(child, ast.stmt):
                        stack.append(child)
                    else:  # an except handler or a match case
                        stack.extend(child.body)
    return PythonFacts(frozenset(imports), testcase, frozenset(names))


def _imported_from(node: ast.ImportFrom, imports: set[str], names: set[str]) -> None:
    """``from a.b import c`` imports ``a``; the names it takes from pytest or unittest."""
    if node.module and node.level == 0:
        top = node.module.split(".")[0]
        imports.add(top)
        if top in ("pytest", "unittest"):
            names.update(alias.asname or alias.name for alias in node.names)


_PARSER_OUT_OF_MEMORY = (
    "Python's parser ran out of memory: nested too deeply, or past the memory cap"
)


def read(path: str, data: bytes, language: str) -> Reading:
    """The module's imports, ``testcase`` if it defines a ``TestCase`` subclass, and its
    outline under pytest's naming options."""
    try:
        tree = ast.parse(data, filename=path)
    except MemoryError:
        # Python's parser says MemoryError both when its own stack overflows (``----…1``,
        # deep right-nested expressions) and when the worker's memory cap stops it (a
        # big list): nothing tells them apart, so it stays a MemoryError, which the scan
        # never caches (a larger cap may parse the file).
        raise MemoryError(_PARSER_OUT_OF_MEMORY) from None
    facts = facts_of(tree)
    signals = frozenset({"testcase"}) if facts.has_testcase else frozenset()
    return Reading(facts.imports, signals, lambda settings: outline_python(tree, facts, settings))


# pytest's own naming defaults (python_classes, python_functions).
DEFAULT_NAMING = Settings(classes=("Test",), functions=("test",))


def outline_python(
    tree: ast.Module, facts: PythonFacts, naming: Settings = DEFAULT_NAMING
) -> Outline:
    """Suites and tests as pytest collects them (unittest classes included).

    Module-level functions named by ``python_functions`` (``test*``) are tests;
    classes named by ``python_classes`` (``Test*``) without ``__init__``, and
    ``unittest.TestCase`` subclasses (also through a base class of the same module),
    are suites, nested classes nested suites; their methods named by
    ``python_functions`` (``test*`` for a ``TestCase``, as unittest's loader does) are
    tests, including those inherited from classes of the same module (a mixin's test
    counts in every collected class that inherits it, as pytest runs it there, and not
    in the mixin itself unless it is collected too). Fixtures are not tests. Markers:
    ADR 0005.
    """
    markers = _Markers(facts.marker_names)
    markers.bind(tree.body)
    root = Outline()
    root.marker = _pytestmark(tree.body, markers)
    body = _definitions(tree.body)
    classes = {n.name: n for n in body if isinstance(n, ast.ClassDef)}
    _collect(body, root, markers, _Naming(naming, classes))
    return root


class _Naming:
    """pytest's naming rules (a prefix, or a glob when the option has one) and the
    module's own classes, for base classes given by name."""

    def __init__(self, settings: Settings, classes: dict[str, ast.ClassDef]) -> None:
        self.classes = settings.classes or DEFAULT_NAMING.classes
        self.functions = settings.functions or DEFAULT_NAMING.functions
        self.module_classes = classes

    def is_test_class(self, node: ast.ClassDef) -> bool:
        if self.inherits(node, _is_testcase):
            return True
        if not node.name.startswith("_") and self.inherits(node, _is_plugin_based):
            return True  # as sqlalchemy's plugin: public subclasses only
        has_init = any(isinstance(n, ast.FunctionDef) and n.name == "__init__" for n in node.body)
        return _named(node.name, self.classes) and not has_init

    def is_testcase(self, node: ast.ClassDef) -> bool:
        """Whether its methods are named as a ``TestCase``'s (``test*``)."""
        return self.inherits(node, lambda c: _is_testcase(c) or _is_plugin_based(c))

    def inherits(
        self,
        node: ast.ClassDef,
        kind: Callable[[ast.ClassDef], bool],
        seen: frozenset[str] = frozenset(),
    ) -> bool:
        """Whether ``node`` or a base of it in this module is of ``kind``."""
        if kind(node):
            return True
        return any(
            (base := self.module_classes.get(_dotted(b))) is not None
            and base.name not in seen
            and self.inherits(base, kind, seen | {node.name})
            for b in node.bases
        )

    def is_test_function(self, name: str, in_testcase: bool) -> bool:
        return name.startswith("test") if in_testcase else _named(name, self.functions)

    def body_of(self, node: ast.ClassDef, seen: frozenset[str] = frozenset()) -> list[ast.stmt]:
        """The class's statements, then those it inherits from the module's classes in
        method resolution order (left to right, depth first), each function name once,
        where Python would find it: as pytest lists a class's tests."""
        body = _definitions(node.body)
        names = {n.name for n in body if isinstance(n, _FUNCTIONS)}
        seen = seen | {node.name}
        for expression in node.bases:
            base = self.module_classes.get(_dotted(expression))
            if base is None or base.name in seen:
                continue
            for statement in self.body_of(base, seen):
                if isinstance(statement, _FUNCTIONS):
                    if statement.name in names:
                        continue
                    names.add(statement.name)
                body.append(statement)
        return body


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


# Blocks whose definitions the runner finds where the block runs them: every branch
# of an ``if``/``try`` and the body of a ``with``, at module and class level.
_BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.With, ast.AsyncWith)


def _definitions(body: list[ast.stmt]) -> list[ast.stmt]:
    """``body``'s statements with the blocks of its compound statements in their place,
    in source order: an ``if``'s body then its ``elif``/``else`` branches, a ``try``'s
    body, handlers, ``else`` and ``finally``, a ``with``'s body. Only one branch runs,
    but which one the source does not say: each counts, one test per place a test is
    written (ADR 0005). A name defined twice in one block is its last definition.

    Iterative: a hostile file nests thousands of ``if`` statements."""
    out: list[ast.stmt] = []
    stack = [iter(_last_definitions(body))]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
        elif isinstance(node, _BLOCKS):
            stack.extend(iter(_last_definitions(b)) for b in reversed(_blocks(node)))
        else:
            out.append(node)
    return out


def _blocks(node: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(node, ast.If):
        if _is_main_check(node.test):
            # A runner imports the module by its name: this body never runs then
            # (CPython's test_patma defines a benchmark class there).
            return [node.orelse]
        return [node.body, node.orelse]  # an elif is an If in orelse
    if isinstance(node, ast.Try | ast.TryStar):
        handlers = [h.body for h in node.handlers]
        return [node.body, *handlers, node.orelse, node.finalbody]
    assert isinstance(node, ast.With | ast.AsyncWith)
    return [node.body]


def _is_main_check(test: ast.expr) -> bool:
    """``__name__ == "__main__"`` (either way round)."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return False
    sides = {_constant_or_name(test.left), _constant_or_name(test.comparators[0])}
    return isinstance(test.ops[0], ast.Eq) and sides == {"name:__name__", "str:__main__"}


def _constant_or_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return f"name:{node.id}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return f"str:{node.value}"
    return ""


def _last_definitions(body: list[ast.stmt]) -> list[ast.stmt]:
    """One function per name: the last one, at the place of the first."""
    last = {n.name: n for n in body if isinstance(n, _FUNCTIONS)}
    out, placed = [], set()
    for node in body:
        if isinstance(node, _FUNCTIONS):
            if node.name in placed:
                continue
            placed.add(node.name)
            node = last[node.name]
        out.append(node)
    return out


def _named(name: str, options: tuple[str, ...]) -> bool:
    return any(
        name.startswith(option)
        or (any(c in option for c in "*?[") and fnmatch.fnmatchcase(name, option))
        for option in options
    )


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


def _collect(
    body: list[ast.stmt], into: Outline, markers: _Markers, naming: _Naming, testcase: bool = False
) -> None:
    for node in body:
        if isinstance(node, _FUNCTIONS):
            if naming.is_test_function(node.name, testcase) and not _is_fixture(node):
                into.test(node.name, node.lineno, _marker(node.decorator_list, markers))
        elif isinstance(node, ast.ClassDef) and naming.is_test_class(node):
            marker = _marker(node.decorator_list, markers) or _pytestmark(node.body, markers)
            suite = into.suite(node.name, node.lineno, marker)
            _collect(naming.body_of(node), suite, markers, naming, naming.is_testcase(node))


def _is_testcase(node: ast.ClassDef) -> bool:
    return any(_dotted(base).endswith("TestCase") for base in node.bases)


def _is_plugin_based(node: ast.ClassDef) -> bool:
    """A base class from another module named as a test base (``fixtures.TestBase``,
    ``fixtures.MappedTest``): a project plugin collects its subclasses, whatever their
    own names (sqlalchemy's ``pytest_pycollect_makeitem`` takes every public subclass
    of ``TestBase``). Its ``test*`` methods are tests, as in a ``TestCase``."""
    return any(
        "." in (name := _dotted(base)) and name.endswith(("TestBase", "Test", "Tests"))
        for base in node.bases
    )


def _is_fixture(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(_dotted(d).split(".")[-1] == "fixture" for d in node.decorator_list)


def _marker(decorators: list[ast.expr], markers: _Markers) -> TestStatus | None:
    """The status the decorators give: skip wins over anything else, then xfail."""
    if not decorators:  # most tests
        return None
    statuses = {_status_of(decorator, markers) for decorator in decorators}
    for status in (TestStatus.SKIPPED, TestStatus.XFAIL):
        if status in statuses:
            return status
    return None


def _status_of(decorator: ast.expr, markers: _Markers) -> TestStatus | None:
    parts = _dotted(decorator).split(".")
    if len(parts) == 1 and parts[0] in markers.bound:
        return markers.bound[parts[0]]  # needs_db = pytest.mark.skipif(...); @needs_db
    if _NAMED_SKIP.fullmatch(parts[-1]):
        # A skip decorator made in another module (``skipIfNonUnix = unittest.skipIf(…)``
        # in a test helper module, Django's ``skipUnlessDBFeature``): the file cannot
        # show what it is, its name does. Conditional, so skipped (ADR 0005).
        return TestStatus.SKIPPED
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

"""C# files, read with tree-sitter: xUnit, NUnit and MSTest attributed methods in
(nested, partial) classes (ADR 0005).

One outline serves the three frameworks: their test attributes do not overlap, but for
``[Theory]``, xUnit's and NUnit's both (the file's ``using`` and its other attributes
say whose it is).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading
from .frameworks.dotnet import MSTEST, NUNIT, XUNIT
from .outline import Outline
from .syntax import Captures, kit, owners, text

__all__ = ["read"]

# Runtime skips, as a top-level statement of a test (ADR 0005): NUnit's, MSTest's
# ``Assert.Inconclusive``, xUnit v3's ``Assert.Skip*`` and Xunit.SkippableFact's
# ``Skip.If``/``Skip.IfNot`` (conditional: counted as skipped).
_RUNTIME_SKIP = (
    r"^((Xunit|NUnit[.]Framework)[.])?"
    r"(Assert[.](Ignore|Inconclusive|Skip|SkipWhen|SkipUnless)|Skip[.](If|IfNot))$"
)
# Attributes and runtime skips found by the query: walking each declaration's
# children in Python took more time than parsing the file.
QUERY = f"""
(using_directive) @using
(class_declaration) @class
[(struct_declaration) (record_declaration) (interface_declaration)] @other_type
(method_declaration) @method
(attribute) @attribute
(method_declaration body: (block (expression_statement
  (invocation_expression function: (_) @skip (#match? @skip "{_RUNTIME_SKIP}")))))
"""
# NUnit's attributes that make a method a test (``[Theory]`` too, in an NUnit file).
_NUNIT_TESTS = frozenset({"Test", "TestCase", "TestCaseSource"})
_NUNIT_CLASS = frozenset({"TestFixture", "TestFixtureSource"})
# Attributes that skip a method or a class: NUnit's and MSTest's ``[Ignore]``, NUnit's
# ``[Explicit]`` (not run unless named).
_SKIPS = frozenset({"Ignore", "Explicit"})
_FALSE = frozenset({"null", "false"})

Attributes = dict[str, dict[str, str]]


# Preprocessor lines. tree-sitter-c-sharp 0.23.5 fails some files on them (``#if``
# and ``#endif`` around a field's attributes).
_DIRECTIVE = re.compile(
    rb"^[ \t]*#[ \t]*(?:if|elif|else|endif|region|endregion|nullable|pragma|define|undef)\b.*$",
    re.M,
)
# Interpolated verbatim strings, which it fails on too when one ends in a doubled
# quote (``$@"  ""{x}"": ""{y}"""``).
_INTERPOLATED_VERBATIM = re.compile(rb'(?<![\w"@$])(?:\$@|@\$)"((?:[^"]|"")*)"')


def _blanked(match: re.Match[bytes]) -> bytes:
    """The match with everything but its line breaks made spaces: the same bytes'
    lines and columns, no code."""
    return re.sub(rb"[^\n]", b" ", match.group(0))


def _string_blanked(match: re.Match[bytes]) -> bytes:
    start = match.start(1) - match.start(0)
    return match.group(0)[:start] + re.sub(rb"[^\n]", b" ", match.group(1)) + b'"'


def read(path: str, data: bytes, language: str) -> Reading:
    syntax = kit("csharp", QUERY)
    try:
        root: Node | None = syntax.parse(data)
    except SyntaxError:
        root = None  # parsed again below, once the failed tree (in the traceback) is freed
    if root is None:
        # Where the grammar fails, the same file with both branches of each #if kept
        # as plain code, and its interpolated verbatim strings emptied, in place (tests
        # keep their lines): a file whose branches do not make code together, or that
        # fails on something else, fails as before, a scan error.
        data = _DIRECTIVE.sub(_blanked, data)
        root = syntax.parse(_INTERPOLATED_VERBATIM.sub(_string_blanked, data))
    captures = syntax.capture(root)
    imports = frozenset(_using(node) for node in captures.get("using", ()))
    found = attributes(captures.get("attribute", ()))
    signals = _signals(imports, list(found.values()))
    return Reading(imports, signals, lambda _: outline_csharp(captures, found))


def _using(node: Node) -> str:
    """The namespace a ``using`` names: ``Xunit``, ``NUnit.Framework``."""
    names = [c for c in node.named_children if c.type in ("identifier", "qualified_name")]
    return text(names[-1]) if names else ""


def _signals(imports: frozenset[str], found: list[Attributes]) -> frozenset[str]:
    """The frameworks the attributes name; ``[Theory]`` is NUnit's in a file that uses
    NUnit (its ``using``, or its other attributes) and not xUnit, else xUnit's."""
    names = {name for attrs in found for name in attrs}
    nunit_only = bool(names & (_NUNIT_TESTS | _NUNIT_CLASS))
    theory_is_nunit = (nunit_only or "NUnit.Framework" in imports) and "Xunit" not in imports
    signals = set()
    if nunit_only or (theory_is_nunit and "Theory" in names):
        signals.add(NUNIT)
    if any(n.endswith("Fact") or (n.endswith("Theory") and not theory_is_nunit) for n in names):
        signals.add(XUNIT)
    if any(n.endswith(("TestMethod", "TestClass")) for n in names):
        signals.add(MSTEST)
    return frozenset(signals)


def outline_csharp(captures: Captures, found: dict[int, Attributes]) -> Outline:
    """Each class with tests is a suite (nested classes nest, the parts of a partial
    class are one suite); each test method a test, once whatever its data rows.

    Tests: ``[Fact]``, ``[Theory]`` and any attribute named ``*Fact``/``*Theory``
    (xUnit's extensions: ``[SkippableFact]``, ``[WpfFact]``); NUnit's ``[Test]``,
    ``[TestCase]``, ``[TestCaseSource]``; ``[TestMethod]``/``*TestMethod``
    (``[DataTestMethod]``) in a class marked ``[TestClass]`` (on any of its parts) or an
    abstract class (its tests run in its subclasses, counted once where written).
    Skipped: ``Skip = …`` on an xUnit attribute, ``Explicit = true`` (xUnit v3),
    ``[Ignore]`` and ``[Explicit]`` on the method or a class around it, a runtime skip
    as a top-level statement of the method.
    """
    outline = Outline()
    # skip call -> invocation -> expression statement -> block -> method
    skips = {_ancestor(call, 4).id for call in captures.get("skip", ())}
    classes, methods = captures.get("class", []), captures.get("method", [])
    # A class declared in a struct, a record or an interface holds no test of ours.
    owner_of = owners([*classes, *captures.get("other_type", [])], methods)
    suites, merged, abstract = _class_suites(outline, classes, owner_of, found)
    for cls_id, suite in suites.items():
        if merged[cls_id].keys() & _SKIPS:
            suite.marker = TestStatus.SKIPPED
    for method in methods:
        owner = owner_of.get(method.id)
        if owner is None or owner.id not in suites:
            continue
        own = found.get(method.id, {})
        in_class = merged[owner.id]
        if is_test(own, "TestClass" in in_class or id(in_class) in abstract):
            name = text(method.child_by_field_name("name"))
            marker = TestStatus.SKIPPED if method.id in skips or _skipped(own) else None
            suites[owner.id].test(name, method.start_point[0] + 1, marker)
    outline.drop_empty_suites()
    return outline


def _class_suites(
    outline: Outline, classes: list[Node], owner_of: dict[int, Node], found: dict[int, Attributes]
) -> tuple[dict[int, Outline], dict[int, Attributes], set[int]]:
    """``(suites, merged, abstract)``: each class's suite and its attributes over all its
    parts (the parts of a partial class share both), by the class's id; the ids of the
    merged attributes of the abstract classes."""
    suites: dict[int, Outline] = {}
    merged: dict[int, Attributes] = {}
    abstract: set[int] = set()
    by_name: dict[tuple[int, str], int] = {}  # (container, name) -> first part's id
    for cls in classes:
        owner = owner_of.get(cls.id)
        if owner is not None and owner.id not in suites:
            continue  # inside a struct, a record or an interface
        container = suites[owner.id] if owner is not None else outline
        name = text(cls.child_by_field_name("name"))
        own = found.get(cls.id, {})
        first = by_name.get((id(container), name))
        if first is not None and "partial" in _modifiers(cls):
            suites[cls.id] = suites[first]
            merged[first].update(own)
            merged[cls.id] = merged[first]
        else:
            by_name[id(container), name] = cls.id
            suites[cls.id] = container.suite(name, cls.start_point[0] + 1)
            merged[cls.id] = dict(own)
        if "abstract" in _modifiers(cls):
            abstract.add(id(merged[cls.id]))
    return suites, merged, abstract


def is_test(found: Attributes, in_test_class: bool) -> bool:
    """Whether a method with these attributes is a test (MSTest's only in a test class)."""
    return any(
        name.endswith(("Fact", "Theory"))
        or name in _NUNIT_TESTS
        or (name.endswith("TestMethod") and in_test_class)
        for name in found
    )


def _skipped(found: Attributes) -> bool:
    return bool(found.keys() & _SKIPS) or any(
        (name.endswith(("Fact", "Theory")) and arguments.get("Skip", "null") not in _FALSE)
        or arguments.get("Explicit", "false") not in _FALSE
        for name, arguments in found.items()
    )


def _ancestor(node: Node, levels: int) -> Node:
    for _ in range(levels):
        assert node.parent is not None  # the query's pattern holds these levels
        node = node.parent
    return node


def attributes(nodes: Iterable[Node]) -> dict[int, Attributes]:
    """The attributes of each declaration (by node id): simple name (without
    ``Attribute``) -> its named arguments (``Skip``: its expression's text)."""
    found: dict[int, Attributes] = {}
    for attribute in nodes:
        owner = attribute.parent.parent if attribute.parent is not None else None
        if owner is None:
            continue
        name = _simple(text(attribute.child_by_field_name("name")))
        arguments = found.setdefault(owner.id, {}).setdefault(name, {})
        source = attribute.text or b""
        if b"Skip" in source or b"Explicit" in source:  # the only arguments read
            arguments.update(_named_arguments(attribute))
    return found


def _simple(name: str) -> str:
    """``Xunit.FactAttribute`` -> ``Fact``; ``global::NUnit.Framework.Test`` -> ``Test``."""
    if name.isidentifier() and not name.endswith("Attribute"):
        return name  # most are: [Fact]
    last = name.rsplit(".", 1)[-1].rsplit(":", 1)[-1].strip()
    last = last.split("<", 1)[0]  # a generic attribute: [TestCaseSource<T>]
    return last.removesuffix("Attribute") or last


def _named_arguments(attribute: Node) -> dict[str, str]:
    arguments = next(
        (c for c in attribute.named_children if c.type == "attribute_argument_list"), None
    )
    named = {}
    for argument in arguments.named_children if arguments is not None else ():
        key = argument.child_by_field_name("name")
        if key is not None and argument.named_children:
            named[text(key)] = text(argument.named_children[-1])
    return named


def _modifiers(node: Node) -> set[str]:
    return {text(c) for c in node.children if c.type == "modifier"}

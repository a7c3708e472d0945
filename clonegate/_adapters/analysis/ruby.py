"""Ruby files, read with tree-sitter: RSpec example groups and examples, minitest
``Minitest::Test`` classes and spec-style ``describe`` blocks (ADR 0005).

One walk per file records the calls and classes; the outline is made under the
framework's interface (``rspec`` or ``minitest``, from its settings), so a file is
parsed once whichever framework runs it. The walk is iterative: a tree is at most
:data:`.syntax.MAX_DEPTH` deep, more than Python's recursion allows.
"""

from __future__ import annotations

from collections.abc import Iterator

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .frameworks.definition import Reading, Settings
from .outline import Outline, strongest
from .syntax import kit, text

QUERY = "(comment) @comment"  # the walk is by hand; the kit wants a query

# RSpec's group and example definers (RSpec::Core::ExampleGroup), with the status a
# prefix or the definer itself gives (``xit``, ``fdescribe``, ``pending "x" do``).
_RSPEC_GROUPS: dict[str, TestStatus | None] = {
    **dict.fromkeys(("describe", "context", "feature", "example_group"), None),
    **dict.fromkeys(("xdescribe", "xcontext", "xfeature"), TestStatus.SKIPPED),
    **dict.fromkeys(("fdescribe", "fcontext", "ffeature"), TestStatus.FOCUSED),
}
# Shared groups are outlined where they are written, once (ADR 0005); the
# ``it_behaves_like``/``include_examples`` that include them add nothing.
_RSPEC_SHARED = frozenset({"shared_examples", "shared_examples_for", "shared_context"})
_RSPEC_TESTS: dict[str, TestStatus | None] = {
    **dict.fromkeys(("it", "specify", "example", "scenario", "its"), None),
    **dict.fromkeys(("xit", "xspecify", "xexample", "xscenario", "skip"), TestStatus.SKIPPED),
    **dict.fromkeys(("fit", "fspecify", "fexample", "fscenario", "focus"), TestStatus.FOCUSED),
    "pending": TestStatus.XFAIL,
}
# Metadata keys (``skip: true``, ``:focus``) and the status each gives.
_METADATA = {"skip": TestStatus.SKIPPED, "focus": TestStatus.FOCUSED, "pending": TestStatus.XFAIL}
# A statement of a test's body that marks it at run time (ADR 0005: top level only).
_RUNTIME = {"skip": TestStatus.SKIPPED, "pending": TestStatus.XFAIL}
# Blocks run around or for each example, where ``skip``/``pending`` mark it at run time.
_HOOKS = frozenset(
    {"before", "after", "around", "prepend_before", "append_after"}
    | {"let", "let!", "subject", "subject!"}
)
_GROUP, _HOOK = "group", "hook"
_MINITEST_GROUPS = frozenset({"describe"})
_MINITEST_TESTS = frozenset({"it", "specify"})
# Superclasses whose subclasses minitest runs: ``Minitest::Test``, ``Test::Unit::TestCase``,
# Rails' ``ActiveSupport::TestCase`` and ``ActionDispatch::IntegrationTest``, a project's
# ``BaseTest``: a class whose superclass's name ends so.
_TEST_CLASS_SUFFIXES = ("Test", "TestCase", "Spec")


def read(path: str, data: bytes, language: str) -> Reading:
    syntax = kit("ruby", QUERY)
    root = syntax.parse(data)
    imports = frozenset(_requires(root))
    signals = frozenset(_signals(root))
    return Reading(imports, signals, lambda settings: outline_ruby(root, settings))


def outline_ruby(root: Node, settings: Settings) -> Outline:
    """The file's suites and tests under ``settings.interface`` (``rspec``, ``minitest``)."""
    outline = Outline()
    rspec = settings.interface == "rspec"
    # (node, its container, where it is written: ``_GROUP`` an RSpec group's body or a
    # minitest test class's, ``_HOOK`` a hook's block, "" elsewhere); carried down the
    # walk so that no node looks up its ancestors (a deep file would cost depth times
    # its calls).
    stack: list[tuple[Node, Outline, str]] = [
        (c, outline, "") for c in reversed(root.named_children)
    ]
    while stack:
        node, container, where = stack.pop()
        if node.type == "call" or _is_statement(node):
            container, children, where = _call_step(node, container, where, rspec)
        elif node.type in ("class", "module"):
            container, children, where = _class_step(node, container, rspec)
        elif node.type in ("method", "singleton_method"):
            if not rspec and where == _GROUP and node.type == "method":
                _test_method(node, container)
            continue  # a method's body defines no tests
        else:
            children = node.named_children
        stack.extend((c, container, where) for c in reversed(children))
    outline.drop_empty_suites()
    return outline


def _call_step(
    node: Node, container: Outline, where: str, rspec: bool
) -> tuple[Outline, list[Node], str]:
    """A call's step of :func:`outline_ruby`: the container, the nodes to walk and
    where they are written."""
    if rspec:
        found = _rspec_call(node, container, where == _GROUP)
    else:
        found = _minitest_call(node, container, where == _GROUP)
    if found is not None:
        return found[0], found[1], _GROUP
    # Its arguments, block and receiver; not its method's name (``obj.it``).
    method = node.child_by_field_name("method")
    children = [c for c in node.named_children if method is None or c != method]
    if rspec and method is not None and text(method) in _HOOKS:
        where = _HOOK
    return container, children, where


def _class_step(node: Node, container: Outline, rspec: bool) -> tuple[Outline, list[Node], str]:
    """A class's or a module's step of :func:`outline_ruby`: its suite and body."""
    name = text(node.child_by_field_name("name"))
    suite = container.suite(name, node.start_point[0] + 1)
    # A module of a minitest file holds tests its test classes include: they
    # count once, where written (i18n's ``module CacheFileTest``).
    test_module = node.type == "module" or _is_test_class(node)
    return suite, node.named_children, _GROUP if not rspec and test_module else ""


def _test_method(node: Node, container: Outline) -> None:
    """A minitest class's ``def test_…``: a test."""
    name = text(node.child_by_field_name("name"))
    if name.startswith("test_"):
        container.test(name, node.start_point[0] + 1, _runtime(node))


def _rspec_call(
    node: Node, container: Outline, in_group: bool
) -> tuple[Outline, list[Node]] | None:
    """The suite a group call opens and its body; a test call is added, with no body to
    walk; None for any other call (its arguments and block are walked). ``in_group``:
    the call is written in a group's body (loops included), not in a hook, where
    ``pending "later"`` without a block defines an example."""
    name, receiver, arguments, block = _parts(node)
    if receiver not in ("", "RSpec"):
        return None
    line = node.start_point[0] + 1
    if block is not None and (name in _RSPEC_GROUPS or name in _RSPEC_SHARED):
        marker = strongest((_RSPEC_GROUPS.get(name), _metadata(arguments)))
        return container.suite(_title(arguments), line, marker), block.named_children
    if name in _RSPEC_TESTS and receiver == "":
        return _rspec_test(name, arguments, block, container, in_group, line)
    return None


def _rspec_test(
    name: str,
    arguments: list[Node],
    block: Node | None,
    container: Outline,
    in_group: bool,
    line: int,
) -> tuple[Outline, list[Node]] | None:
    """As :func:`_rspec_call`, for a call of an example's method (``it``, ``its``…)."""
    if name in _RUNTIME and block is None and not (arguments and in_group):
        return None  # ``skip``/``pending`` in a hook: not a definition
    if name == "its" and not arguments:
        return None
    marker = strongest((_RSPEC_TESTS[name], _metadata(arguments), _runtime(block)))
    if block is None:
        marker = TestStatus.TODO  # RSpec: "Not yet implemented"
    # ``its(:size)``: the attribute is the name, not metadata.
    title = text(arguments[0]) if name == "its" else _title(arguments)
    container.test(title or f"example at line {line}", line, marker)
    return container, []


def _minitest_call(
    node: Node, container: Outline, in_group: bool
) -> tuple[Outline, list[Node]] | None:
    """As :func:`_rspec_call`, minitest's: ``it``/``specify``/``test`` define tests only
    in a ``describe`` or a test class (``in_group``), where minitest defines them."""
    name, receiver, arguments, block = _parts(node)
    if receiver not in ("", "Minitest", "Minitest::Spec"):
        return None
    line = node.start_point[0] + 1
    if block is not None and name in _MINITEST_GROUPS:
        return container.suite(_title(arguments), line), block.named_children
    if (
        in_group
        and receiver == ""
        and (name in _MINITEST_TESTS or (name == "test" and _title(arguments)))
    ):
        # minitest's ``it`` with no block is a test that skips "(no tests defined)";
        # Rails' ``test "name" do`` defines ``test_name``.
        marker = TestStatus.TODO if block is None else _runtime(block)
        container.test(_title(arguments) or "anonymous", line, marker)
        return container, []
    return None


def _is_statement(node: Node) -> bool:
    """A bare name as a statement (``skip``, ``it``): a call without arguments; the
    same name as an argument or a receiver is a variable's or a method's value."""
    parent = node.parent
    return (
        node.type == "identifier"
        and parent is not None
        and parent.type in ("body_statement", "block_body", "program", "then", "else")
    )


def _parts(node: Node) -> tuple[str, str, list[Node], Node | None]:
    """A call's method name, receiver text ("" for none), arguments and block."""
    if node.type == "identifier":
        return text(node), "", [], None
    receiver = node.child_by_field_name("receiver")
    argument_list = node.child_by_field_name("arguments")
    block = node.child_by_field_name("block")
    arguments = argument_list.named_children if argument_list is not None else []
    # ``::RSpec.describe`` is ``RSpec.describe``.
    owner = text(receiver).removeprefix("::")
    return text(node.child_by_field_name("method")), owner, arguments, block


def _title(arguments: list[Node]) -> str:
    """A group's or test's description: its first argument, a string's content."""
    if not arguments:
        return ""
    first = arguments[0]
    if first.type in ("pair", "simple_symbol", "hash"):
        return ""  # metadata only: ``it skip: true do``
    if first.type == "string":
        # Its content as written, escapes and ``#{…}`` included (ADR 0005: placeholders kept).
        return "".join(text(c) for c in first.named_children)
    return text(first)


def _metadata(arguments: list[Node]) -> TestStatus | None:
    """The status RSpec metadata gives: ``:skip``, ``skip: true`` or a reason string,
    ``focus: true``, ``pending: true``; ``skip: false`` gives none."""
    found: list[TestStatus | None] = []
    for argument in arguments:
        pairs = argument.named_children if argument.type == "hash" else [argument]
        for item in pairs:
            if item.type == "simple_symbol":
                key = text(item).removeprefix(":")
            elif item.type == "pair":
                key_node, value = item.child_by_field_name("key"), item.child_by_field_name("value")
                key = text(key_node).removeprefix(":").removesuffix(":").strip("\"'")
                if value is None or value.type in ("false", "nil"):
                    continue
            else:
                continue
            found.append(_METADATA.get(key))
    return strongest(found)  # skipped wins over focused, focused over xfail (ADR 0005)


def _runtime(node: Node | None) -> TestStatus | None:
    """The status a top-level ``skip``/``pending`` statement of a body gives; one inside
    an ``if`` or a block leaves the test active (ADR 0005)."""
    for statement in _statements(node):
        name, receiver, _, block = _parts(statement)
        if receiver == "" and block is None and name in _RUNTIME:
            return _RUNTIME[name]
    return None


def _statements(node: Node | None) -> Iterator[Node]:
    if node is None:
        return
    for child in node.named_children:
        if child.type in ("body_statement", "block_body"):
            yield from _statements(child)
        elif child.type in ("call", "identifier"):
            yield child


def _is_test_class(node: Node) -> bool:
    superclass = node.child_by_field_name("superclass")
    return superclass is not None and text(superclass).rstrip().endswith(_TEST_CLASS_SUFFIXES)


def _requires(root: Node) -> Iterator[str]:
    """What the file's top-level ``require``s load (``minitest/autorun``, ``spec_helper``)."""
    for node in root.named_children:
        name, receiver, arguments, _ = _parts(node) if node.type == "call" else ("", "", [], None)
        if receiver == "" and name in ("require", "require_relative") and arguments:
            title = _title(arguments)
            if title:
                yield title.removeprefix("./").removeprefix("../")


def _signals(root: Node) -> Iterator[str]:
    """``rspec`` for a top-level ``RSpec.describe``; ``minitest`` for a test class or a
    ``Minitest``-named superclass at the top or one module down."""
    for node in root.named_children:
        if node.type == "call" and text(node.child_by_field_name("receiver")) == "RSpec":
            yield "rspec"
        elif node.type == "class" and _is_test_class(node):
            yield "minitest"
        elif node.type == "module":
            body = node.child_by_field_name("body")
            for child in body.named_children if body is not None else ():
                if child.type == "class" and _is_test_class(child):
                    yield "minitest"

"""What node:test adds to the JavaScript reader (:mod:`.javascript`): the names a file
gives node:test's functions where it imports them, subtests, and the test context's
own skips (ADR 0005).

node:test has no globals, so these apply only to a file that imports ``node:test`` (or
``test``, its npm port). A test created while another runs is that test's subtest,
whether through the context (``t.test('b', fn)``, ``const test = t.test``) or a plain
``test()`` inside its function: the outer test is then a suite, as a Go test with
``t.Run`` is.
"""

from __future__ import annotations

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from .syntax import Captures, kit, string_value, text

MODULES = frozenset({"node:test", "test"})
# The content signal of a file that makes subtests through a test context it is given
# (fastify's test/helper.js: ``function payloadMethod(method, t) { const test = t.test``):
# it runs only inside a node:test test, and names node:test without importing it.
CONTEXT_SIGNAL = "t.test"
# The functions node:test exports that make tests and suites.
FUNCTIONS = frozenset({"test", "it", "describe", "suite"})
# A context method called among the first statements of a test's function.
CONTEXT_STATUS = {"skip": TestStatus.SKIPPED, "todo": TestStatus.TODO}


QUERY = """
(member_expression property: (property_identifier) @subtest (#eq? @subtest "test"))
(call_expression
  function: (member_expression
    object: (identifier)
    property: (property_identifier) @context (#any-of? @context "skip" "todo")))
"""


def capture(root: Node, language: str) -> Captures:
    """``subtest``: the ``test`` of each ``x.test``; ``context``: the ``skip``/``todo``
    of each ``x.skip(…)``/``x.todo(…)`` call."""
    return kit(language, QUERY).capture(root)


def imports_node_test(imports: frozenset[str]) -> bool:
    return not imports.isdisjoint(MODULES)


def names(sources: list[Node]) -> tuple[dict[str, str], frozenset[str]]:
    """``(aliases, namespaces)`` for node:test's imports in the file, from the module
    names of its imports and requires (``sources``): ``import { test as nt }`` and ``const
    { test: nt } = require(…)`` give ``{"nt": "test"}``; ``import * as n``, ``import n
    from`` and ``const n = require`` make ``n`` a namespace (``n.test(…)``,
    ``n.describe(…)``), and the last two ``n`` itself too, node:test's default export
    being ``test``."""
    aliases: dict[str, str] = {}
    namespaces: set[str] = set()
    for source in sources:
        owner = source.parent
        if string_value(source) not in MODULES or owner is None:
            continue
        if owner.type == "import_statement":
            _import_names(owner, aliases, namespaces)
        else:
            _require_names(owner, aliases, namespaces)
    return aliases, frozenset(namespaces)


def _import_names(statement: Node, aliases: dict[str, str], namespaces: set[str]) -> None:
    """As :func:`names`, for one ``import … from "node:test"``."""
    for clause in (c for c in statement.named_children if c.type == "import_clause"):
        for part in clause.named_children:
            if part.type == "identifier":
                _default(text(part), aliases, namespaces)
            elif part.type == "namespace_import":
                namespaces.update(text(n) for n in part.named_children)
            elif part.type == "named_imports":
                aliases.update(_renamed(part.named_children, "name", "alias"))


def _require_names(arguments: Node, aliases: dict[str, str], namespaces: set[str]) -> None:
    """As :func:`names`, for one ``require("node:test")``, its ``arguments``."""
    call = arguments.parent  # require(…): arguments, then the call
    declarator = call.parent if call is not None else None
    if declarator is None or declarator.type != "variable_declarator":
        return
    target = declarator.child_by_field_name("name")
    if target is not None and target.type == "identifier":
        _default(text(target), aliases, namespaces)
    elif target is not None and target.type == "object_pattern":
        aliases.update(_renamed(target.named_children, "key", "value"))


def _default(name: str, aliases: dict[str, str], namespaces: set[str]) -> None:
    """``name`` bound to node:test's default export: ``test``, and its namespace."""
    if name not in FUNCTIONS:
        aliases[name] = "test"
        namespaces.add(name)


def _renamed(parts: list[Node], name_field: str, alias_field: str) -> dict[str, str]:
    """``{alias: name}`` for the renamed node:test functions among import specifiers or
    destructuring pairs."""
    found = {}
    for part in parts:
        name = part.child_by_field_name(name_field)
        alias = part.child_by_field_name(alias_field)
        renames = name is not None and alias is not None and alias.type == "identifier"
        if renames and text(name) in FUNCTIONS:
            found[text(alias)] = text(name)
    return found


def callback(call: Node) -> Node | None:
    """The function a test call runs: its last argument, if that is a function."""
    arguments = call.child_by_field_name("arguments")
    last = arguments.named_children[-1] if arguments and arguments.named_children else None
    if last is not None and last.type in ("arrow_function", "function_expression", "function"):
        return last
    return None


def context_name(call: Node) -> str:
    """The name of the test context parameter of a test call's function ("" if none)."""
    function = callback(call)
    return _first_parameter(function) if function is not None else ""


def _first_parameter(function: Node) -> str:
    single = function.child_by_field_name("parameter")  # t => …
    if single is not None:
        return text(single) if single.type == "identifier" else ""
    parameters = function.child_by_field_name("parameters")
    first = parameters.named_children[0] if parameters and parameters.named_children else None
    if first is not None and first.type in ("required_parameter", "optional_parameter"):
        first = first.child_by_field_name("pattern")
    return text(first) if first is not None and first.type == "identifier" else ""


def subtest_calls(member_names: list[Node]) -> list[Node]:
    """The ``x.test(…)`` calls among captured ``test`` properties (``x`` an identifier)."""
    found = []
    for name in member_names:
        member = name.parent
        call = member.parent if member is not None else None
        owner = member.child_by_field_name("object") if member is not None else None
        if (
            call is not None
            and call.type == "call_expression"
            and call.child_by_field_name("function") == member
            and owner is not None
            and owner.type == "identifier"
        ):
            found.append(call)
    return found


def makes_subtests(member_names: list[Node]) -> bool:
    """Whether a captured ``x.test`` is bound (``const test = t.test``) or called with a
    function last (``t.test('name', fn)``; ``re.test(s)`` is not)."""
    for name in member_names:
        member = name.parent
        owner = member.parent if member is not None else None
        if owner is None or member is None:
            continue
        if owner.type == "variable_declarator" and owner.child_by_field_name("value") == member:
            return True
        if (
            owner.type == "call_expression"
            and owner.child_by_field_name("function") == member
            and callback(owner) is not None
        ):
            return True
    return False


def receiver(call: Node) -> str:
    """``t`` for ``t.test(…)``."""
    function = call.child_by_field_name("function")
    return text(function.child_by_field_name("object")) if function is not None else ""


def context_markers(methods: list[Node]) -> dict[int, TestStatus]:
    """Test call start byte -> skipped or todo, for the tests whose function calls
    ``t.skip()`` or ``t.todo()`` on its own context as one of its top-level statements
    (``if (…) t.skip()`` is a condition: active). ``methods``: captured ``skip``/``todo``
    properties of ``x.skip(…)`` calls."""
    found: dict[int, TestStatus] = {}
    for method in methods:
        member = method.parent
        node = member.parent if member is not None else None
        if member is None or node is None or node.type != "call_expression":
            continue
        if node.parent is not None and node.parent.type == "await_expression":
            node = node.parent
        found_call = _top_level_test_call(node)
        if found_call is None:
            continue
        test_call, function = found_call
        if text(member.child_by_field_name("object")) == _first_parameter(function):
            status = CONTEXT_STATUS[text(method)]
            if found.get(test_call.start_byte) is not TestStatus.TODO:
                found[test_call.start_byte] = status
    return found


def _top_level_test_call(node: Node) -> tuple[Node, Node] | None:
    """``(test call, its function)`` when ``node`` is a statement of the body of the
    function a test call passes last; None elsewhere (in an ``if``, a loop…)."""
    # Up from the call: its statement, the function's body (its last child), the
    # function, the test call's last argument. Parent links only: a file of tens of
    # thousands of t.skip() calls spent most of its time in field lookups.
    statement = node.parent
    if statement is None or statement.type != "expression_statement":
        return None
    block = statement.parent
    if block is None or block.type != "statement_block" or block.next_sibling is not None:
        return None
    return _test_call_passing(block.parent)


def _test_call_passing(function: Node | None) -> tuple[Node, Node] | None:
    """As :func:`_top_level_test_call`, from the function up: the call passing it last."""
    if (
        function is None
        or function.type not in ("arrow_function", "function_expression", "function")
        or function.next_named_sibling is not None
    ):
        return None
    arguments = function.parent
    if arguments is None or arguments.type != "arguments":
        return None
    test_call = arguments.parent
    if test_call is None or test_call.type != "call_expression":
        return None
    return test_call, function


def node_tests(
    entries: list[tuple[Node, str, list[str]]], subtests: list[Node], suites: frozenset[str]
) -> tuple[list[tuple[Node, str, list[str]]], set[int]]:
    """node:test: ``entries`` with the ``t.test(…)`` calls on a test's own context, and
    the start bytes of the tests that hold another test (suites, ADR 0005)."""
    known = {call.start_byte for call, _, _ in entries}
    candidates = [
        (call, "test", ["<subtest>"]) for call in subtests if call.start_byte not in known
    ]
    merged = sorted(entries + candidates, key=lambda entry: entry[0].start_byte)
    accepted: list[tuple[Node, str, list[str]]] = []
    parents: set[int] = set()
    open_calls: list[tuple[Node, str]] = []  # enclosing accepted calls, innermost last
    contexts: dict[int, str] = {}  # a test call's start -> its context parameter's name
    for call, base, modifiers in merged:
        while open_calls and open_calls[-1][0].end_byte <= call.start_byte:
            open_calls.pop()
        if modifiers == ["<subtest>"]:
            if not _on_own_context(call, open_calls, suites, contexts):
                continue
            modifiers = []
        if open_calls and open_calls[-1][1] not in suites:
            parents.add(open_calls[-1][0].start_byte)
        accepted.append((call, base, modifiers))
        open_calls.append((call, base))
    return accepted, parents


def _on_own_context(
    call: Node, open_calls: list[tuple[Node, str]], suites: frozenset[str], contexts: dict[int, str]
) -> bool:
    """Whether a ``x.test(…)`` call is on the context of the test enclosing it
    (``contexts`` caches each test call's context parameter's name)."""
    outer = open_calls[-1] if open_calls else None
    if outer is None or outer[1] in suites:
        return False
    context = contexts.get(outer[0].start_byte)
    if context is None:
        context = contexts[outer[0].start_byte] = context_name(outer[0])
    return bool(context) and receiver(call) == context


def option_marker(arguments: Node | None) -> TestStatus | None:
    """node:test's and vitest's options object, ``test('x', { skip: true }, fn)``: a
    ``skip``, ``todo`` or ``only`` whose value is not a literal false value (a string
    is a reason; a condition is a conditional skip, ADR 0005)."""
    second = (
        arguments.named_children[1] if arguments and len(arguments.named_children) > 1 else None
    )
    if second is None or second.type != "object":
        return None
    statuses: list[TestStatus | None] = []
    for pair in second.named_children:
        if pair.type == "shorthand_property_identifier":
            key, value = text(pair), None
        elif pair.type == "pair":
            key_node = pair.child_by_field_name("key")
            quoted = string_value(key_node) if key_node is not None else None
            key = quoted if quoted is not None else text(key_node)
            value = pair.child_by_field_name("value")
        else:
            continue
        if key in _OPTION_STATUS and not _falsy(value):
            statuses.append(_OPTION_STATUS[key])
    return strongest(statuses)


_OPTION_STATUS = {"skip": TestStatus.SKIPPED, "todo": TestStatus.TODO, "only": TestStatus.FOCUSED}
_FALSY = frozenset({"false", "null", "undefined", "0", "''", '""', "``"})


def _falsy(value: Node | None) -> bool:
    return value is not None and text(value) in _FALSY


def strongest(markers: list[TestStatus | None]) -> TestStatus | None:
    for status in (TestStatus.TODO, TestStatus.SKIPPED, TestStatus.FOCUSED, TestStatus.XFAIL):
        if status in markers:
            return status
    return None

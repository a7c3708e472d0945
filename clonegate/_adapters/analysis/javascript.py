"""jest, vitest, mocha and node:test files (JavaScript, TypeScript, TSX), read with
tree-sitter; node:test's own forms are in :mod:`.javascript_node`."""

from __future__ import annotations

import functools
import re

from tree_sitter import Node

from ..._domain.inventory import TestStatus
from . import javascript_node
from .frameworks.definition import Reading
from .outline import Outline
from .syntax import Captures, kit, string_value, text

SUITE_CALLS = frozenset({"describe", "context", "suite", "fdescribe", "xdescribe", "xcontext"})
TEST_CALLS = frozenset({"it", "test", "specify", "fit", "xit", "xtest", "xspecify"})
# Call roots that name a framework when imports and config files do not (ADR 0004).
MOCHA_TDD_CALLS = frozenset(
    {"suite", "suiteSetup", "suiteTeardown", "setup", "teardown", "context"}
)
FRAMEWORK_CALLS = frozenset({"vi", "jest"}) | MOCHA_TDD_CALLS
CALL_ROOTS = SUITE_CALLS | TEST_CALLS | FRAMEWORK_CALLS

# Properties of ``test`` only Playwright has: they name it in a file whose ``test``
# comes from a local fixtures module (ADR 0004).
PLAYWRIGHT_MEMBERS = frozenset(
    {"describe", "step", "use", "fixme", "slow", "info", "beforeEach", "afterEach"}
    | {"beforeAll", "afterAll"}
)

_NAMES = " ".join(f'"{name}"' for name in sorted(SUITE_CALLS | TEST_CALLS))
# Properties that modify a test or suite call; any other (``test.set``) is a method of
# something else that happens to be called ``test``.
MODIFIERS = frozenset(
    {"skip", "only", "todo", "each", "skipIf", "runIf", "fails", "failing", "concurrent"}
    | {"sequential", "shuffle", "for"}
)
# A local binding of ``test`` whose value mentions one of these is the framework's
# (``const test = base.extend({...})``, ``const it = test``), not a shadow.
_FRAMEWORK_VALUE = re.compile(
    rb"\b(extend|it|test|describe|suite|context|specify|vitest|mocha|jest)\b"
)

# Only the identifiers that can start a test, suite or framework call are captured:
# capturing every call (``expect(...)``, ``.toBe(...)``) and sorting them out in
# Python cost more than the rest of a file's analysis.
QUERY = f"""
(import_statement source: (string) @source)
(call_expression
  function: (identifier) @_require (#eq? @_require "require")
  arguments: (arguments . (string) @source))
((identifier) @root (#any-of? @root {" ".join(f'"{name}"' for name in sorted(CALL_ROOTS))}))
(variable_declarator name: (identifier) @bound (#any-of? @bound {_NAMES}))
(function_declaration name: (identifier) @bound (#any-of? @bound {_NAMES}))
(variable_declarator
  name: (identifier) @alias
  value: [(ternary_expression) (member_expression) (parenthesized_expression)])
"""
# Parameters differ: plain identifiers in JavaScript, required/optional ones in TypeScript.
_JS_PARAMETERS = f"(formal_parameters (identifier) @bound (#any-of? @bound {_NAMES}))"
_TS_PARAMETERS = "\n".join(
    f"(formal_parameters ({kind} pattern: (identifier) @bound (#any-of? @bound {_NAMES})))"
    for kind in ("required_parameter", "optional_parameter")
)


@functools.cache
def query_for(language: str) -> str:
    """The query for ``javascript``, ``typescript`` or ``tsx``."""
    return QUERY + (_JS_PARAMETERS if language == "javascript" else _TS_PARAMETERS)


Callee = tuple[str, list[str]]  # a framework name and its modifiers: test, [skip]

MODIFIER_STATUS = {
    "skip": TestStatus.SKIPPED,
    "skipIf": TestStatus.SKIPPED,  # vitest: conditionally skipped counts as skipped
    "only": TestStatus.FOCUSED,
    "todo": TestStatus.TODO,
    "fails": TestStatus.XFAIL,  # vitest
    "failing": TestStatus.XFAIL,  # jest
}


def read(path: str, data: bytes, language: str) -> Reading:
    """Imports (``import``, ``require``), the framework calls it makes (``vi``,
    ``jest``, mocha's TDD ``suite``...), and its outline."""
    syntax = kit(language, query_for(language))
    root = syntax.parse(data)
    captures = syntax.capture(root)
    imports = frozenset(js_imports(captures))
    aliases = _aliases(captures)
    namespaces: frozenset[str] = frozenset()
    subtests = None
    node_test = javascript_node.imports_node_test(imports)
    # node:test's forms, in a second query: on every file it cost 18% more query time.
    extra = javascript_node.capture(root, language) if node_test or b".test" in data else {}
    if node_test:
        renamed, namespaces = javascript_node.names(captures.get("source", []))
        aliases.update({name: (base, []) for name, base in renamed.items()})
        subtests = javascript_node.subtest_calls(extra.get("subtest", []))
    found = calls(captures)
    if aliases or namespaces:  # rare: a second query, for the calls of these names only
        names = " ".join(f'"{name}"' for name in sorted(aliases.keys() | namespaces))
        more = kit(language, f"((identifier) @root (#any-of? @root {names}))").capture(root)
        found = sorted(found + calls(more), key=lambda found: found[1].start_byte)
    signals = frozenset(name for name, _ in found if name in FRAMEWORK_CALLS)
    if javascript_node.makes_subtests(extra.get("subtest", [])):
        signals |= {javascript_node.CONTEXT_SIGNAL}
    context = javascript_node.context_markers(extra.get("context", []))
    if any(name == "test" and _playwright_member(call) for name, call in found):
        signals |= {"playwright"}
    return Reading(
        imports,
        signals,
        lambda settings: outline_javascript(
            found,
            root,
            captures,
            aliases,
            namespaces,
            (subtests, context),
            settings.interface,
        ),
    )


def _playwright_member(call: Node) -> bool:
    """``test.describe(…)``, ``test.step(…)``, ``test.use(…)``: Playwright's alone."""
    function = call.child_by_field_name("function")
    while function is not None and function.type == "member_expression":
        inner = function.child_by_field_name("object")
        if inner is not None and inner.type == "identifier":
            return text(function.child_by_field_name("property")) in PLAYWRIGHT_MEMBERS
        function = inner
    return False


def js_imports(captures: Captures) -> set[str]:
    """Module specifiers of ``import ... from 'x'``, ``import 'x'`` and ``require('x')``."""
    return {v for node in captures.get("source", ()) if (v := string_value(node)) is not None}


def calls(captures: Captures) -> list[tuple[str, Node]]:
    """Each captured root name that starts a call, with that call, in source order."""
    found = ((text(node), _call_of(node)) for node in captures.get("root", ()))
    return [(name, call) for name, call in found if call is not None]


def outline_javascript(
    calls: list[tuple[str, Node]],
    root: Node,
    captures: Captures | None = None,
    aliases: dict[str, Callee] | None = None,
    namespaces: frozenset[str] = frozenset(),
    node_test: tuple[list[Node] | None, dict[int, TestStatus]] = (None, {}),
    interface: str = "",
) -> Outline:
    """Every ``describe``/``it``/``test`` call site with a name; nesting from the source.

    A call whose result is called again (``it.each(table)``) is the factory, not the
    test: ``it.each(table)('name', fn)`` counts once, as does a test inside a loop.
    Where the file binds the name itself (``var test = request(app)``, ``function
    test(app)``, a parameter), calls in that binding's scope are not tests (ADR 0005).
    A name bound to a framework function (``const testOrSkip = win ? test.skip : test``)
    is that function (``aliases``: name -> its framework name and modifiers);
    ``namespaces`` hold node:test's functions (``n.test(…)``). ``node_test``: in a
    node:test file, its ``x.test(…)`` calls (a test holding another is then a suite),
    and the tests its context skips (:func:`.javascript_node.context_markers`).
    ``interface``: ``playwright`` reads Playwright's calls (:mod:`.javascript_e2e`),
    ``cypress`` takes an ``it`` without a callback as a todo.
    """
    if interface == "playwright":
        from .javascript_e2e import outline_playwright  # it reads with this module's parts

        return outline_playwright(calls, root, captures, aliases or {})
    subtests, context = node_test
    entries = _entries(calls, captures, aliases or {}, namespaces)
    parents: set[int] = set()
    if subtests is not None:
        entries, parents = javascript_node.node_tests(entries, subtests, SUITE_CALLS)
    outline = Outline()
    open_suites: list[tuple[int, Outline]] = [(len(root.text or b""), outline)]
    for call, base, modifiers in entries:
        arguments = call.child_by_field_name("arguments")
        first = arguments.named_children[0] if arguments and arguments.named_children else None
        if first is None:
            continue
        while open_suites[-1][0] <= call.start_byte:
            open_suites.pop()
        value = string_value(first)
        name = value if value is not None else text(first)
        line = call.start_point[0] + 1
        # t.skip() marks its own test only: the subtests it holds still run.
        own = context.get(call.start_byte) if call.start_byte not in parents else None
        marker = _entry_marker(base, modifiers, arguments, own, interface)
        container = open_suites[-1][1]
        if base in SUITE_CALLS or call.start_byte in parents:
            open_suites.append((call.end_byte, container.suite(name, line, marker)))
        else:
            container.test(name, line, marker)
    return outline


def _entries(
    calls: list[tuple[str, Node]],
    captures: Captures | None,
    aliases: dict[str, Callee],
    namespaces: frozenset[str],
) -> list[tuple[Node, str, list[str]]]:
    """``(call, framework name, modifiers)`` of each framework call no binding shadows."""
    shadows = shadows_of(captures.get("bound", []) if captures is not None else [])
    entries: list[tuple[Node, str, list[str]]] = []
    for _, call in calls:  # in source order: parents before children
        kind = _callee(call.child_by_field_name("function"), aliases, namespaces)
        if kind is None:
            continue
        base, modifiers = kind
        if any(name == base and start <= call.start_byte < end for name, start, end in shadows):
            continue
        entries.append((call, base, modifiers))
    return entries


def _entry_marker(
    base: str,
    modifiers: list[str],
    arguments: Node | None,
    context: TestStatus | None,
    interface: str,
) -> TestStatus | None:
    """A call's marker: its modifiers', its options', its context's (``t.skip()``)."""
    markers = [_marker(base, modifiers), javascript_node.option_marker(arguments), context]
    if interface == "cypress" and base in TEST_CALLS and not has_callback(arguments):
        return TestStatus.TODO  # mocha's pending test
    return javascript_node.strongest(markers)


def has_callback(arguments: Node | None) -> bool:
    """Whether a call passes something other than its name and literal options."""
    if arguments is None:
        return False
    return any(a.type not in ("object", "comment") for a in arguments.named_children[1:])


def shadows_of(bound: list[Node]) -> list[tuple[str, int, int]]:
    """``(name, start, end)``: byte ranges where a local binding hides a framework name."""
    found = []
    for name_node in bound:
        binding = name_node.parent
        if binding is None:
            continue
        if binding.type == "variable_declarator":
            value = binding.child_by_field_name("value")
            if value is not None and _FRAMEWORK_VALUE.search(value.text or b""):
                continue
        scope = binding
        if binding.type in ("required_parameter", "optional_parameter"):
            scope = binding.parent or binding
        if scope.type == "formal_parameters":
            scope = scope.parent or scope  # the function the parameter belongs to
        else:
            while scope.parent is not None and scope.type not in ("statement_block", "program"):
                scope = scope.parent
        # A variable hides the name from its declaration on (uses before it would be
        # errors, or another binding's); a function or parameter, in all its scope.
        start = binding.start_byte if binding.type == "variable_declarator" else scope.start_byte
        found.append((text(name_node), start, scope.end_byte))
    return found


def _call_of(identifier: Node) -> Node | None:
    """The call ``identifier`` starts, through modifiers and factories, if it starts one.

    ``it`` in ``it.skip.each(t)('name', fn)`` gives the outermost call, while ``it`` in
    ``it('name', fn).timeout(5)`` gives ``it(...)``: a method of the result is not a
    modifier. ``describe`` as an argument or a variable starts no call.
    """
    node, call = identifier, None
    while (parent := node.parent) is not None:
        if parent.type == "ternary_expression":  # (cond ? it.skip : it)('name', fn)
            # Taken from the alternative's name only: the call is found once.
            outer = _called_condition(node, parent)
            if outer is None:
                break
            node = call = outer
            continue
        # An object or callee is its parent's first child, so the two start together;
        # an argument or a property starts later. (A file with errors is never here.)
        if parent.start_byte != node.start_byte:
            break
        if parent.type == "call_expression":
            node = call = parent
        elif parent.type == "member_expression" and node.type != "call_expression":
            node = parent
        else:
            break
    return call


def _called_condition(branch: Node, condition: Node) -> Node | None:
    """The call whose callee is ``(condition)``, when ``branch`` is its alternative."""
    alternative = condition.child_by_field_name("alternative")
    parenthesized = condition.parent
    if alternative is None or alternative.start_byte != branch.start_byte:
        return None
    if parenthesized is None or parenthesized.type != "parenthesized_expression":
        return None
    call = parenthesized.parent
    function = call.child_by_field_name("function") if call is not None else None
    if call is None or call.type != "call_expression" or function is None:
        return None
    return call if function.start_byte == parenthesized.start_byte else None


def _aliases(captures: Captures) -> dict[str, Callee]:
    """Names the file binds to a framework function (``const skipped = test.skip``).

    ``const testOrSkip = process.platform === 'win32' ? test.skip : test``: the test
    runs where the condition is false, so the name is the plain call (ADR 0005)."""
    found = {}
    for name_node in captures.get("alias", ()):
        name = text(name_node)
        value = name_node.parent.child_by_field_name("value") if name_node.parent else None
        base = _framework_function(value)
        if base is not None and name not in SUITE_CALLS | TEST_CALLS:
            found[name] = base
    return found


def _framework_function(node: Node | None) -> Callee | None:
    """``test`` -> (test, []), ``test.skip`` -> (test, [skip]), ``(c ? test.skip : test)``
    -> (test, []); anything else (``test.each(t)``, ``c ? foo : test``) -> None."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[0] if node.named_children else None
    if node is None:
        return None
    if node.type == "ternary_expression":
        branches = [
            _framework_function(node.child_by_field_name(field))
            for field in ("consequence", "alternative")
        ]
        if branches[0] is None or branches[1] is None or branches[0][0] != branches[1][0]:
            return None
        return branches[0][0], []
    kind = _callee(node, {}) if node.type in ("identifier", "member_expression") else None
    return kind if kind is not None and "each" not in kind[1] else None


def _callee(
    function: Node | None, aliases: dict[str, Callee], namespaces: frozenset[str] = frozenset()
) -> Callee | None:
    modifiers: list[str] = []
    node = function
    while node is not None:
        if node.type == "call_expression":  # it.each(table)(...), test.skipIf(cond)(...)
            node = node.child_by_field_name("function")
        elif node.type == "member_expression":
            prop = text(node.child_by_field_name("property"))
            if prop not in MODIFIERS:
                owner = node.child_by_field_name("object")
                if prop in javascript_node.FUNCTIONS and text(owner) in namespaces:
                    return prop, modifiers[::-1]  # node:test's n.describe(...)
                return None  # test.set(...), it.expect(...): not a test
            modifiers.append(prop)
            node = node.child_by_field_name("object")
        elif node.type == "parenthesized_expression":  # (cond ? it.skip : it)
            chosen = _framework_function(node)
            return (chosen[0], [*chosen[1], *modifiers[::-1]]) if chosen else None
        elif node.type == "identifier":
            base = text(node)
            if base in SUITE_CALLS or base in TEST_CALLS:
                return base, modifiers[::-1]
            if base in aliases:
                return aliases[base][0], [*aliases[base][1], *modifiers[::-1]]
            return None
        else:
            return None
    return None


def _marker(base: str, modifiers: list[str]) -> TestStatus | None:
    if base.startswith("x"):
        return TestStatus.SKIPPED
    statuses: list[TestStatus | None] = [MODIFIER_STATUS.get(m) for m in modifiers]
    if base.startswith("f"):
        statuses.append(TestStatus.FOCUSED)
    return javascript_node.strongest(statuses)

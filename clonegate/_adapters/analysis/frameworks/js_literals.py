"""The literal values of a JavaScript or TypeScript config file, never running it (ADR 0004).

``vitest.config.ts``, ``jest.config.js``, ``playwright.config.ts`` are code; most of
them spell their test selection as literals. The file is parsed with tree-sitter and
only literals are evaluated: objects, arrays, strings, template literals without
substitutions, numbers, booleans, ``null``, regular expression literals, and a
top-level ``const`` they name. The config is what ``export default``/``module.exports``
gives, through ``defineConfig(…)``/``defineProject(…)``/``defineWorkspace(…)`` and an
arrow or function whose body returns one expression. Anything else (a call, a
condition, a variable from another module) is :data:`COMPUTED`, and only the keys
that need it are lost: ``retries: process.env.CI ? 2 : 0`` leaves ``testDir`` read.

Bounded (ADR 0012): the parse by :mod:`..syntax`'s limits, the evaluation by
:data:`MAX_DEPTH` levels and :data:`MAX_VALUES` values; past either, :class:`Refused`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from tree_sitter import Node

from ..problems import Refused, check_size
from ..syntax import kit, text

__all__ = [
    "COMPUTED",
    "MAX_DEPTH",
    "MAX_VALUES",
    "Array",
    "Computed",
    "Object",
    "Regex",
    "Value",
    "config_of",
    "literal_strings",
    "of_json",
]

MAX_DEPTH = 64  # as for JSON and TOML configs (documents.py)
MAX_VALUES = 20_000  # real configs hold tens; a literal test list, hundreds


class Computed:
    """A value only running the file would know."""

    def __repr__(self) -> str:
        return "COMPUTED"


COMPUTED: Final = Computed()


@dataclass(frozen=True, slots=True)
class Regex:
    """A regular expression literal (``/warmup\\.setup\\.ts/``), as written."""

    pattern: str
    flags: str = ""


@dataclass(slots=True)
class Object:
    """An object literal; ``open``: a spread of something computed may add any key."""

    items: dict[str, Value] = field(default_factory=dict)
    open: bool = False

    def get(self, key: str) -> Value:
        """The key's value; None if the object surely lacks it, COMPUTED if it may not."""
        if key in self.items:
            return self.items[key]
        return COMPUTED if self.open else None


@dataclass(slots=True)
class Array:
    """An array literal; ``complete`` is False when a computed spread adds elements."""

    items: list[Value] = field(default_factory=list)
    complete: bool = True


Value = Object | Array | Regex | Computed | str | float | bool | None

_UNWRAPPED = frozenset(
    {"parenthesized_expression", "satisfies_expression", "as_expression", "non_null_expression"}
)
_FUNCTIONS = frozenset({"arrow_function", "function_expression", "function"})
_DEFINES = frozenset({"defineConfig", "defineProject", "defineWorkspace"})
_PATH_CALLS = frozenset({"path.join", "path.resolve", "join", "resolve"})
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def literal_strings(value: Value) -> tuple[str, ...] | None:
    """A string or an array of strings as a tuple (``()`` for none); None if computed."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, Array) and value.complete:
        found = tuple(item for item in value.items if isinstance(item, str))
        return found if len(found) == len(value.items) else None
    return None


def config_of(name: str, content: bytes, known: Mapping[str, Value] | None = None) -> Value:
    """The value the config file exports, COMPUTED where it is not a literal.

    ``known``: values of names the framework itself defines (vitest's
    ``configDefaults.exclude``), by their dotted name as written.
    """
    check_size(content)
    language = "typescript" if name.endswith((".ts", ".mts", ".cts")) else "javascript"
    root = kit(language, "(program) @program").parse(content)
    return _Evaluator(root, known or {}).exported()


class _Evaluator:
    def __init__(self, root: Node, known: Mapping[str, Value]) -> None:
        self._root = root
        self._known = known
        self._constants: dict[str, Node] = {}
        self._resolving: set[str] = set()
        self._values = 0
        for statement in root.named_children:
            declaration = statement
            if statement.type == "export_statement":
                declaration = statement.child_by_field_name("declaration") or statement
            if declaration.type == "lexical_declaration" and text(declaration).startswith("const"):
                for declarator in declaration.named_children:
                    name = declarator.child_by_field_name("name")
                    value = declarator.child_by_field_name("value")
                    if value is not None and name is not None and name.type == "identifier":
                        self._constants[text(name)] = value

    def exported(self) -> Value:
        """``export default X`` or ``module.exports = X`` (the last one, as it would run)."""
        found: Node | None = None
        for statement in self._root.named_children:
            if statement.type == "export_statement" and b"default" in _tokens(statement):
                found = statement.child_by_field_name("value") or found
            elif statement.type == "expression_statement" and statement.named_children:
                assignment = statement.named_children[0]
                left = assignment.child_by_field_name("left")
                if assignment.type == "assignment_expression" and text(left) == "module.exports":
                    found = assignment.child_by_field_name("right")
        if found is None:
            return COMPUTED
        return self._config(found, 0)

    def _config(self, node: Node, depth: int) -> Value:
        """A config expression: through ``defineConfig(…)`` and a function returning it."""
        node = _unwrapped(node)
        if node.type == "identifier":
            return self._named(text(node), depth)
        if node.type == "call_expression":
            function = node.child_by_field_name("function")
            arguments = node.child_by_field_name("arguments")
            if text(function) in _DEFINES and arguments and arguments.named_children:
                return self._config(arguments.named_children[0], self._deeper(depth))
            return COMPUTED
        if node.type in _FUNCTIONS:
            returned = _returned(node)
            return self._config(returned, self._deeper(depth)) if returned else COMPUTED
        return self._value(node, depth)

    def _deeper(self, depth: int) -> int:
        if depth + 1 > MAX_DEPTH:
            raise Refused(f"config nested deeper than {MAX_DEPTH} levels: not read", "config")
        self._values += 1
        if self._values > MAX_VALUES:
            raise Refused(f"config of more than {MAX_VALUES:,} values: not read", "config")
        return depth + 1

    def _value(self, node: Node, depth: int) -> Value:
        depth = self._deeper(depth)
        node = _unwrapped(node)
        kind = node.type
        if kind == "object":
            return self._object(node, depth)
        if kind == "array":
            return self._array(node, depth)
        if kind in ("string", "template_string"):
            return _string(node)
        if kind == "number":
            return _number(text(node))
        if kind in ("true", "false"):
            return kind == "true"
        if kind in ("null", "undefined"):
            return None
        if kind == "regex":
            flags = node.child_by_field_name("flags")
            return Regex(text(node.child_by_field_name("pattern")), text(flags))
        if kind == "call_expression":
            return _path_call(node)
        if kind in ("identifier", "member_expression"):
            return self._named(text(node), depth)
        return COMPUTED

    def _named(self, written: str, depth: int) -> Value:
        """A name as written: a top-level const, one the framework defines, or computed."""
        if written in self._known:
            return self._known[written]
        if written == "undefined":
            return None
        node = self._constants.get(written)
        if node is None or written in self._resolving:
            return COMPUTED
        self._resolving.add(written)
        try:
            return self._config(node, self._deeper(depth))
        finally:
            self._resolving.discard(written)

    def _object(self, node: Node, depth: int) -> Object:
        found = Object()
        for member in node.named_children:
            if member.type == "pair":
                key = _key(member.child_by_field_name("key"))
                value = member.child_by_field_name("value")
                if key is None:  # [computed]: any key
                    found.open = True
                elif value is not None:
                    found.items[key] = self._value(value, depth)
            elif member.type == "shorthand_property_identifier":  # { include }
                found.items[text(member)] = self._named(text(member), depth)
            elif member.type == "method_definition":
                key = _key(member.child_by_field_name("name"))
                if key is not None:
                    found.items[key] = COMPUTED
            elif member.type == "spread_element" and member.named_children:
                spread = self._value(member.named_children[0], depth)
                if isinstance(spread, Object):
                    found.items.update(spread.items)
                    found.open = found.open or spread.open
                else:  # it may set any key written before it
                    found.items = dict.fromkeys(found.items, COMPUTED)
                    found.open = True
        return found

    def _array(self, node: Node, depth: int) -> Array:
        found = Array()
        for element in node.named_children:
            if element.type == "spread_element" and element.named_children:
                spread = self._value(element.named_children[0], depth)
                if isinstance(spread, Array):
                    found.items.extend(spread.items)
                    found.complete = found.complete and spread.complete
                else:
                    found.complete = False
            elif element.type != "comment":
                found.items.append(self._value(element, depth))
        return found


def _path_call(call: Node) -> Value:
    """``path.join(__dirname, 'e2e')`` (or ``resolve``): ``./e2e``, the config's
    directory being where relative paths start; any other call is computed."""
    function = text(call.child_by_field_name("function"))
    arguments = call.child_by_field_name("arguments")
    if function not in _PATH_CALLS or arguments is None:
        return COMPUTED
    parts = arguments.named_children
    if not parts or text(parts[0]) != "__dirname":
        return COMPUTED
    found = ["."]
    for part in parts[1:]:
        value = _string(part) if part.type in ("string", "template_string") else COMPUTED
        if not isinstance(value, str) or value.startswith("/"):
            return COMPUTED
        found.append(value)
    return posixpath.normpath("/".join(found))


def of_json(document: object) -> Value:
    """A JSON document (``jest.config.json``, ``package.json``'s key) as values of this
    module, so that one reader serves both; its depth was bounded when it was parsed."""
    if isinstance(document, dict):
        return Object({str(k): of_json(v) for k, v in document.items()})
    if isinstance(document, list):
        return Array([of_json(v) for v in document])
    if isinstance(document, int | float) and not isinstance(document, bool):
        return float(document)
    if document is None or isinstance(document, str | bool):
        return document
    return COMPUTED


def _tokens(node: Node) -> list[bytes]:
    return [child.text or b"" for child in node.children if child.child_count == 0]


def _unwrapped(node: Node) -> Node:
    """``(x)``, ``x satisfies T``, ``x as T``, ``x!``: ``x``."""
    while node.type in _UNWRAPPED and node.named_children:
        node = node.named_children[0]
    return node


def _returned(function: Node) -> Node | None:
    """What a function returns when its body is one expression or ends with ``return x``."""
    body = function.child_by_field_name("body")
    if body is None or body.type != "statement_block":
        return body
    statements = [s for s in body.named_children if s.type != "comment"]
    if statements and statements[-1].type == "return_statement":
        returned = statements[-1].named_children
        return returned[0] if returned else None
    return None


def _key(node: Node | None) -> str | None:
    if node is None:
        return None
    if node.type in ("property_identifier", "identifier"):
        return text(node)
    if node.type == "string":
        found = _string(node)
        return found if isinstance(found, str) else None
    if node.type == "number":
        return text(node)
    return None


def _string(node: Node) -> str | Computed:
    """A string or template literal's value; COMPUTED for a template with substitutions."""
    parts = []
    for child in node.named_children:
        if child.type == "string_fragment":
            parts.append(text(child))
        elif child.type == "escape_sequence":
            parts.append(_unescaped(text(child)))
        elif child.type != "comment":
            return COMPUTED  # a ${substitution}
    return "".join(parts)


def _unescaped(escape: str) -> str:
    letter = escape[1:2]
    if letter in ("\n", "\r"):
        return ""  # a line continuation
    if letter in _ESCAPES:
        return _ESCAPES[letter]
    if letter in ("x", "u"):
        digits = escape[2:].strip("{}")
        try:
            return chr(int(digits, 16))
        except ValueError:
            return escape
    return escape[1:]  # \\ \' \" \/ \. and a line continuation's newline


def _number(written: str) -> float | Computed:
    try:
        return float(int(written.replace("_", ""), 0))
    except ValueError:
        try:
            return float(written.replace("_", ""))
        except ValueError:
            return COMPUTED

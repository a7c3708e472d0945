"""tree-sitter plumbing: one parser and one compiled query per language, made once per process.

Every tree is bounded by its bytes only, never by the clock, so that a refusal is the
same on every machine and can be cached (ADR 0012). Before parsing,
:func:`.problems.check_size` bounds the tokens (a 9.8 MB JavaScript array took 5 s
and 1.9 GB to parse, then minutes to query); after it, a tree of more than
:data:`MAX_NODES` nodes or :data:`MAX_DEPTH` levels is refused before it is queried
(the query's time grows with size times depth: ``a<a<a<…`` 100,000 deep took 11 s).
tree-sitter's own progress callbacks would be the finer bound, but py-tree-sitter
0.26.1 crashes (SIGSEGV) with one on some of the corpus's Rust files.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from tree_sitter import Language, Node, Parser, Query, QueryCursor

from .problems import Refused

Captures = dict[str, list[Node]]

# What :func:`.problems.check_size` lets through makes at most about this many nodes;
# the corpus's largest test file has 60,000.
MAX_NODES = 2_000_000
# Real code nests tens of levels; the corpus's deepest tree has 60.
MAX_DEPTH = 1_000


class SyntaxKit:
    """A language's parser and its query; :meth:`capture` gives the captures in source order."""

    def __init__(self, language: Language, query: str) -> None:
        self._parser = Parser(language)
        self._query = Query(language, query)

    def parse(self, source: bytes, *, tolerate_errors: bool = False) -> Node:
        """The root node; ``SyntaxError`` names the first line tree-sitter could not parse.

        An error that is one stray token, skipped over by tree-sitter's recovery with
        the rest of the tree intact, is let through: it is a gap in a grammar more often
        than in the file (tree-sitter-typescript 0.23 refuses the trailing comma of
        ``f<typeof import('x')>('x',)``, which TypeScript accepts). Anything larger or
        a missing token fails the file. ``tolerate_errors``: for a reader that uses the
        tree only where it is sure of it (C++'s test macros are errors to the grammar).
        """
        root = self._parser.parse(source).root_node
        if root.descendant_count > MAX_NODES:
            raise Refused(f"too large to parse: over {MAX_NODES:,} syntax nodes")
        _check_depth(root)
        if root.has_error and not tolerate_errors and not _one_token_errors(root):
            raise SyntaxError(f"syntax error at line {_first_error_line(root)}")
        return root

    def capture(self, root: Node) -> Captures:
        found = QueryCursor(self._query).captures(root)
        return {name: sorted(nodes, key=lambda n: n.start_byte) for name, nodes in found.items()}

    def matches(self, root: Node) -> list[Captures]:
        """Each match of the query's patterns, with its own captures."""
        return [captures for _, captures in QueryCursor(self._query).matches(root)]


def _check_depth(root: Node) -> None:
    """:class:`Refused` if the tree is deeper than :data:`MAX_DEPTH`.

    A subtree with fewer nodes than the depth it could still add is never entered:
    most files are decided by their root's children, and no node is visited twice.
    """
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if depth + node.descendant_count <= MAX_DEPTH:
            continue  # even a chain of all its nodes stays within the bound
        if depth >= MAX_DEPTH:
            raise Refused(f"too deeply nested: over {MAX_DEPTH:,} levels of syntax")
        stack.extend((child, depth + 1) for child in node.children)


def _one_token_errors(node: Node) -> bool:
    """Whether every error below ``node`` is an ERROR node around a single token."""
    if node.is_missing:
        return False
    if node.is_error:
        return node.child_count <= 1 and all(c.child_count == 0 for c in node.children)
    return all(_one_token_errors(c) for c in node.children if c.has_error or c.is_missing)


def _first_error_line(node: Node) -> int:
    while True:
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        child = next((c for c in node.children if c.has_error or c.is_missing), None)
        if child is None:
            return node.start_point[0] + 1
        node = child


def innermost(node: Node, containers: list[Node]) -> Node | None:
    """The innermost of ``containers`` (classes, modules) that encloses ``node``."""
    owners = [
        c for c in containers if c.start_byte < node.start_byte and node.end_byte <= c.end_byte
    ]
    return max(owners, key=lambda c: c.start_byte, default=None)


def enclosing(node: Node, kinds: frozenset[str]) -> Node | None:
    """The nearest ancestor of ``node`` of one of ``kinds``: a walk up its parents,
    bounded by the tree's depth (``innermost`` over every class of a file was
    quadratic: 20,000 one-test classes took 280 s)."""
    parent = node.parent
    while parent is not None and parent.type not in kinds:
        parent = parent.parent
    return parent


def owners(containers: list[Node], nodes: list[Node]) -> dict[int, Node]:
    """The innermost of ``containers`` around each of ``nodes`` (containers included),
    by node id; a node inside none is absent. One sweep in source order over byte
    ranges: tree-sitter keeps no parent pointers (``Node.parent`` descends from the
    root), so :func:`enclosing` costs a node's depth squared: 20,000 classes 450
    namespaces deep, or 30,000 local functions 300 blocks deep, took minutes."""
    known = {c.id for c in containers}
    unique = {n.id: n for n in (*containers, *nodes)}
    order = sorted(unique.values(), key=lambda n: (n.start_byte, -n.end_byte))
    found: dict[int, Node] = {}
    open_: list[Node] = []  # the containers around the sweep, innermost last
    for node in order:
        while open_ and not (
            open_[-1].start_byte <= node.start_byte and node.end_byte <= open_[-1].end_byte
        ):
            open_.pop()
        if open_:
            found[node.id] = open_[-1]
        if node.id in known:
            open_.append(node)
    return found


def string_value(node: Node) -> str | None:
    """The text of a string or template literal without its quotes; None for anything else."""
    if node.type in (
        "string",
        "template_string",
        "interpreted_string_literal",
        "raw_string_literal",
        "string_literal",
    ):
        text = (node.text or b"").decode("utf-8", "replace")
        return text[1:-1] if len(text) >= 2 else text
    return None


def text(node: Node | None) -> str:
    return (node.text or b"").decode("utf-8", "replace") if node is not None else ""


@functools.cache
def kit(language: str, query: str) -> SyntaxKit:
    """The kit for ``javascript``, ``typescript``, ``tsx``, ``go``, ``java``, ``kotlin``,
    ``rust``, ``swift``, ``php``, ``ruby``, ``cpp`` or ``csharp``."""
    return SyntaxKit(Language(_LANGUAGES[language]()), query)


def _javascript() -> object:
    import tree_sitter_javascript

    return tree_sitter_javascript.language()


def _typescript() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_typescript()


def _tsx() -> object:
    import tree_sitter_typescript

    return tree_sitter_typescript.language_tsx()


def _go() -> object:
    import tree_sitter_go

    return tree_sitter_go.language()


def _java() -> object:
    import tree_sitter_java

    return tree_sitter_java.language()


def _kotlin() -> object:
    import tree_sitter_kotlin

    return tree_sitter_kotlin.language()


def _php() -> object:
    import tree_sitter_php

    return tree_sitter_php.language_php()


def _ruby() -> object:
    import tree_sitter_ruby

    return tree_sitter_ruby.language()


def _csharp() -> object:
    import tree_sitter_c_sharp

    return tree_sitter_c_sharp.language()


def _rust() -> object:
    import tree_sitter_rust

    return tree_sitter_rust.language()


def _swift() -> object:
    import tree_sitter_swift

    return tree_sitter_swift.language()


def _cpp() -> object:
    import tree_sitter_cpp

    return tree_sitter_cpp.language()


_LANGUAGES: dict[str, Callable[[], object]] = {
    "javascript": _javascript,
    "typescript": _typescript,
    "tsx": _tsx,
    "go": _go,
    "java": _java,
    "kotlin": _kotlin,
    "ruby": _ruby,
    "rust": _rust,
    "swift": _swift,
    "php": _php,
    "cpp": _cpp,
    "csharp": _csharp,
}

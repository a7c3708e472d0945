"""Glob patterns as test frameworks write them in their configs (mocha's ``spec``,
jest's ``testMatch``, pytest's ``python_files``), matched against POSIX paths.

``**`` is any number of directories, ``*`` and ``?`` stay inside one name, ``{a,b}``
is either, ``[...]`` a character class; the extglobs of picomatch (jest, vitest,
Playwright) ``?(a|b)``, ``*(…)``, ``+(…)``, ``@(…)`` are zero or one, any, one or
more, exactly one of the alternatives (``!(…)``, a negation, cannot run on RE2 and is
refused). Patterns are turned into regular
expressions once and cached, and run on RE2 (:mod:`.patterns`): sixteen ``**/`` in a
row made ``re`` try every way to share a 30-directory path among them. A pattern
that cannot be run raises :class:`.patterns.PatternError`; the config readers call
:func:`check_globs`/:func:`check_names` so that it is their config's scan error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .patterns import (
    CACHED_PATTERNS,
    Compiled,
    PatternError,
    check_count,
    compile_regex,
    searchable,
    shown,
)

__all__ = ["check_globs", "check_names", "glob_alternatives", "glob_matches", "name_matches"]


def glob_matches(pattern: str, path: str) -> bool:
    """Whether ``path`` (relative, no leading ``./``) matches ``pattern``."""
    return _compiled(pattern.removeprefix("./")).fullmatch(searchable(path)) is not None


def check_globs(patterns: tuple[str, ...], what: str = "glob") -> None:
    """:class:`.patterns.PatternError` if one of ``patterns`` cannot be run."""
    check_count(patterns, what)
    for pattern in patterns:
        _compiled(pattern.removeprefix("./"))


def check_names(patterns: tuple[str, ...], what: str = "pattern") -> None:
    """As :func:`check_globs`, for the ``fnmatch`` patterns of :func:`name_matches`."""
    check_count(patterns, what)
    _fnmatch_union(patterns)


def name_matches(patterns: tuple[str, ...], path: str) -> bool:
    """pytest's way (``fnmatch``): a pattern without ``/`` matches the file name, one
    with a ``/`` the end of the path (``test/*test_*.py``)."""
    affixes = _affixes(patterns)
    if affixes is not None:
        name = path[path.rfind("/") + 1 :]
        return any(_affixed(name, prefix, suffix) for prefix, suffix in affixes)
    names, paths = _fnmatch_union(patterns)
    path = searchable(path)
    if names is not None and names.fullmatch(path.rsplit("/", 1)[-1]):
        return True
    return paths is not None and paths.fullmatch(path) is not None


@functools.lru_cache(maxsize=CACHED_PATTERNS)
def _affixes(patterns: tuple[str, ...]) -> tuple[tuple[str, str | None], ...] | None:
    """``(prefix, suffix)`` for each of ``patterns`` when each is a file name of ASCII
    characters with at most one ``*`` and no ``?`` or ``[`` (pytest's defaults,
    ``test_*.py``); the suffix is None for a name without ``*``. None for any other.

    Such a name matches as ``startswith`` and ``endswith`` say: ``*`` is any
    characters, newlines included (``(?s:.*)``), and a lone surrogate that RE2 sees as
    U+FFFD is no ASCII character either way. RE2's wrapper cost more than the rest of
    pytest's rules for each file of a listing."""
    _fnmatch_union(patterns)  # a pattern RE2 refuses is refused all the same
    found = []
    for pattern in patterns:
        if "/" in pattern or "?" in pattern or "[" in pattern or not pattern.isascii():
            return None
        prefix, star, suffix = pattern.partition("*")
        if "*" in suffix:
            return None
        found.append((prefix, suffix if star else None))
    return tuple(found)


def _affixed(name: str, prefix: str, suffix: str | None) -> bool:
    if suffix is None:
        return name == prefix
    return (
        len(name) >= len(prefix) + len(suffix) and name.startswith(prefix) and name.endswith(suffix)
    )


@functools.lru_cache(maxsize=CACHED_PATTERNS)
def _fnmatch_union(patterns: tuple[str, ...]) -> tuple[Compiled | None, Compiled | None]:
    # One expression per kind instead of a fnmatch per pattern: a listing asks this
    # for every file and every directory of the tree (39 fnmatch calls per file of a
    # 20,000-file tree took 1.1 s of its 2.1 s). Each pattern is checked on its own
    # first, so that a refusal names it.
    names = [_fnmatch(p) for p in patterns if "/" not in p]
    paths = [_fnmatch(q) for p in patterns if "/" in p for q in (p, "*/" + p)]
    return (
        compile_regex("|".join(names), "python_files", capped=False) if names else None,
        compile_regex("|".join(paths), "python_files", capped=False) if paths else None,
    )


def _fnmatch(pattern: str) -> str:
    """``fnmatch``'s meaning of ``pattern`` (``*`` crosses ``/``) in RE2's syntax."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        i += 1
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char == "[" and (end := _class_end(pattern, i)) > 0:
            out.append(_class(pattern[i:end], caret_literal=True))
            i = end + 1
        else:
            out.append(_literal(char))
    translated = "(?s:" + "".join(out) + ")"
    compile_regex(translated, f"pattern {shown(pattern)}")
    return translated


def _class_end(pattern: str, start: int) -> int:
    """Where the class opened before ``start`` ends (a ``]`` right after ``[`` or
    ``[!`` is part of it, as in ``fnmatch``), or -1 if it is not closed."""
    i = start + (1 if pattern.startswith("!", start) else 0)
    i += 1 if pattern.startswith("]", i) else 0
    return pattern.find("]", i)


def _class(body: str, caret_literal: bool = False) -> str:
    """A class; ``[!a]`` is negated, ``[^a]`` too unless ``caret_literal`` (fnmatch)."""
    negated = body.startswith("!")
    body = body[1:] if negated else body
    inner = body.replace("\\", "\\\\")  # a backslash is itself in a glob
    if caret_literal and not negated and inner.startswith("^"):
        inner = "\\" + inner
    return "[" + ("^" if negated else "") + inner + "]"


def _literal(char: str) -> str:
    """``char`` matched as itself: punctuation escaped, control characters by code."""
    if char.isalnum() or char == "_" or ord(char) > 127:
        return char
    if char.isprintable():
        return "\\" + char
    return f"\\x{{{ord(char):x}}}"


@functools.lru_cache(maxsize=CACHED_PATTERNS)
def _compiled(pattern: str) -> Compiled:
    return compile_regex(_translate(pattern), f"glob {shown(pattern)}")


_MAX_NESTING = 16
_EXTGLOB = {"?": "?", "*": "*", "+": "+", "@": ""}


def _translate(pattern: str, depth: int = 0) -> str:
    if depth > _MAX_NESTING:  # each level is one recursion
        raise PatternError(f"glob {shown(pattern)}: groups nested over {_MAX_NESTING} levels")
    out: list[str] = []
    i = 0
    while i < len(pattern):
        piece, i = _extglob(pattern, i, depth) or _token(pattern, i, depth)
        out.append(piece)
    return "".join(out)


def _extglob(pattern: str, i: int, depth: int) -> tuple[str, int] | None:
    """The extglob group ``?(…)``, ``*(…)``, ``+(…)`` or ``@(…)`` at ``i`` as a regex, and
    where the pattern goes on; None if there is none."""
    char = pattern[i]
    if char not in "?*+@!" or not pattern.startswith("(", i + 1):
        return None
    end = _group_end(pattern, i + 1)
    if end <= 0:
        return None
    if char == "!":
        raise PatternError(f"glob {shown(pattern)}: a negated extglob !(…) is not run")
    options = _alternatives(pattern[i + 2 : end])
    group = "|".join(_translate(o, depth + 1) for o in options)
    return "(?:" + group + ")" + _EXTGLOB[char], end + 1


def _token(pattern: str, i: int, depth: int) -> tuple[str, int]:
    """The glob token at ``i`` as a regex, and where the pattern goes on."""
    char = pattern[i]
    if pattern.startswith("**/", i):
        return "(?:[^/]*/)*", i + 3  # any directories, none included
    if pattern.startswith("**", i):
        return ".*", i + 2
    if char == "*":
        return "[^/]*", i + 1
    if char == "?":
        return "[^/]", i + 1
    if char == "{":
        end = pattern.find("}", i)
        if end >= 0:
            options = pattern[i + 1 : end].split(",")
            return "(?:" + "|".join(_translate(o, depth + 1) for o in options) + ")", end + 1
    elif char == "[":
        end = pattern.find("]", i + 1)
        if end >= 0:
            return _class(pattern[i + 1 : end]), end + 1
    return _literal(char), i + 1


def glob_alternatives(patterns: tuple[str, ...]) -> Callable[[str], int | None]:
    """One match for several globs: the index of the first of ``patterns`` that ``path``
    matches, or None. One RE2 run a path instead of one a pattern (the listing asks it
    for every file of the tree)."""
    # One group per pattern, and none inside (braces translate to (?:...)): the group
    # set is the first alternative that matches (RE2 prefers the leftmost).
    alternatives = "|".join(f"({_translate(p.removeprefix('./'))})" for p in patterns)
    compiled = compile_regex(alternatives, "globs", capped=False)

    def first(path: str) -> int | None:
        found = compiled.fullmatch(searchable(path))
        if found is None or found.lastindex is None:
            return None
        return found.lastindex - 1

    return first


def _group_end(pattern: str, start: int) -> int:
    """The index of the ``)`` closing the ``(`` at ``start``, or -1."""
    depth = 0
    for index in range(start, len(pattern)):
        if pattern[index] == "(":
            depth += 1
        elif pattern[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _alternatives(body: str) -> list[str]:
    """``a|b(c|d)`` -> ``[a, b(c|d)]``: split at the ``|`` outside nested groups."""
    found, depth, last = [], 0, 0
    for index, char in enumerate(body):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "|" and depth == 0:
            found.append(body[last:index])
            last = index + 1
    return [*found, body[last:]]

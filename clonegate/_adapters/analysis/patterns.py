"""Regular expressions that come from repositories, run on RE2 (ADR 0012).

A pattern in a config (jest's ``testRegex``, a glob translated by :mod:`.globs`) is
hostile input: Python's ``re`` backtracks, and ``^(a+)+$`` against a 30-letter file
name held an analysis worker for minutes. RE2 matches in time linear in the text and
refuses what it cannot run that way (backreferences, lookarounds). A pattern longer
than :data:`MAX_PATTERN_CHARS`, one RE2 refuses, or one whose compiled program
exceeds RE2's memory budget raises :class:`PatternError`; the config that holds it
is then a scan error (:mod:`.config`), never the repository's loss.
"""

from __future__ import annotations

import functools
import re
from typing import Protocol, cast

import re2

from .problems import Refused

__all__ = [
    "CACHED_PATTERNS",
    "MAX_PATTERNS",
    "MAX_PATTERN_CHARS",
    "Compiled",
    "Match",
    "PatternError",
    "check_count",
    "compile_regex",
    "compile_test_regex",
    "linear",
    "searchable",
    "shown",
]

# A test pattern is a path and a few alternatives; jest's default testRegex is 60
# characters. Far above any real one, far below what costs a worker anything.
MAX_PATTERN_CHARS = 2_000
# Patterns of one option (testMatch, spec, python_files...): each file meets them all.
MAX_PATTERNS = 200
# RE2's budget for one compiled program and its DFA cache (its default is 8 MiB).
_MAX_MEMORY = 8 << 20
_SURROGATE = re.compile("[\ud800-\udfff]")
# Compiled patterns kept per process: a served worker analyzes repository after
# repository, and one repository can hold thousands of distinct patterns.
CACHED_PATTERNS = 4096


class PatternError(Refused):
    """A pattern from a repository that is not run: too long, or refused by RE2."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason, "config")


class Match(Protocol):
    """What the analyzer uses of an RE2 match."""

    def group(self, index: int, /) -> str | None: ...

    @property
    def lastindex(self) -> int | None: ...


class Compiled(Protocol):
    """What the analyzer uses of a compiled RE2 pattern."""

    def search(self, text: str) -> Match | None: ...

    def fullmatch(self, text: str) -> Match | None: ...


def compile_regex(pattern: str, what: str = "pattern", *, capped: bool = True) -> Compiled:
    """``pattern`` compiled by RE2; :class:`PatternError` says why it cannot be, naming
    ``what`` (``testRegex``; ``glob 'x'`` for a pattern made from the glob ``x``).
    ``capped=False``: the caller made ``pattern`` of patterns each checked already
    (an alternation of them); RE2's memory budget still bounds it."""
    if capped and len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(
            f"{what} of {len(pattern)} characters, over the limit of {MAX_PATTERN_CHARS}"
        )
    return _compiled(pattern, what)


@functools.lru_cache(maxsize=CACHED_PATTERNS)
def _compiled(pattern: str, what: str) -> Compiled:
    options = re2.Options()
    options.log_errors = False  # RE2 would write each refusal to stderr
    options.max_mem = _MAX_MEMORY
    try:
        return cast(Compiled, re2.compile(searchable(pattern), options))
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        named = what if " " in what else f"{what} {shown(pattern)}"
        raise PatternError(f"{named} cannot be run: {reason}") from None


class _Unless:
    """``^(?!refused)rest`` as two RE2 programs: ``rest`` where ``refused`` does not
    match at the start. Its matches carry the groups of ``rest`` only."""

    def __init__(self, refused: Compiled, rest: Compiled) -> None:
        self._refused, self._rest = refused, rest

    def search(self, text: str) -> Match | None:
        return None if self._refused.search(text) else self._rest.search(text)

    def fullmatch(self, text: str) -> Match | None:
        return None if self._refused.search(text) else self._rest.fullmatch(text)


@functools.lru_cache(maxsize=CACHED_PATTERNS)  # run on every path: parsed once
def compile_test_regex(pattern: str, what: str) -> Compiled:
    """A repository's test regular expression (jest's ``testRegex``, a JavaScript
    one), as :func:`compile_regex` compiles it, and one lookaround more: a leading
    negative lookahead, ``^(?!.*e2e).*\\.test\\.ts$``, the form configs use to leave
    some tests out. RE2 has no lookarounds, and ``re`` cannot take a repository's
    pattern: ``^(?!x)(a+)+$`` took it 0.65 s on a 25-character path, doubling with
    each character more (ADR 0012)."""
    split = _leading_negative_lookahead(pattern) if len(pattern) <= MAX_PATTERN_CHARS else None
    if split is None:
        return compile_regex(pattern, what)
    refused, rest = split
    try:
        return _Unless(_compiled(f"^(?:{refused})", what), _compiled(f"^(?:{rest})", what))
    except PatternError:
        return compile_regex(pattern, what)  # RE2's refusal of the pattern as written


def _leading_negative_lookahead(pattern: str) -> tuple[str, str] | None:
    """``(A, B)`` for a ``pattern`` that is ``^(?!A)B`` with no ``|`` outside groups
    in ``B`` (``^(?!A)B|C`` looks ahead in its first branch only); else None."""
    if not pattern.startswith("^(?!"):
        return None
    end = _group_end(pattern, 4)
    if end is None:
        return None
    rest = pattern[end + 1 :]
    if _group_end(rest + ")", 0, stop_at_bar=True) != len(rest):
        return None
    return pattern[4:end], rest


def _group_end(pattern: str, start: int, *, stop_at_bar: bool = False) -> int | None:
    """The index of the ``)`` that closes the group open before ``start``; None if none
    does, or (``stop_at_bar``) if a ``|`` outside any group comes first. Escapes and
    character classes hold no group."""
    depth, index, in_class = 0, start, False
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 1
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
            if pattern.startswith("]", index + 1) or pattern.startswith("^]", index + 1):
                index += pattern.index("]", index + 1) - index  # a leading ']' is literal
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                return index
            depth -= 1
        elif char == "|" and depth == 0 and stop_at_bar:
            return None
        index += 1
    return None


def linear(pattern: str) -> Compiled:
    """One of the analyzer's own patterns on RE2: for those that scan a repository's
    text, where ``re`` would be quadratic (``\\S*/`` tried from every ``(`` of a
    10 MB ``scripts`` line). Raises :class:`PatternError` only for a bug here."""
    return compile_regex(pattern, "built-in pattern")


def check_count(patterns: tuple[str, ...], what: str) -> None:
    """:class:`PatternError` if an option holds more than :data:`MAX_PATTERNS` patterns."""
    if len(patterns) > MAX_PATTERNS:
        raise PatternError(f"{len(patterns)} {what}s, over the limit of {MAX_PATTERNS}")


def searchable(text: str) -> str:
    """``text`` as RE2 can take it (UTF-8): each lone surrogate (a path's undecodable
    byte from ``surrogateescape``, a JSON ``\\ud800``) becomes one U+FFFD, one
    character as ``re`` saw it."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def shown(pattern: str) -> str:
    """``pattern`` quoted for a message, cut at 80 characters."""
    return repr(pattern if len(pattern) <= 80 else pattern[:77] + "...")

"""Which listed repositories a run keeps: :class:`Filters`, and the :class:`Selection`
that applies them to a listing as it streams (ADR 0023).

Exact semantics, one per option (``--skip-forks``...):

- ``skip_forks`` / ``skip_archived``: drop a record whose flag is True. A record
  that does not say (None) is kept: nothing says it is a fork.
- ``languages``: keep a record whose primary language equals one of them, ignoring
  case (``--language go --language rust``: either).
- ``topics``: keep a record that has every one of them, ignoring case.
- ``match``: keep a record whose full name one of the patterns finds (a search, not
  a full match: anchor with ``^``/``$``); ``exclude``: drop a record whose full name
  one of them finds. ``exclude`` wins.
- ``min_stars``: keep ``stars >= min_stars``; ``pushed_after``: keep
  ``pushed_at > pushed_after`` (strictly after).
- A filter that needs a value the record does not give (language, stars,
  pushed_at) drops it, and says so: "not said" is never read as a match.
  :meth:`Filters.needs` names those fields, so a caller can refuse a filter on a
  forge that never gives one.
- ``limit``: keep the first ``limit`` records that pass, in listing order; the
  selection is then :attr:`Selection.full` and the listing can stop.

Patterns are the user's, the names they run on the servers': a backtracking engine
would let a hostile name turn an innocent ``(a|aa)*$`` into minutes. The domain
imports no regular-expression library but the standard one (ADR 0001), so the
caller hands :meth:`Filters.selection` a compiler whose matching is linear in the
text: RE2's (``clonegate._adapters.analysis.patterns.compile_regex``, ADR 0012).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from .listed import Listed
from .urls import visible

__all__ = [
    "MAX_PATTERNS",
    "MAX_PATTERN_CHARS",
    "Filters",
    "NamePattern",
    "PatternCompiler",
    "Selection",
]

MAX_PATTERN_CHARS = 1_000  # a name pattern is a few alternatives, not a program
MAX_PATTERNS = 100  # of --match and of --exclude, each
_MAX_VALUE_CHARS = 256  # a language or a topic


class NamePattern(Protocol):
    """A compiled pattern, as the filters use it: ``search`` finds it in a full name."""

    def search(self, text: str, /) -> object | None: ...


# Compiles one pattern; raises ValueError (or a subclass) saying why it cannot.
PatternCompiler = Callable[[str], NamePattern]


@dataclass(frozen=True, slots=True)
class Filters:
    """What to keep of a listing (see the module's text for each field's semantics)."""

    skip_forks: bool = False
    skip_archived: bool = False
    languages: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    match: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    min_stars: int | None = None
    pushed_after: datetime | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        _check_names("--language", self.languages)
        _check_names("--topic", self.topics)
        _check_patterns("--match", self.match)
        _check_patterns("--exclude", self.exclude)
        for option, count in (("--min-stars", self.min_stars), ("--limit", self.limit)):
            if count is not None and (type(count) is not int or count < 0):
                raise ValueError(f"{option} must be a count, not {count!r}")
        if self.limit == 0:
            raise ValueError("--limit 0 would keep nothing: give at least 1")
        if self.pushed_after is not None and self.pushed_after.utcoffset() is None:
            raise ValueError("--pushed-after needs a time zone (an aware datetime)")

    def needs(self) -> frozenset[str]:
        """The :class:`Listed` fields a record must give for these filters to keep it."""
        wanted = {
            "language": bool(self.languages),
            "topics": bool(self.topics),
            "stars": self.min_stars is not None,
            "pushed_at": self.pushed_after is not None,
        }
        return frozenset(name for name, needed in wanted.items() if needed)

    def selection(self, compile_pattern: PatternCompiler) -> Selection:
        """A fresh :class:`Selection` of these filters, its patterns compiled by
        ``compile_pattern`` (linear-time, see the module's text). ValueError names
        the option and the pattern that does not compile."""
        return Selection(self, _compiled(self, compile_pattern))


def _check_names(option: str, values: tuple[str, ...]) -> None:
    for value in values:
        if not value.strip() or len(value) > _MAX_VALUE_CHARS or not value.isprintable():
            raise ValueError(f"{option} {visible(repr(value))[:80]} is not a name")


def _check_patterns(option: str, patterns: tuple[str, ...]) -> None:
    if len(patterns) > MAX_PATTERNS:
        raise ValueError(f"{option} is given over {MAX_PATTERNS} times")
    for pattern in patterns:
        if not pattern or len(pattern) > MAX_PATTERN_CHARS:
            raise ValueError(
                f"{option} pattern of {len(pattern)} characters (1 to {MAX_PATTERN_CHARS})"
            )


@dataclass(frozen=True, slots=True)
class _Patterns:
    match: tuple[NamePattern, ...]
    exclude: tuple[NamePattern, ...]


def _compiled(filters: Filters, compile_pattern: PatternCompiler) -> _Patterns:
    def each(option: str, patterns: tuple[str, ...]) -> tuple[NamePattern, ...]:
        compiled = []
        for pattern in patterns:
            try:
                compiled.append(compile_pattern(pattern))
            except ValueError as exc:
                shown = visible(repr(pattern))[:80]
                raise ValueError(f"{option} {shown} cannot be used: {exc}") from None
        return tuple(compiled)

    return _Patterns(each("--match", filters.match), each("--exclude", filters.exclude))


class Selection:
    """:class:`Filters` applied to one listing, record by record, in listing order.

    Holds only the count kept so far: a listing of any length streams through it.
    """

    def __init__(self, filters: Filters, patterns: _Patterns) -> None:
        self.filters = filters
        self._patterns = patterns
        self._languages = frozenset(language.casefold() for language in filters.languages)
        self._topics = frozenset(topic.casefold() for topic in filters.topics)
        self.kept = 0

    @property
    def full(self) -> bool:
        """Whether the limit is reached: no later record can be kept."""
        return self.filters.limit is not None and self.kept >= self.filters.limit

    def offer(self, listed: Listed) -> str | None:
        """None if ``listed`` is kept (and counted toward the limit); else why it is
        not, in a few words (``fork``, ``language 'Go'``, ``stars not said``, ``limit``)."""
        reason = self.refusal(listed)
        if reason is None and self.full:
            reason = "limit"
        if reason is None:
            self.kept += 1
        return reason

    def refusal(self, listed: Listed) -> str | None:
        """Why the filters (all but the limit) drop ``listed``; None if they keep it.
        Pure: counts nothing."""
        filters = self.filters
        if filters.skip_forks and listed.fork is True:
            return "fork"
        if filters.skip_archived and listed.archived is True:
            return "archived"
        reason = self._described(listed)
        if reason is not None:
            return reason
        return self._named(listed.full_name)

    def _described(self, listed: Listed) -> str | None:
        """Why the record's metadata fails the filters on it, if it does."""
        filters = self.filters
        if self._languages:
            if listed.language is None:
                return "language not said"
            if listed.language.casefold() not in self._languages:
                return f"language {visible(repr(listed.language))}"
        if not self._topics <= {topic.casefold() for topic in listed.topics}:
            return "topics"
        if filters.min_stars is not None:
            if listed.stars is None:
                return "stars not said"
            if listed.stars < filters.min_stars:
                return "stars"
        if filters.pushed_after is not None:
            if listed.pushed_at is None:
                return "pushed_at not said"
            if listed.pushed_at <= filters.pushed_after:
                return "pushed_at"
        return None

    def _named(self, full_name: str) -> str | None:
        """Why the full name fails --exclude or --match, if it does."""
        if any(pattern.search(full_name) is not None for pattern in self._patterns.exclude):
            return "excluded"
        matches = self._patterns.match
        if matches and all(pattern.search(full_name) is None for pattern in matches):
            return "not matched"
        return None

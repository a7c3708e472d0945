"""Sources on the command line (ADR 0023): the filters' options, declared once for
`analyze` and `submit`, the checks made before anything is listed, and what a listing
says on stderr while it runs.

A listing's failure is one line naming the source, escaped, and the run's exit status
1 ("some failed"): what was listed before is still cloned. A rate-limit wait is one
line before it starts. Nothing here imports the adapters: the feed is made when a
command has started its workers (`clonegate.sources.listing_feed`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from clonegate import Option, visible
from clonegate.sources import (
    LISTINGS_AT_ONCE,
    Filters,
    Forge,
    ForgeTokens,
    Listed,
    Source,
    forge_tokens,
    with_forge_tokens,
)

from ._flag_groups import options_of
from ._run import usage_error

if TYPE_CHECKING:
    from clonegate.sources import ListingFeed

__all__ = ["Listing", "ListingFlags", "listing_options"]

# What each forge's list API never says: a filter that needs it would drop every
# repository of that forge ("not said" is never a match), so it is refused up front.
_NOT_SAID = {
    Forge.GITLAB: frozenset({"language"}),
    Forge.BITBUCKET: frozenset({"stars", "topics"}),
}
_FILTER_OF_FIELD = {
    "language": "--language",
    "topics": "--topic",
    "stars": "--min-stars",
    "pushed_at": "--pushed-after",
}


@dataclass(frozen=True)
class ListingFlags:
    """What to keep of what sources list, and how to list them."""

    skip_forks: Annotated[
        bool, typer.Option("--skip-forks", help="Leave out forks (of what sources list).")
    ] = False
    skip_archived: Annotated[
        bool, typer.Option("--skip-archived", help="Leave out archived repositories.")
    ] = False
    language: Annotated[
        list[str] | None,
        typer.Option(
            "--language",
            help="Keep repositories whose main language is NAME (case ignored; repeat for "
            "any of several).",
            metavar="NAME",
        ),
    ] = None
    topic: Annotated[
        list[str] | None,
        typer.Option(
            "--topic", help="Keep repositories with topic NAME (repeat: all).", metavar="NAME"
        ),
    ] = None
    match: Annotated[
        list[str] | None,
        typer.Option(
            "--match",
            help="Keep repositories whose full name (owner/name) REGEX finds (RE2; repeat: any).",
            metavar="REGEX",
        ),
    ] = None
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            help="Leave out repositories whose full name REGEX finds (wins over --match).",
            metavar="REGEX",
        ),
    ] = None
    min_stars: Annotated[
        int | None,
        typer.Option(
            "--min-stars", min=0, help="Keep repositories with N stars or more.", metavar="N"
        ),
    ] = None
    pushed_after: Annotated[
        str | None,
        typer.Option(
            "--pushed-after",
            help="Keep repositories pushed after DATE (2024-05-01, or an ISO 8601 time; UTC "
            "unless it says).",
            metavar="DATE",
        ),
    ] = None
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="Keep the first N repositories of each source.", metavar="N"
        ),
    ] = None
    listings: Annotated[
        int,
        typer.Option("--listings", min=1, help="Sources listed at once.", metavar="N"),
    ] = LISTINGS_AT_ONCE
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Print the repositories the run would clone (URLs; JSON lines with "
            "--format json or jsonl) and clone nothing.",
        ),
    ] = False

    def filters(self) -> Filters:
        """The :class:`Filters` these options ask for; a usage error naming the option."""
        try:
            return Filters(
                skip_forks=self.skip_forks,
                skip_archived=self.skip_archived,
                languages=tuple(self.language or ()),
                topics=tuple(self.topic or ()),
                match=tuple(self.match or ()),
                exclude=tuple(self.exclude or ()),
                min_stars=self.min_stars,
                pushed_after=_moment(self.pushed_after),
                limit=self.limit,
            )
        except ValueError as exc:
            raise usage_error(visible(str(exc))) from None


# A command takes every listing option by declaring a keyword-only ListingFlags parameter.
listing_options = options_of(ListingFlags)


def _moment(text: str | None) -> datetime | None:
    """``--pushed-after``'s time: a date is its midnight, UTC; a time without a zone is
    UTC (a forge's times are)."""
    if text is None:
        return None
    try:
        if len(text.strip()) == 10:
            day = date.fromisoformat(text.strip())
            return datetime(day.year, day.month, day.day, tzinfo=UTC)
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(
            f"--pushed-after {visible(repr(text))[:80]} is not a date (2024-05-01) or an "
            "ISO 8601 time"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass
class Listing:
    """The sources of one run, checked, and what their listing says on stderr.

    ``say(line, warning)`` writes one line on stderr (the run's progress display, or
    plain stderr for ``--dry-run``)."""

    entries: list[str | Source]
    flags: ListingFlags
    filters: Filters
    tokens: ForgeTokens
    say: Callable[[str, bool], None]
    quiet: bool = False
    verbose: bool = False
    problems: int = 0  # problem lines said: a listing that failed, an item unread...
    _feed: ListingFeed | None = field(default=None, init=False, repr=False)

    @classmethod
    def of(cls, entries: list[str | Source], flags: ListingFlags) -> Listing:
        """The run's listing, or a usage error: a filter with no source to apply to, a
        token bound nowhere, a filter a source's forge can never satisfy."""
        filters = flags.filters()
        sources = [entry for entry in entries if isinstance(entry, Source)]
        if filters != Filters() and not sources:
            raise usage_error(
                "the filters (--skip-forks, --language, --limit...) apply to what sources "
                "list (github:org/NAME...), and none is given"
            )
        tokens = forge_tokens(os.environ)
        problems = [_problem(source, filters, tokens) for source in sources]
        found = sorted({problem for problem in problems if problem is not None})
        if found:
            raise usage_error("\n".join(found))
        listing = cls(entries, flags, filters, tokens, lambda line, warning: None)
        if sources:
            listing.feed()  # its patterns compiled: refused now, as a usage error
        return listing

    @property
    def sources(self) -> bool:
        """Whether the run lists any source."""
        return any(isinstance(entry, Source) for entry in self.entries)

    def clone_options(self) -> tuple[Option, ...]:
        """The forge tokens' clone credentials, for a run that lists (ADR 0013)."""
        return (with_forge_tokens(self.tokens),) if self.sources else ()

    def feed(self) -> ListingFeed:
        """The run's stream of entries: made once, when the command has started its
        workers (the composition imports the adapters), so that a pattern RE2 refuses
        is a usage error before anything runs."""
        if self._feed is None:
            from clonegate.sources import ListingHooks, listing_feed

            hooks = ListingHooks(self._waiting, self._problem, self._dropped)
            try:
                self._feed = listing_feed(
                    self.entries,
                    filters=self.filters,
                    tokens=self.tokens,
                    listings=self.flags.listings,
                    hooks=hooks,
                )
            except ValueError as exc:  # a pattern RE2 refuses
                raise usage_error(visible(str(exc))) from None
        return self._feed

    def _waiting(self, source: Source, reason: str, seconds: float) -> None:
        if not self.quiet:
            self.say(
                f"waiting {seconds:.0f} s for {source.host}'s rate limit "
                f"({visible(reason)}; {source})",
                False,
            )

    def _problem(self, source: Source, message: str) -> None:
        self.problems += 1
        self.say(f"clonegate: error: {visible(message)}", False)

    def _dropped(self, source: Source, listed: Listed, reason: str) -> None:
        if self.verbose:
            self.say(f"left out {visible(listed.full_name)} ({source}): {visible(reason)}", False)


def _problem(source: Source, filters: Filters, tokens: ForgeTokens) -> str | None:
    """Why ``source`` cannot be listed as asked, or None."""
    unbound = tokens.problem(source)
    if unbound is not None:
        return f"{source}: {visible(unbound)}"
    unsaid = sorted(filters.needs() & _NOT_SAID.get(source.forge, frozenset()))
    if unsaid:
        options = ", ".join(_FILTER_OF_FIELD[name] for name in unsaid)
        return (
            f"{source}: {source.forge.value}'s listing never says a repository's "
            f"{', '.join(unsaid)}: {options} would leave out every one"
        )
    return None

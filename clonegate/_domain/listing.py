"""The listing port: a forge adapter turns a :class:`Source` into pages of
:class:`Listed` records (ADR 0023, issue 45).

A page carries what it listed and, side by side, one message per item the forge sent
that could not be read: a malformed item never hides the others. A listing that
fails part-way raises :class:`ListingError` after the pages it already gave, so the
caller keeps what was listed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Protocol

from .listed import Listed
from .sources import Source

__all__ = ["Lister", "ListingError", "Page", "WaitNote"]

# Called before each rate-limit wait: the reason in a few words, and the seconds.
WaitNote = Callable[[str, float], None]


class ListingError(Exception):
    """A listing that cannot go on: its message names the source and the reason,
    escaped (a server's words are hostile). Pages given before it stand."""


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a listing.

    Attributes:
      listed: the records read, in the forge's order.
      refused: one message per item that could not be read, escaped.
      capped: the forge stops answering here (GitHub's 1,000 search results) while it
        said more matched: the listing is not the whole of what matched.
      incomplete: the forge said its own answer was incomplete (a search timed out).
    """

    listed: tuple[Listed, ...]
    refused: tuple[str, ...] = ()
    capped: bool = False
    incomplete: bool = False


class Lister(Protocol):
    """A forge's listing adapter."""

    def pages(self, source: Source, *, deadline: float) -> AsyncIterator[Page]:
        """Every page of ``source``'s listing, each fetched once; rate limits are
        waited out (and announced) until trio time ``deadline``, past which the wait
        would run is a :class:`ListingError`."""
        ...

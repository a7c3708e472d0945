"""The listing producer: a run's entries (URLs and sources) as one async stream of
``str | Listed``, the sources listed at most ``listings`` at once while the
repositories already listed go on to be cloned (ADR 0023, issue 45).

- **Order is the entries' order**: a URL comes out where it was given, a source's
  records where the source was, in the forge's order. Later sources are listed ahead
  (up to ``listings`` at once), their pages held, a bounded number each, until their
  turn: the same entries give the same stream on every run, and a reader that stops
  reading stops the listings within those bounds (back-pressure, no unbounded queue).
- **Filters** apply to each source's records on their own (its own
  :class:`Selection`: ``limit`` is per source, like ``gh repo list --limit``), never
  to a URL given as such: the user named it. A selection that is full stops its
  listing: no page past it is fetched.
- **Failures are the listing's, not the run's**: a :class:`ListingError` (the source
  could not be listed, or not to the end), an item the forge sent that could not be
  read, a capped or incomplete search, each is one :meth:`ListingHooks.problem` line
  naming the source, and :attr:`ListingFeed.problems` counts them; what was listed
  before stays in the stream. Anything else (a bug) ends the stream with its error.
"""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace

import trio

from .._domain.filters import Selection
from .._domain.forge_tokens import ForgeTokens
from .._domain.listed import Listed
from .._domain.listing import Lister, ListingError, Page, WaitNote
from .._domain.sources import Source
from .options import Option, with_credentials

__all__ = [
    "LISTINGS_AT_ONCE",
    "ListerFor",
    "ListingFeed",
    "ListingHooks",
    "with_forge_tokens",
]

LISTINGS_AT_ONCE = 2  # sources listed at once: a forge's API is one host's, shared
# Pages a listing fetches ahead of the reader: one page is a forge's 100 records, so a
# few hundred records per source in memory at most, whatever the listing's length.
PAGES_AHEAD = 1
UNREAD_SAID = 10  # unread items of one source said one line each; the rest, counted

# A lister for one source, which announces its rate-limit waits through the note.
ListerFor = Callable[[Source, WaitNote], Lister]


logger = logging.getLogger("clonegate")


def _ignore(*_: object) -> None:
    return None


def _log_wait(source: Source, reason: str, seconds: float) -> None:
    logger.info("%s: waiting %.0f s for %s's rate limit (%s)", source, seconds, source.host, reason)


def _log_problem(source: Source, message: str) -> None:
    # Never silent: a caller that gives no hook still sees it (Python's last-resort
    # handler writes warnings to stderr).
    logger.warning("%s", message)


@dataclass(frozen=True, slots=True)
class ListingHooks:
    """What a listing tells its caller, as it happens (synchronous: never checkpoints).

    Attributes:
      waiting: ``(source, reason, seconds)`` before each rate-limit wait (default: an
        INFO log line of the ``clonegate`` logger).
      problem: ``(source, message)`` for each failure of a listing, each item it could
        not read, each capped or incomplete answer; the message is escaped (default: a
        WARNING log line, which Python shows on stderr without any logging set up).
      dropped: ``(source, record, reason)`` for each record the filters did not keep.
    """

    waiting: Callable[[Source, str, float], None] = _log_wait
    problem: Callable[[Source, str], None] = _log_problem
    dropped: Callable[[Source, Listed, str], None] = _ignore


class ListingFeed:
    """The entries of one run, their sources listed and filtered (see the module's text).

    ``lister_for`` makes the lister of one source; ``selection_for`` a fresh
    :class:`Selection` (the run's filters) for each. ``deadline`` (trio time) bounds
    the rate-limit waits (none by default: a run waits a limit out, it never fails
    for one).
    """

    def __init__(
        self,
        entries: Iterable[str | Source],
        *,
        lister_for: ListerFor,
        selection_for: Callable[[], Selection],
        listings: int = LISTINGS_AT_ONCE,
        hooks: ListingHooks | None = None,
        deadline: float = math.inf,
    ) -> None:
        if type(listings) is not int or listings < 1:
            raise ValueError(f"listings at once must be at least 1, not {listings!r}")
        self._entries = entries
        self._lister_for = lister_for
        self._selection_for = selection_for
        self._listings = listings
        self._hooks = hooks if hooks is not None else ListingHooks()
        self._deadline = deadline
        self.problems = 0  # problem lines said so far
        self.listed = 0  # records the sources gave (kept or not)
        self.kept = 0  # records the filters kept, now in the stream

    @asynccontextmanager
    async def open(self) -> AsyncIterator[trio.MemoryReceiveChannel[str | Listed]]:
        """The stream, read as the reader goes; leaving the block stops every listing.

        The stream ends after the last entry; the listings run in this block's own
        tasks, so a reader that stops early (a signal, ``--limit``) cancels them."""
        send, receive = trio.open_memory_channel[str | Listed](0)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._run, send)
            async with receive:
                yield receive
            nursery.cancel_scope.cancel()

    async def _run(self, send: trio.MemorySendChannel[str | Listed]) -> None:
        """Start the listings in order (at most ``listings`` at once), and hand on
        every entry's records in order, from a second task."""
        # Each source's pages come through a channel of its own, in entry order;
        # ``turns`` holds what comes next, bounded: a list of many sources is read
        # only as far as the listings can go.
        turns_in, turns = trio.open_memory_channel[str | trio.MemoryReceiveChannel[Page]](
            self._listings
        )
        slots = trio.Semaphore(self._listings)
        async with send, trio.open_nursery() as nursery:
            nursery.start_soon(self._hand_on, turns, send)
            async with turns_in:
                for entry in self._entries:
                    if isinstance(entry, str):
                        await turns_in.send(entry)
                        continue
                    await slots.acquire()
                    pages_in, pages = trio.open_memory_channel[Page](PAGES_AHEAD)
                    nursery.start_soon(self._list, entry, pages_in, slots)
                    await turns_in.send(pages)

    async def _hand_on(
        self,
        turns: trio.MemoryReceiveChannel[str | trio.MemoryReceiveChannel[Page]],
        send: trio.MemorySendChannel[str | Listed],
    ) -> None:
        async with turns:
            async for turn in turns:
                if isinstance(turn, str):
                    await send.send(turn)
                    continue
                async with turn:
                    async for page in turn:
                        for record in page.listed:
                            await send.send(record)

    async def _list(
        self, source: Source, pages_in: trio.MemorySendChannel[Page], slots: trio.Semaphore
    ) -> None:
        """One source's listing, its records filtered, its pages handed on; its slot
        given back when the listing has nothing more to fetch."""
        try:
            async with pages_in:
                await self._pages(source, pages_in)
        finally:
            slots.release()

    async def _pages(self, source: Source, pages_in: trio.MemorySendChannel[Page]) -> None:
        selection = self._selection_for()
        unread = 0  # items of this source the forge sent that could not be read
        try:
            lister = self._lister_for(source, self._waiting(source))
            pages = lister.pages(source, deadline=self._deadline)
            try:
                async for page in pages:
                    kept = self._kept(source, page, selection)
                    unread += self._say_problems(source, page, unread, full=selection.full)
                    await pages_in.send(Page(kept))
                    if selection.full:
                        return  # the limit is reached: no further page is fetched
            finally:
                await _closed(pages)
        except ListingError as exc:
            self._problem(source, str(exc))
        finally:
            if unread > UNREAD_SAID:
                self._hooks.problem(
                    source, f"{source}: {unread - UNREAD_SAID} more items could not be read"
                )

    def _kept(self, source: Source, page: Page, selection: Selection) -> tuple[Listed, ...]:
        kept = []
        for record in page.listed:
            if selection.full:
                break  # the rest of the page is past the limit: not offered, not said
            self.listed += 1
            reason = selection.offer(record)
            if reason is None:
                # Which forge listed it goes with it (the report's, the store's).
                forge = record.forge if record.forge is not None else source.forge
                kept.append(record if record.forge is forge else replace(record, forge=forge))
            else:
                self._hooks.dropped(source, record, reason)
        self.kept += len(kept)
        return tuple(kept)

    def _say_problems(self, source: Source, page: Page, unread: int, *, full: bool) -> int:
        """The page's unread items (the first ``UNREAD_SAID`` of the source one line
        each, the rest counted: a forge sending a million bad items says one more
        line), an incomplete answer, and a capped one unless the limit was reached:
        then nothing the forge held back could have been kept. Returns the unread."""
        for number, refused in enumerate(page.refused, unread + 1):
            if number <= UNREAD_SAID:
                self._problem(source, refused)
            else:
                self.problems += 1
        if page.capped and not full:
            self._problem(
                source,
                f"{source}: the forge gives no more results than these, though more"
                " matched: the list is not the whole search (narrow the query)",
            )
        if page.incomplete:
            self._problem(source, f"{source}: the forge says its answer is incomplete")
        return len(page.refused)

    def _problem(self, source: Source, message: str) -> None:
        self.problems += 1
        self._hooks.problem(source, message)

    def _waiting(self, source: Source) -> WaitNote:
        def note(reason: str, seconds: float) -> None:
            self._hooks.waiting(source, reason, seconds)

        return note


async def _closed(pages: AsyncIterator[Page]) -> None:
    """An adapter's generator closed now (its request in flight, its connection), not
    when the garbage collector finds it: a listing stopped by ``--limit`` ends here."""
    aclose = getattr(pages, "aclose", None)
    if aclose is not None:
        await aclose()


def with_forge_tokens(tokens: ForgeTokens) -> Option:
    """The clone credentials of the forge tokens (``GH_TOKEN``...), each bound to its
    forge's clone host as ADR 0013 binds every credential: the repositories a listing
    gives are cloned with the token that listed them, and no other host sees it.
    Given before the caller's own credentials, so an explicit token for the same host
    wins."""
    return with_credentials(tokens.clone)

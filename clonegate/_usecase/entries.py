"""What a batch reads its lines from: URLs and listed repositories, from a plain
iterable or an async one (a forge's listing still fetching pages), one at a time."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TypeAlias

import trio

from .._domain.listed import Listed

__all__ = ["END", "End", "Entries", "Entry", "EntrySource"]

# One line of a batch: a URL (or what stands for one), or a repository a listing found.
Entry: TypeAlias = str | Listed
EntrySource: TypeAlias = Iterable[Entry] | AsyncIterable[Entry]


class End:
    """What :meth:`Entries.next` returns once the source has ended: not None, which a
    source might yield by mistake (the caller's error, not the end of the list)."""


END = End()


class Entries:
    """Reads ``source`` one entry per :meth:`next`, never ahead: what is not asked for
    is not read, so an async source (a listing) is held back by the batch's room."""

    def __init__(self, source: EntrySource) -> None:
        # An async source is read as one even if it can be iterated both ways.
        self._async: AsyncIterator[Entry] | None = None
        self._sync: Iterator[Entry] | None = None
        if isinstance(source, AsyncIterable):
            self._async = aiter(source)
        else:
            self._sync = iter(source)

    async def next(self) -> Entry | End:
        """The next entry, or :data:`END` once the source has ended. Always a checkpoint, even
        with an async source that is not (a generator over a list). What the source
        raises comes out as itself; a line that is neither text nor a :class:`Listed`
        (the caller's mistake) is a TypeError, raised as the source's."""
        await trio.lowlevel.checkpoint()
        if self._async is None:
            assert self._sync is not None
            entry = next(self._sync, END)
        else:
            try:
                entry = await anext(self._async)
            except StopAsyncIteration:
                return END
        if not isinstance(entry, str | Listed | End):
            raise TypeError(f"a line is a str or a Listed, not a {type(entry).__name__}")
        return entry

    async def aclose(self) -> None:
        """Finalize an async generator given as the source (its ``finally`` blocks run
        now, in this task, not whenever the garbage collector gets to it); any other
        source is the caller's to close (a channel's sender may still want to know
        that nobody reads). Always a schedule point, never a cancel point of its own:
        it runs in ``finally``, where a Cancelled of its own would replace the error
        on its way out."""
        if inspect.isasyncgen(self._async):
            await self._async.aclose()
        await trio.lowlevel.cancel_shielded_checkpoint()

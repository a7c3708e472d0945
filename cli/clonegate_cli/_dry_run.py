"""``analyze --dry-run`` and what ``submit`` queues: the run's entries resolved (its
sources listed, their records filtered) and written as they come, nothing cloned
(ADR 0023).

One line per repository, in the entries' order: its URL (a listed repository's clone
URL), or, as JSON, ``{"url": ..., "listed": {...}}`` with the listing's metadata
(``listed`` only for a listed one). Everything a server named is escaped: a URL as
:func:`clonegate.visible` shows it, JSON with every control character escaped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import trio

from clonegate import to_json, visible
from clonegate.sources import Listed

from ._json_text import safe_json
from ._listing import Listing
from ._progress import Progress, stderr_is_terminal
from ._run import (
    EXIT_BROKEN_PIPE,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_OUTPUT,
    Format,
    configure_logging,
    find_exception,
    results_stream,
)
from ._stderr import Diagnostics
from ._writer import OutputError, ResultsWriter

__all__ = ["dry_run", "entry_line", "resolved"]

_DRAIN_BOUND = 3.0  # seconds stderr's reader gets at the end: one who never reads cannot hold it


def entry_line(entry: str | Listed, as_json: bool) -> str:
    """One repository of the resolved list, as ``--dry-run`` prints it."""
    url = entry.clone_url if isinstance(entry, Listed) else entry
    if not as_json:
        return visible(url) + "\n"
    document: dict[str, object] = {"url": url}
    if isinstance(entry, Listed):
        document["listed"] = to_json(entry)
    return safe_json(document)


@asynccontextmanager
async def resolved(
    listing: Listing, progress: Progress
) -> AsyncIterator[trio.MemoryReceiveChannel[str | Listed]]:
    """The run's entries as they are listed, what the listing says said through
    ``progress``; leaving the block stops the listings."""
    listing.say = lambda line, warning: progress.say(line, warning=warning)
    async with listing.feed().open() as entries:
        yield entries


def dry_run(listing: Listing, fmt: Format | None, output: Path | None) -> int:
    """Print the resolved list; exit 1 if a listing failed (what it listed is printed)."""
    stderr = Diagnostics()
    configure_logging(listing.verbose, listing.quiet, stderr)
    progress = Progress(stderr_is_terminal(), False, listing.verbose, stderr)
    as_json = fmt in (Format.json, Format.jsonl)
    with results_stream(output) as stream:
        try:
            return trio.run(_print, listing, progress, ResultsWriter(stream), as_json)
        except BaseException as exc:
            code = _ended(exc, progress, output)
            if code is None:
                raise
            return code


async def _print(listing: Listing, progress: Progress, writer: ResultsWriter, as_json: bool) -> int:
    printed = 0
    async with trio.open_nursery() as output:
        output.start_soon(writer.run)
        async with resolved(listing, progress) as entries:
            async for entry in entries:
                await writer.write(entry_line(entry, as_json), reports=1)
                printed += 1
        writer.close()
    writer.abandon()
    if not listing.quiet:
        progress.say(f"clonegate: {printed} repositories; nothing was cloned (--dry-run)")
    return EXIT_FAILED if listing.problems else EXIT_OK


def _ended(exc: BaseException, progress: Progress, output: Path | None) -> int | None:
    """The exit status of a dry run that ended early, or None for a bug (raised)."""
    unwritten = find_exception(exc, OutputError)
    if unwritten is not None:
        where = "stdout" if output is None else visible(str(output))
        progress.say(f"clonegate: error: cannot write to {where}: {unwritten.strerror}")
        return EXIT_OUTPUT
    if find_exception(exc, BrokenPipeError) is not None:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    if find_exception(exc, KeyboardInterrupt) is not None:
        progress.say("clonegate: interrupted")
        return EXIT_INTERRUPTED
    return None

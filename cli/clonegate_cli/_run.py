"""One batch from the command line: progress, results in the chosen format, signals."""

from __future__ import annotations

import enum
import logging
import math
import os
import signal
import sys
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, TypeVar

import trio

from clonegate import BatchSummary, RepositoryReport, visible, with_event_hook
from clonegate.sources import Listed
from clonegate.store import StoreError

from ._output import host_limits_line, json_document, jsonl_line, summary_line, table_text
from ._progress import Progress, stderr_is_terminal
from ._setup import Setup, SetupError
from ._stderr import Diagnostics
from ._store_options import StoreFlags, with_store
from ._writer import OutputError, ResultsWriter

if TYPE_CHECKING:
    import typer

    from ._listing import Listing

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_BY_SIGNAL",
    "EXIT_HUNG_UP",
    "EXIT_INTERRUPTED",
    "EXIT_OUTPUT",
    "EXIT_STORE",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Format",
    "configure_logging",
    "results_stdout",
    "results_stream",
    "run_batch",
    "usage_error",
]

E = TypeVar("E", bound=BaseException)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_STORE = 0, 1, 2, 4
EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_TERMINATED = 141, 130, 143  # 128 + signal
EXIT_HUNG_UP = 129
# The results cannot be written (a full disk or device, a closed stdout): like a store
# that cannot be written, what the run found is lost, so the same status. A reader who
# goes away (EPIPE) is not an error: that stays 141, quietly.
EXIT_OUTPUT = EXIT_STORE
_STOPPED_BY = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}
EXIT_BY_SIGNAL = {
    signal.SIGINT: EXIT_INTERRUPTED,
    signal.SIGTERM: EXIT_TERMINATED,
    signal.SIGHUP: EXIT_HUNG_UP,
}
# Seconds a stopped run waits for its reader to take what finished: one who stopped
# reading (a full pipe) cannot hold the exit.
FLUSH_AFTER_SIGNAL = 3.0


class Format(enum.StrEnum):
    table = "table"
    json = "json"
    jsonl = "jsonl"


def usage_error(message: str) -> typer.Exit:
    """Exit 2 with ``message`` on stderr, to raise. Typer is imported here, on this
    path only: a plain ``analyze`` runs without it (``_plain``, issue 47)."""
    import typer

    typer.echo(f"clonegate: error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def run_batch(
    urls: list[str] | Listing,
    setup: Setup,
    output_format: Format | None,
    output: Path | None,
    verbose: bool,
    quiet: bool,
    store: StoreFlags | None = None,
) -> int:
    stderr = Diagnostics()
    configure_logging(verbose, quiet, stderr)
    with results_stream(output) as stream:
        interactive = output is None and sys.stdout.isatty()
        fmt = output_format or (Format.table if interactive else Format.jsonl)
        terminal = stderr_is_terminal()
        live = terminal and not quiet
        total = len(urls) if isinstance(urls, list) else None  # a listing's: not known
        progress = Progress(terminal, live, verbose, stderr, total=total)
        run = _Run(urls, setup, fmt, stream, progress, quiet, store)
        try:
            return trio.run(run.main)
        except BaseException as exc:
            refused = find_exception(exc, SetupError)
            if refused is not None:
                progress.say(f"clonegate: error: {visible(str(refused))}")
                return EXIT_USAGE
            failed = find_exception(exc, StoreError)
            if failed is not None:
                # What was written stays written; the reports already printed are out.
                progress.say(f"clonegate: error: {visible(str(failed))}")
                return EXIT_STORE
            unwritten = find_exception(exc, OutputError)
            if unwritten is not None:
                where = "stdout" if output is None else visible(str(output))
                progress.say(
                    f"clonegate: error: cannot write the results to {where}: "
                    f"{unwritten.strerror}; every clone was stopped and removed"
                )
                return EXIT_OUTPUT
            if _only(exc, BrokenPipeError):
                # The reader went away (`| head`): stop quietly, like any Unix filter,
                # and keep Python from complaining again when it flushes stdout at exit.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return EXIT_BROKEN_PIPE
            if _only(exc, KeyboardInterrupt):  # a second Ctrl-C, during the clean-up
                progress.say("clonegate: interrupted")
                return EXIT_INTERRUPTED
            raise


def configure_logging(
    verbose: bool, quiet: bool, stderr: TextIO | Diagnostics | None = None
) -> None:
    """Log lines on stderr (or ``stderr``) at the level -v/-q ask for, every one shown
    escaped."""
    handler = logging.StreamHandler(stderr or sys.stderr)
    handler.setFormatter(_VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(
        level=logging.ERROR if quiet else logging.INFO if verbose else logging.WARNING,
        handlers=[handler],
    )


class _VisibleFormatter(logging.Formatter):
    """Log lines with every control character and escape sequence shown escaped: a
    message or traceback may quote what a server sent."""

    def format(self, record: logging.LogRecord) -> str:
        return "\n".join(visible(line) for line in super().format(record).split("\n"))


@dataclass
class _Run:
    """One batch from the command line: results written as they come, or at the end."""

    urls: list[str] | Listing  # URLs, or entries that list sources
    setup: Setup
    fmt: Format
    stream: TextIO
    progress: Progress
    quiet: bool
    store: StoreFlags | None = None
    reports: list[RepositoryReport] = field(default_factory=list)
    stopped_by: signal.Signals | None = None  # the signal that stopped the batch
    _document_queued: bool = False  # the table or JSON document is in the writer's hands
    _flush_deadline: float = math.inf  # after a signal: results and stderr written by then

    async def main(self) -> int:
        stderr = self.progress.stderr
        async with trio.open_nursery() as diagnostics:
            if stderr is not None:
                # Started before the use case is made: it logs (the memory budget at
                # -v, issue 46) as it is made, and stderr may be a pipe nobody reads.
                await diagnostics.start(stderr.run)
            code = await self._batch(with_store(self.store, self.setup))
            if stderr is not None:
                # After a signal, within the results' bound: a stderr nobody reads
                # cannot hold the exit either.
                with trio.move_on_at(self._flush_deadline):
                    await stderr.drain()
                stderr.abandon()
            diagnostics.cancel_scope.cancel()
        return code

    async def _batch(self, setup: Setup) -> int:
        summary = BatchSummary()  # if a signal comes before the batch has begun
        # Output goes through a task of its own: a reader who stops reading holds that
        # task, never the event loop, so a signal is always received (issue 38).
        writer = ResultsWriter(self.stream)
        # JSON lines on the terminal the live display is drawn on go above it (issue 44).
        above = self.fmt is Format.jsonl and self.progress.shares_terminal(self.stream)
        async with (
            setup.open(with_event_hook(self.progress.on_event)) as uc,
            trio.open_nursery() as nursery,
        ):
            nursery.start_soon(self._on_signal, nursery.cancel_scope.cancel)
            if self.progress.live:
                nursery.start_soon(self.progress.run, uc)
            async with trio.open_nursery() as output:
                output.start_soon(writer.run)
                async with self._lines() as lines, uc.analyze_many(lines) as batch:
                    try:
                        async for report in batch:
                            if above:
                                self.progress.above(jsonl_line(report))
                            elif self.fmt is Format.jsonl:
                                await writer.write(jsonl_line(report), reports=1)
                            else:
                                self.reports.append(report)
                    finally:
                        # Read now: what finished, even when a signal cut the batch short.
                        summary = batch.summary
                await self.progress.finish(summary.elapsed)  # its last frame, above the table
                await self._write_document(writer, summary)
                writer.close()  # the writer ends once the rest is written
            nursery.cancel_scope.cancel()
        # After a signal too: which hosts pushed back is part of what the run found.
        lowered = host_limits_line(uc.host_statistics())
        dropped = self.progress.stderr.dropped if self.progress.stderr is not None else 0
        if dropped:
            self.progress.say(f"clonegate: {dropped} lines not shown: stderr was not read")
        if self.fmt is Format.jsonl and not self.quiet:
            self.progress.say(summary_line(summary))
        if lowered is not None and not self.quiet:
            self.progress.say(lowered)
        if self.stopped_by is None:
            writer.abandon()  # everything was written
            all_ok = summary.repositories == summary.ok and not self._listing_failed()
            return EXIT_OK if all_ok and summary.repositories else EXIT_FAILED
        return await self._stopped(self.stopped_by, writer, summary)

    async def _stopped(
        self, stopped_by: signal.Signals, writer: ResultsWriter, summary: BatchSummary
    ) -> int:
        """The end of a run a signal stopped: what finished is written (a table or a
        JSON document as well), if the reader takes it within a bound: one who stopped
        reading (a full pipe) cannot hold the exit."""
        self._flush_deadline = trio.current_time() + FLUSH_AFTER_SIGNAL
        try:
            with trio.move_on_at(self._flush_deadline):
                async with trio.open_nursery() as output:
                    output.start_soon(writer.run)
                    if not self._document_queued:
                        await self._write_document(writer, summary)
                    writer.close()
        except* OSError:
            pass  # the reader or the terminal is gone (EPIPE, EIO): counted below
        unwritten = writer.abandon() + (0 if self._document_queued else len(self.reports))
        self.progress.say(
            f"clonegate: {_STOPPED_BY[stopped_by]}; every clone was stopped and removed; "
            + self._unfinished(summary)
            + (f"; {unwritten} reports not written: the output was not read" if unwritten else "")
        )
        return EXIT_BY_SIGNAL[stopped_by]

    def _listing_failed(self) -> bool:
        """Whether a listing failed, or left something out (each said on its line):
        the run is then "some failed" (exit 1), whatever became of what was listed."""
        if isinstance(self.urls, list) or not self.urls.problems:
            return False
        self.progress.say(
            f"clonegate: {self.urls.problems} listing problems (above): the list is not "
            "whole; what was listed was analyzed"
        )
        return True

    def _unfinished(self, summary: BatchSummary) -> str:
        if isinstance(self.urls, list):
            total = len(self.urls)
            return f"{total - summary.repositories} of {total} repositories not finished"
        return f"{summary.repositories} repositories finished; the listing was stopped"

    @asynccontextmanager
    async def _lines(self) -> AsyncIterator[Iterable[str] | AsyncIterable[str | Listed]]:
        """What the batch reads: the URLs, or the stream of a listing (its sources listed
        while the first repositories are cloned), its lines said through the progress."""
        if isinstance(self.urls, list):
            yield self.urls
            return
        from ._dry_run import resolved

        async with resolved(self.urls, self.progress) as entries:
            yield entries

    async def _write_document(self, writer: ResultsWriter, summary: BatchSummary) -> None:
        """Queue the document of a table or json run (a jsonl run has none)."""
        if self.fmt is Format.json:
            await writer.write(json_document(self.reports, summary), len(self.reports))
        elif self.fmt is Format.table:
            table = table_text(self.reports, summary, terminal=self._terminal())
            await writer.write(table, len(self.reports))
        self._document_queued = True

    def _terminal(self) -> bool:
        try:
            return self.stream.isatty()
        except ValueError:  # closed
            return False

    async def _on_signal(self, cancel: Callable[[], None]) -> None:
        # Ctrl-C, SIGTERM and SIGHUP (a closed terminal) stop the batch the same way:
        # clones killed and removed, then what finished is written. The receiver
        # closes after the first signal, so a second Ctrl-C interrupts the clean-up
        # itself (KeyboardInterrupt).
        with trio.open_signal_receiver(*_STOPPED_BY) as signals:
            async for signum in signals:
                self.stopped_by = signal.Signals(signum)
                break
        cancel()


def results_stdout() -> TextIO:
    """stdout, where results go; exit 4 with one line when it is closed (``>&-``):
    there is nowhere to write them, so nothing is started."""
    if sys.stdout is None:
        import typer  # as usage_error's

        typer.echo(
            "clonegate: error: stdout is closed: there is nowhere to write the results",
            err=True,
        )
        raise typer.Exit(EXIT_OUTPUT)
    return sys.stdout


@contextmanager
def results_stream(output: Path | None) -> Iterator[TextIO]:
    if output is None:
        yield results_stdout()
        return
    try:
        stream = output.open("w")
    except OSError as exc:
        raise usage_error(f"cannot write {output}: {exc.strerror}") from None
    with stream:
        yield stream


def find_exception(exc: BaseException, kind: type[E] | tuple[type[E], ...]) -> E | None:
    """``exc`` if it is a ``kind``, or the first ``kind`` in its group (at any depth)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := find_exception(inner, kind)) is not None:
                return found
    return None


def _only(exc: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``exc`` is ``kind``, or a group of nothing but ``kind`` and cancellations."""
    if isinstance(exc, kind):
        return True
    if isinstance(exc, BaseExceptionGroup):
        return all(_only(e, kind) or isinstance(e, trio.Cancelled) for e in exc.exceptions)
    return False

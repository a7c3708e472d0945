"""One batch from the command line: progress, results in the chosen format, signals."""

from __future__ import annotations

import enum
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO, TypeVar

import trio
import typer

from clonegate import (
    AnalyzeUseCase,
    BatchSummary,
    Option,
    RepositoryReport,
    StoreError,
    visible,
    with_event_hook,
)

from ._output import summary_line, write_json, write_jsonl, write_table
from ._progress import Progress, stderr_is_terminal
from ._store_options import StoreSettings, store_options

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_STORE",
    "EXIT_TERMINATED",
    "EXIT_USAGE",
    "Format",
    "configure_logging",
    "run_batch",
    "usage_error",
]

E = TypeVar("E", bound=BaseException)
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_STORE = 0, 1, 2, 4
EXIT_BROKEN_PIPE, EXIT_INTERRUPTED, EXIT_TERMINATED = 141, 130, 143  # 128 + signal


class Format(enum.StrEnum):
    table = "table"
    json = "json"
    jsonl = "jsonl"


def usage_error(message: str) -> typer.Exit:
    typer.echo(f"clonegate: error: {message}", err=True)
    return typer.Exit(EXIT_USAGE)


def run_batch(
    urls: list[str],
    options: list[Option],
    output_format: Format | None,
    output: Path | None,
    verbose: bool,
    quiet: bool,
    store: StoreSettings | None = None,
) -> int:
    configure_logging(verbose, quiet)
    with _results_stream(output) as stream:
        interactive = output is None and sys.stdout.isatty()
        fmt = output_format or (Format.table if interactive else Format.jsonl)
        terminal = stderr_is_terminal()
        progress = Progress(terminal, live=terminal and not quiet, verbose=verbose)
        run = _Run(urls, options, fmt, stream, progress, quiet, store)
        try:
            return trio.run(run.main)
        except BaseException as exc:
            failed = find_exception(exc, StoreError)
            if failed is not None:
                # What was written stays written; the reports already printed are out.
                progress.say(f"clonegate: error: {visible(str(failed))}")
                return EXIT_STORE
            if _only(exc, BrokenPipeError):
                # The reader went away (`| head`): stop quietly, like any Unix filter,
                # and keep Python from complaining again when it flushes stdout at exit.
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return EXIT_BROKEN_PIPE
            if _only(exc, KeyboardInterrupt):  # a second Ctrl-C, during the clean-up
                progress.say("clonegate: interrupted")
                return EXIT_INTERRUPTED
            raise


def configure_logging(verbose: bool, quiet: bool) -> None:
    """Log lines on stderr at the level -v/-q ask for, every one shown escaped."""
    handler = logging.StreamHandler(sys.stderr)
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

    urls: list[str]
    options: list[Option]
    fmt: Format
    stream: TextIO
    progress: Progress
    quiet: bool
    store: StoreSettings | None = None
    reports: list[RepositoryReport] = field(default_factory=list)
    stopped_by: int | None = None  # the signal that stopped the batch

    async def main(self) -> int:
        async with store_options(self.store) as options:
            return await self._batch([*self.options, *options])

    async def _batch(self, options: list[Option]) -> int:
        uc = AnalyzeUseCase(*options, with_event_hook(self.progress.on_event))
        summary = BatchSummary()  # if a signal comes before the batch has begun
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._on_signal, nursery.cancel_scope.cancel)
            if self.progress.live:
                nursery.start_soon(self.progress.run, uc)
            async with uc.analyze_many(self.urls) as batch:
                try:
                    async for report in batch:
                        if self.fmt is Format.jsonl:
                            write_jsonl(self.stream, report)
                        else:
                            self.reports.append(report)
                finally:
                    # Read now: what finished, even when a signal cut the batch short.
                    summary = batch.summary
            nursery.cancel_scope.cancel()
        # A table or a JSON document shows what finished before a signal, too.
        if self.fmt is Format.json:
            write_json(self.stream, self.reports, summary)
        elif self.fmt is Format.table:
            write_table(self.stream, self.reports, summary)
        elif not self.quiet:
            self.progress.say(summary_line(summary))
        if self.stopped_by is not None:
            name = "interrupted" if self.stopped_by == signal.SIGINT else "terminated"
            self.progress.say(
                f"clonegate: {name}; every clone was stopped and removed; "
                f"{len(self.urls) - summary.repositories} of {len(self.urls)} repositories "
                "not finished"
            )
            return EXIT_INTERRUPTED if self.stopped_by == signal.SIGINT else EXIT_TERMINATED
        all_ok = summary.repositories == summary.ok
        return EXIT_OK if all_ok and summary.repositories else EXIT_FAILED

    async def _on_signal(self, cancel: Callable[[], None]) -> None:
        # Ctrl-C and SIGTERM stop the batch the same way: clones killed and removed,
        # then what finished is written. The receiver closes after the first signal,
        # so a second Ctrl-C interrupts the clean-up itself (KeyboardInterrupt).
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for signum in signals:
                self.stopped_by = signum
                break
        cancel()


@contextmanager
def _results_stream(output: Path | None) -> Iterator[TextIO]:
    if output is None:
        yield sys.stdout
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

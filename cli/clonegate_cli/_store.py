"""Reading the result store: runs, history, diff, export, check (ADR 0016).

Every command opens the store read-only. A damaged row is left out with one line on
stderr naming it, and the command goes on; its exit status is then 1. Nothing read
from the store reaches a terminal or a spreadsheet unescaped (ADR 0012).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO, TypeVar

import trio
import typer

import clonegate.store  # lazy attributes: only these commands load the store
from clonegate import RepositoryReport, to_json, visible
from clonegate.store import DamagedRow, StoreError

from ._run import EXIT_FAILED, EXIT_OUTPUT, EXIT_STORE, results_stdout, usage_error
from ._typer_options import DbOption

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

T = TypeVar("T")
Reader = Callable[["clonegate.store.StoreReader", list[DamagedRow]], Awaitable[None]]

# A reading command that left damaged rows out: what it wrote is true but incomplete.
EXIT_DAMAGED = EXIT_FAILED

RUN_HELP = "A run id, or 'latest'."
RunArgument = Annotated[str, typer.Argument(metavar="RUN", help=RUN_HELP)]


def runs(
    db: DbOption = None,
    limit: Annotated[int, typer.Option(min=1, help="Newest N runs.", metavar="N")] = 20,
) -> None:
    """List the stored runs, newest first: id, start, end, and counts."""

    async def show(store: clonegate.store.StoreReader, damaged: list[DamagedRow]) -> None:
        table = _table("run", "started (UTC)", "finished", "repositories", "ok", "reused", "tests")
        for run in await store.runs(limit, damaged=damaged):
            summary = run.summary or {}
            table.add_row(
                *_cells(
                    run.id,
                    run.started_at,
                    run.finished_at or "(not finished)",
                    summary.get("repositories", ""),
                    summary.get("ok", ""),
                    summary.get("reused", ""),
                    summary.get("tests", ""),
                )
            )
        _print(table)

    _with_store(db, show)


def history(
    url: Annotated[str, typer.Argument(metavar="URL")],
    db: DbOption = None,
    as_jsonl: Annotated[bool, typer.Option("--jsonl", help="JSON lines, not a table.")] = False,
) -> None:
    """What each run found for one repository: status, commit, test counts, over time."""

    async def show(store: clonegate.store.StoreReader, damaged: list[DamagedRow]) -> None:
        entries = await store.history(url, damaged=damaged)
        if as_jsonl:
            for entry in entries:
                _line(sys.stdout, dataclasses.asdict(entry))
            return
        columns = ("run", "started (UTC)", "status", "commit", "files", "tests", "not read")
        # When the forge saw the last push, for a repository a listing gave (ADR 0023).
        listed = any(e.pushed_at is not None for e in entries)
        table = _table(*columns, *(("pushed (UTC)",) if listed else ()), "")
        for e in entries:
            note = "reused" if e.reused else (e.error_kind or "")
            commit = (e.commit or "")[:10]
            counts = (e.test_files, e.tests, e.unread_files)
            pushed = ((e.pushed_at or "")[:19].replace("T", " "),) if listed else ()
            table.add_row(*_cells(e.run_id, e.started_at, e.status, commit, *counts, *pushed, note))
        _print(table)

    _with_store(db, show)


def diff(
    run_a: Annotated[str, typer.Argument(metavar="RUN_A")],
    run_b: Annotated[str, typer.Argument(metavar="RUN_B")],
    db: DbOption = None,
    as_jsonl: Annotated[bool, typer.Option("--jsonl", help="JSON lines, not text.")] = False,
) -> None:
    """Repositories whose status or tests changed between two runs, with the tests
    added (+) and removed (-) per file."""

    async def show(store: clonegate.store.StoreReader, damaged: list[DamagedRow]) -> None:
        a, b = await _run_id(store, run_a), await _run_id(store, run_b)
        out = sys.stdout
        for change in await store.diff(a, b, damaged=damaged):
            if as_jsonl:
                _line(out, dataclasses.asdict(change))
                continue
            # Every part escaped: a damaged or edited row can hold anything.
            status_a, status_b = visible(change.status_a or "-"), visible(change.status_b or "-")
            out.write(
                f"{visible(change.url)}: {status_a} -> {status_b}, "
                f"tests {_n(change.tests_a)} -> {_n(change.tests_b)}\n"
            )
            for sign, files in (("+", change.added), ("-", change.removed)):
                for path, tests in files.items():
                    for test in tests:
                        out.write(f"  {sign} {visible(path)}: {visible(test)}\n")

    _with_store(db, show)


def export(
    run: RunArgument,
    db: DbOption = None,
    output_format: Annotated[
        str, typer.Option("--format", help="jsonl or csv.", metavar="jsonl|csv")
    ] = "jsonl",
    tests: Annotated[
        bool, typer.Option("--tests", help="One record per test instead of per repository.")
    ] = False,
) -> None:
    """Write a stored run: one record per repository (as `analyze` prints them), or
    per test with --tests."""
    if output_format not in ("jsonl", "csv"):
        raise usage_error(f"--format must be jsonl or csv, got {output_format!r}")

    async def write(store: clonegate.store.StoreReader, damaged: list[DamagedRow]) -> None:
        run_id = await _run_id(store, run)
        reports = await store.reports(run_id, inventory=tests, damaged=damaged)
        records = _test_records(reports) if tests else (_flat(r) for r in reports)
        if output_format == "jsonl":
            for record in records:  # data as data: the JSON encoder escapes it
                _line(sys.stdout, record)
            return
        writer: Any = None
        for record in records:
            if writer is None:
                writer = csv.DictWriter(sys.stdout, fieldnames=list(record), lineterminator="\n")
                writer.writeheader()
            writer.writerow({name: _csv_cell(value) for name, value in record.items()})

    _with_store(db, write)


def check(db: DbOption = None) -> None:
    """List the store's damaged rows, one a line (read-only). Exit status 1 if any."""

    async def show(store: clonegate.store.StoreReader, damaged: list[DamagedRow]) -> None:
        found = await store.check()
        for damage in found:
            sys.stdout.write(visible(str(damage)) + "\n")
        count = f"{len(found)} damaged row{'s' * (len(found) != 1)}" if found else "no damaged rows"
        typer.echo(f"clonegate: {count} in {visible(str(store.path))}", err=True)
        if found:
            raise typer.Exit(EXIT_DAMAGED)

    _with_store(db, show)


# Spreadsheets run a cell that starts with one of these as a formula (OWASP, "CSV
# Injection"); tab and CR cannot start a cell here, escaped first, but are listed.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_cell(value: object) -> object:
    """A CSV cell a terminal shows and a spreadsheet opens as text: control characters
    escaped as the table does, and a leading ' before what would start a formula."""
    if isinstance(value, dict):  # ``ruby 34; php 2``: names from a report, escaped below
        value = "; ".join(f"{name} {count}" for name, count in value.items())
    if isinstance(value, list):  # phases: ``clone#1 2026-...+00:00/2026-...+00:00``
        value = "; ".join(_interval(phase) for phase in value)
    if not isinstance(value, str):
        return value  # numbers and booleans: ours, never a server's
    shown = visible(value)
    return f"'{shown}" if shown.startswith(_FORMULA_STARTS) else shown


def _interval(phase: dict[str, Any]) -> str:
    attempt = phase.get("attempt")
    name = phase["name"] if attempt is None else f"{phase['name']}#{attempt}"
    return f"{name} {phase['started']}/{phase['ended']}"


def _flat(report: RepositoryReport) -> dict[str, Any]:
    """A repository as one flat record (the JSON document's nested parts joined)."""
    document = to_json(report)
    error, ref, totals, listed = report.error, report.ref, report.analysis, document.get("listed")
    return {
        "index": report.index,
        "url": report.url,
        "status": str(report.status),
        "reused": report.reused,
        "error_kind": error.kind if error else "",
        "error": error.message if error else "",
        "branch": ref.branch if ref else "",
        "commit": ref.commit if ref else "",
        "committed_at": document["ref"]["committed_at"] if ref else "",
        "test_files": totals.test_files if totals else "",
        "tests": totals.tests if totals else "",
        "analyzer_version": totals.analyzer_version if totals else "",
        # Test files of languages and frameworks not read (ADR 0004): "0 tests" with
        # some here is not understood, not none. A mapping in JSON lines, text in CSV.
        "unread_files": totals.unread_files if totals else "",
        "unread": dict(totals.unread) if totals else {},
        # Clone attempts that failed and were tried again, oldest first (issue 43).
        "retries": len(report.attempts),
        "retry_errors": "; ".join(f"{a.kind}: {a.message}" for a in report.attempts),
        # When it began and ended on the wall clock, and each phase between (ADR 0020):
        # a list in JSON lines, ISO 8601 intervals in CSV. Empty: a line that never
        # started, or a report stored before phases were kept.
        "started_at": document["phases"][0]["started"] if report.phases else "",
        "finished_at": document["phases"][-1]["ended"] if report.phases else "",
        "phases": document.get("phases", []),
        # What the forge's listing said, for a line that came from one (ADR 0023).
        **{name: _said(listed, name) for name in _LISTED},
    }


# The listing's fields an export has, each "" for a line given as a URL.
_LISTED = ("forge", "full_name", "forge_id", "stars", "language", "archived", "fork", "pushed_at")


def _said(listed: dict[str, Any] | None, name: str) -> Any:
    value = None if listed is None else listed.get(name)
    return "" if value is None else value


def _test_records(reports: list[RepositoryReport]) -> Iterator[dict[str, Any]]:
    for report in reports:
        if report.inventory is None:
            continue
        for file in report.inventory.files:
            yield from _tests_of(report.url, file.path, file.framework, "", file)


def _tests_of(
    url: str, path: str, framework: str, chain: str, node: Any
) -> Iterator[dict[str, Any]]:
    for test in node.tests:
        yield {
            "url": url,
            "path": path,
            "framework": framework,
            "suite": chain,
            "test": test.name,
            "line": test.line,
            "status": str(test.status),
        }
    for suite in node.suites:
        inner = f"{chain} > {suite.name}" if chain else suite.name
        yield from _tests_of(url, path, framework, inner, suite)


async def _run_id(store: clonegate.store.StoreReader, text: str) -> int:
    """The run ``text`` names; a usage error (exit 2) naming it if there is none."""
    ids = await store.run_ids()
    where = visible(str(store.path))
    if text == "latest":
        if not ids:
            raise usage_error(f"the result store {where} has no runs: 'latest' names none")
        return ids[0]
    try:
        run_id = int(text)
    except ValueError:
        raise usage_error(
            f"{visible(repr(text))} is not a run id (a number, or 'latest')"
        ) from None
    if run_id not in ids:
        raise usage_error(f"there is no run {run_id} in the result store {where}")
    return run_id


def _with_store(db: Path | None, use: Reader, *, stdout: bool = True) -> None:
    """Run ``use`` on the store ``db`` opened read-only; ``stdout``: the answer goes
    there (not to a file), which must then be open."""
    if db is None:
        raise usage_error("no result store: give --db PATH or set CLONEGATE_DB")
    if stdout:
        results_stdout()
    damaged: list[DamagedRow] = []

    async def main() -> None:
        async with clonegate.store.open_store_reader(db) as store:
            await use(store, damaged)

    try:
        trio.run(main)
    except StoreError as exc:
        typer.echo(f"clonegate: error: {visible(str(exc))}", err=True)
        raise typer.Exit(EXIT_STORE) from None
    except BrokenPipeError:
        raise typer.Exit(141) from None
    except OSError as exc:  # the store's own failures are StoreErrors: this is stdout's
        typer.echo(f"clonegate: error: cannot write stdout: {exc.strerror}", err=True)
        raise typer.Exit(EXIT_OUTPUT) from None
    for damage in damaged:
        typer.echo(
            f"clonegate: left out a damaged row of {visible(str(db))}: {visible(str(damage))}",
            err=True,
        )
    if damaged:
        typer.echo("clonegate: `clonegate check` lists every damaged row", err=True)
        raise typer.Exit(EXIT_DAMAGED)


def _print(table: Table) -> None:
    from rich.console import Console

    Console().print(table)


def _table(*columns: str) -> Table:
    # Rich is imported when a table is drawn: `analyze` registers these commands too.
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for column in columns:
        table.add_column(column)
    return table


def _cells(*values: object) -> list[Text]:
    # Text, never markup: URLs, branch names and messages come from servers.
    from rich.text import Text

    return [Text(visible("" if v is None else str(v))) for v in values]


def _line(stream: TextIO, record: dict[str, Any]) -> None:
    stream.write(json.dumps(record) + "\n")


def _n(value: int | None) -> str:
    return "-" if value is None else visible(str(value))  # a count, unless the row was edited


def register(app: typer.Typer) -> None:
    for command in (runs, history, diff, export, check):
        app.command()(command)

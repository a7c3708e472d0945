"""Reading the result store: runs, history, diff, export (ADR 0016)."""

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

import clonegate  # the store through its lazy attributes: only these commands load it
from clonegate import RepositoryReport, StoreError, to_json, visible

from ._run import EXIT_STORE, usage_error
from ._store_options import DbOption

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

T = TypeVar("T")

RunArgument = Annotated[str, typer.Argument(metavar="RUN", help="A run id, or 'latest'.")]


def runs(
    db: DbOption = None,
    limit: Annotated[int, typer.Option(min=1, help="Newest N runs.", metavar="N")] = 20,
) -> None:
    """List the stored runs, newest first: id, start, end, and counts."""

    async def show(store: clonegate.SQLiteStore) -> None:
        table = _table("run", "started (UTC)", "finished", "repositories", "ok", "reused", "tests")
        for run in await store.runs(limit):
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

    async def show(store: clonegate.SQLiteStore) -> None:
        entries = await store.history(url)
        if as_jsonl:
            for entry in entries:
                _line(sys.stdout, dataclasses.asdict(entry))
            return
        table = _table("run", "started (UTC)", "status", "commit", "files", "tests", "")
        for e in entries:
            note = "reused" if e.reused else (e.error_kind or "")
            commit = (e.commit or "")[:10]
            table.add_row(
                *_cells(e.run_id, e.started_at, e.status, commit, e.test_files, e.tests, note)
            )
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

    async def show(store: clonegate.SQLiteStore) -> None:
        a, b = await _run_id(store, run_a), await _run_id(store, run_b)
        out = sys.stdout
        for change in await store.diff(a, b):
            if as_jsonl:
                _line(out, dataclasses.asdict(change))
                continue
            out.write(
                f"{visible(change.url)}: {change.status_a or '-'} -> {change.status_b or '-'}, "
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

    async def write(store: clonegate.SQLiteStore) -> None:
        reports = await store.reports(await _run_id(store, run), inventory=tests)
        records = _test_records(reports) if tests else (_flat(r) for r in reports)
        if output_format == "jsonl":
            for record in records:
                _line(sys.stdout, record)
            return
        writer: Any = None
        for record in records:
            if writer is None:
                writer = csv.DictWriter(sys.stdout, fieldnames=list(record), lineterminator="\n")
                writer.writeheader()
            writer.writerow(record)

    _with_store(db, write)


def _flat(report: RepositoryReport) -> dict[str, Any]:
    """A repository as one flat record (the JSON document's nested parts joined)."""
    document = to_json(report)
    error, ref, totals = report.error, report.ref, report.analysis
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
    }


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


async def _run_id(store: clonegate.SQLiteStore, text: str) -> int:
    if text == "latest":
        latest = await store.runs(1)
        if not latest:
            raise StoreError(f"the result store {store.path} has no runs")
        return latest[0].id
    try:
        return int(text)
    except ValueError:
        raise StoreError(f"{text!r} is not a run id (a number, or 'latest')") from None


def _with_store(db: Path | None, use: Callable[[clonegate.SQLiteStore], Awaitable[None]]) -> None:
    if db is None:
        raise usage_error("no result store: give --db PATH or set CLONEGATE_DB")

    async def main() -> None:
        async with clonegate.open_store(db, create=False) as store:
            await use(store)

    try:
        trio.run(main)
    except StoreError as exc:
        typer.echo(f"clonegate: error: {visible(str(exc))}", err=True)
        raise typer.Exit(EXIT_STORE) from None
    except BrokenPipeError:
        raise typer.Exit(141) from None


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
    return "-" if value is None else str(value)


def register(app: typer.Typer) -> None:
    for command in (runs, history, diff, export):
        app.command()(command)

"""``clonegate report``: a stored run as one document (issue 44, ADR 0020).

``--format json`` writes the run whole, what ``clonegate.store.RunReport`` holds: the
run (its start and end, options and summary), its events (the clone limit and memory
budget when it began, then each change), each repository with its phases and
attempts, and its tests by framework, language and status. ``--format html`` (the
default) draws the same run as one self-contained page (ADR 0022), with each
repository's inventory and, where the store has other runs, its tests over them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clonegate import to_json, visible

from ._json_text import safe_json
from ._run import EXIT_OUTPUT, usage_error
from ._store import RUN_HELP, _run_id, _with_store
from ._typer_options import DbOption, OutputOption

if TYPE_CHECKING:  # the store (and sqlite3) load only when a store command runs
    import clonegate.store
    from clonegate.store import DamagedRow

__all__ = ["FORMATS", "register", "report", "safe_json"]

FORMATS = ("html", "json")
_FORMAT_HELP = (
    "html: one self-contained page (timeline, charts, a table of the repositories); "
    "json: the run as one JSON document."
)


def report(
    run: Annotated[str, typer.Argument(metavar="[RUN]", help=RUN_HELP)] = "latest",
    db: DbOption = None,
    output_format: Annotated[
        str, typer.Option("--format", help=_FORMAT_HELP, metavar="|".join(FORMATS))
    ] = FORMATS[0],
    output: OutputOption = None,
    open_it: Annotated[
        bool, typer.Option("--open", help="Then open the written file in a browser (needs -o).")
    ] = False,
) -> None:
    """A stored run whole: summary, options, limits and their changes, each
    repository's phases and attempts on the wall clock, tests by framework, language
    and status."""
    if output_format not in FORMATS:
        raise usage_error(
            f"--format must be one of {', '.join(FORMATS)}, got {visible(repr(output_format))}"
        )
    if open_it and output is None:
        raise usage_error("--open needs -o FILE: a page written to stdout cannot be opened")

    async def write(store: clonegate.store.StoreReader, damaged: list[DamagedRow]) -> None:
        run_id = await _run_id(store, run)
        found = await store.run_report(run_id, damaged=damaged)
        if found is None:  # the run's own row is damaged: in ``damaged``, said after
            return
        if output_format == "json":
            text = safe_json(to_json(found))
        else:
            text = await _page(store, found, damaged)
        if output is None:
            sys.stdout.write(text)
            return
        try:
            _replace(output, text)
        except OSError as exc:
            where = visible(str(output))
            typer.echo(f"clonegate: error: cannot write {where}: {exc.strerror}", err=True)
            raise typer.Exit(EXIT_OUTPUT) from None

    _with_store(db, write, stdout=output is None)
    if open_it and output is not None:
        _open(output)


def _open(path: Path) -> None:
    """Show ``path`` in the user's browser, where one exists; else say where it is. The
    report is written either way: a machine without a browser is no failure."""
    import webbrowser

    if not webbrowser.open(path.resolve().as_uri()):
        shown = visible(str(path))
        typer.echo(f"clonegate: no browser to open the report; it is at {shown}", err=True)


async def _page(
    store: clonegate.store.StoreReader,
    found: clonegate.store.RunReport,
    damaged: list[DamagedRow],
) -> str:
    """The HTML page of ``found``: each repository's inventory read too, and its
    history when the store holds more than this run."""
    # Rows read again: a damaged one is named once, as the run's reading named it.
    again: list[DamagedRow] = []
    listed = await store.reports(found.run.id, inventory=True, damaged=again)
    inventories = {r.index: r.inventory for r in listed if r.inventory is not None}
    histories: dict[int, list[clonegate.store.HistoryEntry]] = {}
    if len(await store.run_ids()) > 1:
        for r in found.repositories:
            if r.duplicate_of is None:
                histories[r.index] = await store.history(r.url, damaged=again)
    damaged.extend(row for row in dict.fromkeys(again) if row not in damaged)
    from ._html_page import html_report  # here: `analyze` must not load the store's types

    return html_report(found, inventories, histories, damaged)


def _replace(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all: a reader (a browser, a notebook) never finds
    half a report, and an older one stays until the new one is complete."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        with partial.open("w") as stream:  # the umask's mode, as any file written
            stream.write(text)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def register(app: typer.Typer) -> None:
    app.command()(report)

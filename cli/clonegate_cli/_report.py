"""``clonegate report``: a stored run as one document (issue 44, ADR 0020).

``--format json`` writes the run whole, what ``clonegate.store.RunReport`` holds: the
run (its start and end, options and summary), its events (the clone limit and memory
budget when it began, then each change), each repository with its phases and
attempts, and its tests by framework, language and status. The HTML drawing of the
same data comes next (issue 44).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

import clonegate.store
from clonegate import to_json, visible
from clonegate.store import DamagedRow

from ._run import EXIT_OUTPUT, OutputOption, usage_error
from ._store import RUN_HELP, _run_id, _with_store
from ._store_options import DbOption

__all__ = ["FORMATS", "register", "report", "safe_json"]

# Escaped wherever they are in the document, as Go's encoding/json does: the text can
# then sit inside an HTML <script> element (the HTML report) and nothing a server
# named (a ``</script>`` in a test name) can end it. Still the same JSON to a reader.
_FOR_HTML = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026"})
FORMATS = ("json",)


def report(
    run: Annotated[str, typer.Argument(metavar="[RUN]", help=RUN_HELP)] = "latest",
    db: DbOption = None,
    output_format: Annotated[
        str, typer.Option("--format", help="json: the run as one JSON document.", metavar="json")
    ] = "json",
    output: OutputOption = None,
) -> None:
    """A stored run whole: summary, options, limits and their changes, each
    repository's phases and attempts on the wall clock, tests by framework, language
    and status."""
    if output_format not in FORMATS:
        raise usage_error(f"--format must be json, got {visible(repr(output_format))}")

    async def write(store: clonegate.store.StoreReader, damaged: list[DamagedRow]) -> None:
        run_id = await _run_id(store, run)
        found = await store.run_report(run_id, damaged=damaged)
        if found is None:  # the run's own row is damaged: in ``damaged``, said after
            return
        text = safe_json(to_json(found))
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


def safe_json(document: Any) -> str:
    """``document`` as one line of JSON, every control character and ``< > &``
    escaped (``\\u001b``, ``\\u003c``): text from servers is data wherever it lands."""
    return json.dumps(document, separators=(",", ":")).translate(_FOR_HTML) + "\n"


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

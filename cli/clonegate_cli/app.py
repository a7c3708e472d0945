"""The Typer application behind the ``clonegate`` command (ADR 0007)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from clonegate import RepositoryStatus, with_max_concurrent_clones

from . import _cluster, _demo, _report, _store
from ._root import _EXIT_CODES, FormatOption, _with_only, analyze, app, main
from ._run import run_batch
from ._setup import Setup
from ._typer_options import QuietOption


@app.command()
def demo(
    repositories: Annotated[
        int,
        typer.Option(
            min=1, max=len(_demo.SAMPLES), help="How many sample repositories.", metavar="N"
        ),
    ] = len(_demo.SAMPLES),
    rate: Annotated[
        int,
        typer.Option(min=1, help="Server send rate, KiB/s per clone.", metavar="KIB"),
    ] = 256,
    output_format: FormatOption = None,
    quiet: QuietOption = False,
) -> None:
    """Serve sample repositories on 127.0.0.1 and analyze them, two clones at a time."""
    with tempfile.TemporaryDirectory(prefix="clonegate-demo-") as root:
        names = list(_demo.SAMPLES)[:repositories]
        for name in names:
            _demo.build_repository(Path(root) / f"{name}.git", _demo.SAMPLES[name])
        with _demo.serve(Path(root), rate * 1024) as port:
            urls = [f"git://127.0.0.1:{port}/{name}.git" for name in names]
            if not quiet:
                from rich.console import Console

                Console(stderr=True).print(
                    f"serving {len(urls)} sample repositories on git://127.0.0.1:{port}/ "
                    "(in this process); clone limit 2",
                    markup=False,
                )
            setup = Setup((with_max_concurrent_clones(2),))
            code = run_batch(urls, setup, output_format, None, False, quiet)
    raise typer.Exit(code)


_cluster.register(app)
_store.register(app)
_report.register(app)


__all__ = ["_EXIT_CODES", "RepositoryStatus", "_with_only", "analyze", "app", "main"]

"""The Typer application behind the ``clonegate`` command."""

from __future__ import annotations

import typer

import clonegate

app = typer.Typer(
    name="clonegate",
    help="Clone many git repositories under a hard, fair limit, and analyze each clone.",
    no_args_is_help=True,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"clonegate {clonegate.__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_print_version,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """clonegate: clone many git repositories under a hard, fair limit."""


def main() -> None:
    """Console-script entry point."""
    app()

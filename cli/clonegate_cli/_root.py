"""The Typer application's root and ``analyze``, the command a first result runs (ADR 0007).

``app.py`` adds every other command to this application. A run of ``analyze`` imports
this module alone (``clonegate_cli.main``): the other commands' modules (the cluster's,
the store's, the report's, the demo's) were ~5 ms of a first result (ADR 0003, issue 47).
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path
from typing import Annotated

import typer

import clonegate
from clonegate import with_keep_clones

from ._clone_options import CloneFlags, check_verbosity
from ._host_options import ADAPTIVE, host_options
from ._input import read_list
from ._listing import Listing, ListingFlags, listing_options
from ._run import Format, run_batch, usage_error
from ._store_options import CACHE_SIZE, StoreFlags
from ._typer_options import (
    AdaptiveOption,
    CacheSizeOption,
    DbOption,
    ForceOption,
    HostLimitOption,
    HostRateOption,
    IncrementalOption,
    OutputOption,
    QuietOption,
    VerboseOption,
    clone_options,
)

app = typer.Typer(
    name="clonegate",
    help="Clone many git repositories under a hard, fair limit, and take each one's test "
    "inventory.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# analyze and demo share --format; -v and -q come from _clone_options (worker has them too).
FormatOption = Annotated[
    Format | None,
    typer.Option(
        "--format",
        help="table on a terminal, jsonl otherwise.",
        show_default=False,
        metavar="table|json|jsonl",
    ),
]


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"clonegate {clonegate.__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """clonegate: clone many git repositories under a hard, fair limit."""


_EXIT_CODES = (
    "Exit status: 0 all repositories ok (reused ones included), 1 some failed, 2 usage "
    "error, 4 the results or the result store could not be written, 129 hung up "
    "(SIGHUP), 130 interrupted (Ctrl-C), 141 output closed (a pipe), 143 terminated "
    "(SIGTERM)."
)


@app.command(epilog=_EXIT_CODES)
@clone_options
@listing_options
def analyze(
    ctx: typer.Context,
    urls: Annotated[
        list[str] | None,
        # Hidden from the option list (Typer would show the type, <list[str]>); the
        # usage line and the description say what URL is.
        typer.Argument(show_default=False, metavar="URL", hidden=True),
    ] = None,
    from_file: Annotated[
        str | None,
        typer.Option(
            "--from-file",
            help="Read URLs and sources from PATH, or - for stdin: one per line; "
            "blank lines and # comments are ignored.",
            metavar="PATH",
        ),
    ] = None,
    *,
    clone: CloneFlags,
    listing: ListingFlags,
    host_limit: HostLimitOption = None,
    adaptive: AdaptiveOption = ADAPTIVE,
    host_rate: HostRateOption = None,
    output_format: FormatOption = None,
    output: OutputOption = None,
    keep: Annotated[
        Path | None,
        typer.Option(
            help="Keep the clones, with their files, at DIR/<host>/<path>; "
            "a later run updates them in place.",
            metavar="DIR",
        ),
    ] = None,
    db: DbOption = None,
    incremental: IncrementalOption = False,
    force: ForceOption = False,
    cache_size: CacheSizeOption = CACHE_SIZE,
    verbose: VerboseOption = False,
    quiet: QuietOption = False,
) -> None:
    """Clone each repository (at most -j at once) and report its test inventory.

    Each URL is https://, http://, git://, ssh:// or user@host:path; owner/repo and
    host/owner/repo stand for https URLs. A source lists repositories as they are
    cloned: github:org/NAME, github:user/NAME, github:search/QUERY, gitlab:group/PATH,
    gitlab:user/NAME, gitea:org/NAME@HOST, gitea:user/NAME@HOST,
    bitbucket:workspace/NAME (tokens from GH_TOKEN, GITLAB_TOKEN, GITEA_TOKEN).
    """
    check_verbosity(verbose, quiet)
    entries = read_list(urls or [], from_file)
    listed = Listing.of(entries, listing)
    listed.quiet, listed.verbose = quiet, verbose
    if listing.dry_run:
        from ._dry_run import dry_run

        raise typer.Exit(dry_run(listed, output_format, output))
    setup = clone.setup(ctx).adding(*host_options(host_limit, adaptive, host_rate))
    # Before the command line's own credentials: an explicit --token for a host wins.
    setup = dataclasses.replace(setup, options=(*listed.clone_options(), *setup.options))
    lines: list[str] | Listing = listed if listed.sources else [str(e) for e in entries]
    if keep is not None:
        try:
            keep.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise usage_error(f"--keep {keep}: {exc.strerror}") from None
        kept = dataclasses.replace(setup.clone, keep_in=keep.resolve())
        setup = dataclasses.replace(setup, clone=kept).adding(with_keep_clones())
    try:
        store = StoreFlags.of(db, incremental, force, cache_size)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    raise typer.Exit(run_batch(lines, setup, output_format, output, verbose, quiet, store))


def main() -> None:
    """Console-script entry point."""
    _with_only(sys.argv[1:2])()


def _with_only(first: list[str]) -> typer.Typer:
    """``app`` holding only the command named by ``first`` (the first argument, or
    nothing), when it names one.

    Typer builds every command it holds (each one's signature and type hints) before
    it parses anything: 11 commands, ~7 ms of every start. A run of one command needs
    only that one; anything else (``--help``, a typo to suggest a name for) gets ``app``.
    """
    chosen = [
        command
        for command in app.registered_commands
        if command.callback is not None
        and first == [command.name or typer.main.get_command_name(command.callback.__name__)]
    ]
    if not chosen:
        return app
    lean = copy.copy(app)
    lean.registered_commands = chosen
    return lean


__all__ = ["FormatOption", "analyze", "app", "main"]

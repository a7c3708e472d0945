"""The Typer application behind the ``clonegate`` command (ADR 0007)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

import clonegate
from clonegate import (
    Option,
    RepositoryStatus,
    parse_size,
    with_analysis_timeout,
    with_ca_bundle,
    with_clone_depth,
    with_clone_memory_limit,
    with_clone_timeout,
    with_connect_timeout,
    with_low_speed_limit,
    with_max_concurrent_clones,
    with_max_repo_size,
    with_memory_budget,
    with_read_timeout,
    with_ssh_command,
    with_work_dir,
)

from . import _cluster, _demo, _store
from ._input import credential_options, read_urls
from ._run import Format, StoreSettings, run_batch, usage_error

app = typer.Typer(
    name="clonegate",
    help="Clone many git repositories under a hard, fair limit, and take each one's test "
    "inventory.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# Options that analyze and demo share.
FormatOption = Annotated[
    Format | None,
    typer.Option(
        "--format",
        help="table on a terminal, jsonl otherwise.",
        show_default=False,
        metavar="table|json|jsonl",
    ),
]
QuietOption = Annotated[
    bool, typer.Option("-q", "--quiet", help="No progress or summary, only errors.")
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
    "error, 4 the result store failed, 130 interrupted (Ctrl-C), 141 output closed (a "
    "pipe), 143 terminated (SIGTERM)."
)


@app.command(epilog=_EXIT_CODES)
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
            help="Read URLs from PATH, or - for stdin: one per line; "
            "blank lines and # comments are ignored.",
            metavar="PATH",
        ),
    ] = None,
    jobs: Annotated[
        int,
        typer.Option(
            "-j",
            "--max-concurrent-clones",
            envvar="CLONEGATE_MAX_CONCURRENT_CLONES",
            help="Clones at once (at least 1).",
            metavar="N",
        ),
    ] = 2,
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001, help="Seconds per repository: wait, clone and analysis.", metavar="SECONDS"
        ),
    ] = 15 * 60.0,
    clone_timeout: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="Seconds for the clone alone, once its worker process is running.",
            metavar="SECONDS",
        ),
    ] = None,
    read_timeout: Annotated[
        float,
        typer.Option(
            min=0.001, help="Seconds without data before a clone fails.", metavar="SECONDS"
        ),
    ] = 120.0,
    connect_timeout: Annotated[
        float,
        typer.Option(min=0.001, help="Seconds to connect (https, ssh).", metavar="SECONDS"),
    ] = 30.0,
    depth: Annotated[
        int, typer.Option(min=0, help="Commits of history; 0 for all.", metavar="N")
    ] = 1,
    max_repo_size: Annotated[
        str,
        typer.Option(
            help="Most one clone may receive and write, e.g. 500M (K, M, G: binary units).",
            metavar="SIZE",
        ),
    ] = "2G",
    clone_memory: Annotated[
        str,
        typer.Option(help="Memory one clone may use, on top of its worker's.", metavar="SIZE"),
    ] = "1G",
    memory_budget: Annotated[
        str | None,
        typer.Option(
            help="Run clones while their expected memory fits in SIZE (e.g. 1.5G), or "
            "'auto' (3/4 of what this process may use); combines with -j.",
            metavar="SIZE|auto",
            envvar="CLONEGATE_MEMORY_BUDGET",
        ),
    ] = None,
    low_speed_limit: Annotated[
        int,
        typer.Option(
            min=1,
            help="A clone receiving less than this many bytes/s over --low-speed-time fails.",
            metavar="BYTES",
        ),
    ] = 1000,
    low_speed_time: Annotated[
        float,
        typer.Option(min=0.001, help="The window of --low-speed-limit.", metavar="SECONDS"),
    ] = 30.0,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="CLONEGATE_TOKEN",
            show_default=False,
            help="Token for https on --token-host only, sent when that host asks "
            "(prefer the CLONEGATE_TOKEN variable: arguments are visible to other "
            "users). Never printed.",
            metavar="TOKEN",
        ),
    ] = None,
    token_host: Annotated[
        str | None,
        typer.Option(
            envvar="CLONEGATE_TOKEN_HOST",
            show_default=False,
            help="The one host (host or host:port) the token belongs to; required with a token.",
            metavar="HOST",
        ),
    ] = None,
    netrc: Annotated[
        Path | None,
        typer.Option(
            envvar="CLONEGATE_NETRC",
            show_default=False,
            help="netrc file of per-host credentials for https (machine HOST[:PORT] "
            "login USER password SECRET); mode 600.",
            metavar="FILE",
        ),
    ] = None,
    ssh_command: Annotated[
        str | None,
        typer.Option(
            envvar="CLONEGATE_SSH_COMMAND",
            help="The ssh program and its options, e.g. 'ssh -i KEY' [default: ssh].",
            metavar="COMMAND",
        ),
    ] = None,
    ca_bundle: Annotated[
        Path | None,
        typer.Option(
            help="PEM file of certificate authorities to trust for https.", metavar="FILE"
        ),
    ] = None,
    output_format: FormatOption = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="Write results to FILE instead of stdout.", metavar="FILE"
        ),
    ] = None,
    keep: Annotated[
        Path | None,
        typer.Option(
            help="Keep the clones, with their files, at DIR/<host>/<path>; "
            "a later run updates them in place.",
            metavar="DIR",
        ),
    ] = None,
    db: _store.DbOption = None,
    incremental: Annotated[
        bool,
        typer.Option(
            help="With --db: report a repository from the store, without cloning it, when "
            "its remote HEAD is at the commit of its last result by this analyzer.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            help="With --db: clone and parse everything again (no reuse, no cached files).",
        ),
    ] = False,
    cache_size: Annotated[
        str,
        typer.Option(
            help="With --db: most the per-file analysis cache may hold (least recently "
            "used evicted first).",
            metavar="SIZE",
        ),
    ] = "256M",
    verbose: Annotated[
        bool, typer.Option("-v", "--verbose", help="Log each step of each repository.")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Clone each repository (at most -j at once) and report its test inventory.

    Each URL is https://, http://, git://, ssh:// or user@host:path.
    """
    if jobs < 1:
        source = ctx.get_parameter_source("jobs")
        named = (
            "CLONEGATE_MAX_CONCURRENT_CLONES"
            if source is not None and source.name == "ENVIRONMENT"
            else "-j/--max-concurrent-clones"
        )
        raise usage_error(f"{named} must be at least 1, got {jobs}")
    if verbose and quiet:
        raise usage_error("--verbose and --quiet contradict each other; give one")
    lines = read_urls(urls or [], from_file)
    options: list[Option] = [
        with_max_concurrent_clones(jobs),
        with_analysis_timeout(timeout),
        with_clone_depth(depth or None),
        with_read_timeout(read_timeout),
        with_connect_timeout(connect_timeout),
    ]
    if clone_timeout is not None:
        options.append(with_clone_timeout(clone_timeout))
    try:
        options.append(with_max_repo_size(_size("--max-repo-size", max_repo_size)))
        options.append(with_clone_memory_limit(_size("--clone-memory", clone_memory)))
        if memory_budget is not None:
            options.append(with_memory_budget(_budget(memory_budget)))
        options.append(with_low_speed_limit(low_speed_limit, low_speed_time))
        options += credential_options(token, token_host, netrc)
        if ssh_command is not None:
            options.append(with_ssh_command(ssh_command))
    except OSError as exc:
        raise usage_error(f"--netrc {netrc}: {exc.strerror}") from None
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    if ca_bundle is not None:
        if not ca_bundle.is_file():
            raise usage_error(f"--ca-bundle {ca_bundle}: no such file")
        options.append(with_ca_bundle(ca_bundle))
    if keep is not None:
        try:
            keep.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise usage_error(f"--keep {keep}: {exc.strerror}") from None
        options.append(with_work_dir(keep.resolve(), keep_clones=True))
    if (incremental or force) and db is None:
        flag = "--incremental" if incremental else "--force"
        raise usage_error(f"{flag} needs a result store: --db PATH or CLONEGATE_DB")
    store = None
    if db is not None:
        try:
            limit = _size("--cache-size", cache_size) if cache_size.strip() != "0" else 0
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        store = StoreSettings(db, limit, incremental and not force, force)
    raise typer.Exit(run_batch(lines, options, output_format, output, verbose, quiet, store))


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
                Console(stderr=True).print(
                    f"serving {len(urls)} sample repositories on git://127.0.0.1:{port}/ "
                    "(in this process); clone limit 2",
                    markup=False,
                )
            code = run_batch(
                urls, [with_max_concurrent_clones(2)], output_format, None, False, quiet
            )
    raise typer.Exit(code)


def _budget(text: str) -> int | str:
    return "auto" if text.strip().lower() == "auto" else _size("--memory-budget", text)


def _size(option: str, text: str) -> int:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise ValueError(f"{option}: {exc}") from None


_cluster.register(app)
_store.register(app)


def main() -> None:
    """Console-script entry point."""
    app()


__all__ = ["RepositoryStatus", "app", "main"]

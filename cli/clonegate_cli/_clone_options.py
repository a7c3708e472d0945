"""The clone options of `analyze` and `worker`, declared once (issue 17).

Each field of :class:`CloneSettings` is one command-line option: its type, flags,
help and default. A command takes all of them by declaring one keyword-only
parameter of type ``CloneSettings`` and the decorator :func:`clone_options`, so an
option added here reaches every such command, with its checks and its messages.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from clonegate import (
    Option,
    parse_size,
    with_analysis_memory_limit,
    with_analysis_time_limit,
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
    with_repository_timeout,
    with_ssh_command,
)

from ._descriptors import PER_CLONE, clones_within_open_file_limit
from ._input import credential_options
from ._run import usage_error

__all__ = [
    "CloneSettings",
    "QuietOption",
    "VerboseOption",
    "check_verbosity",
    "clone_options",
    "parse_size_option",
]

MiB = 1 << 20
VerboseOption = Annotated[
    bool, typer.Option("-v", "--verbose", help="Log each step of each repository.")
]
QuietOption = Annotated[
    bool, typer.Option("-q", "--quiet", help="No progress or summary, only errors.")
]


@dataclasses.dataclass(frozen=True)
class CloneSettings:
    """How to clone and analyze each repository, as given on the command line."""

    jobs: Annotated[
        int,
        typer.Option(
            "-j",
            "--max-concurrent-clones",
            envvar="CLONEGATE_MAX_CONCURRENT_CLONES",
            help="Clones at once (at least 1).",
            metavar="N",
        ),
    ] = 2
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds per repository: wait, clone and analysis (not a wait for a CPU).",
            metavar="SECONDS",
        ),
    ] = 15 * 60.0
    analysis_timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds one repository's analysis may run, its wait for a CPU not counted.",
            metavar="SECONDS",
        ),
    ] = 2 * 60.0
    clone_timeout: Annotated[
        float | None,
        typer.Option(
            min=0.001,
            help="Seconds for the clone alone, once its worker process is running.",
            metavar="SECONDS",
        ),
    ] = None
    read_timeout: Annotated[
        float,
        typer.Option(
            min=0.001, help="Seconds without data before a clone fails.", metavar="SECONDS"
        ),
    ] = 120.0
    connect_timeout: Annotated[
        float,
        typer.Option(min=0.001, help="Seconds to connect (https, ssh).", metavar="SECONDS"),
    ] = 30.0
    depth: Annotated[
        int, typer.Option(min=0, help="Commits of history; 0 for all.", metavar="N")
    ] = 1
    max_repo_size: Annotated[
        str,
        typer.Option(
            help="Most one clone may receive and write, e.g. 500M (K, M, G: binary units).",
            metavar="SIZE",
        ),
    ] = "2G"
    clone_memory: Annotated[
        str,
        typer.Option(help="Memory one clone may use, on top of its worker's.", metavar="SIZE"),
    ] = "1G"
    analysis_memory: Annotated[
        str,
        typer.Option(
            help="Memory one analysis process may use, on top of its start.", metavar="SIZE"
        ),
    ] = "1G"
    memory_budget: Annotated[
        str | None,
        typer.Option(
            help="Run clones while their expected memory fits in SIZE (e.g. 1.5G), or "
            "'auto' (3/4 of what this process may use); combines with -j.",
            metavar="SIZE|auto",
            envvar="CLONEGATE_MEMORY_BUDGET",
        ),
    ] = None
    low_speed_limit: Annotated[
        int,
        typer.Option(
            min=1,
            help="A clone receiving less than this many bytes/s of refs or pack data "
            "(progress messages aside) over --low-speed-time fails.",
            metavar="BYTES",
        ),
    ] = 1000
    low_speed_time: Annotated[
        float,
        typer.Option(min=0.001, help="The window of --low-speed-limit.", metavar="SECONDS"),
    ] = 30.0
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
    ] = dataclasses.field(default=None, repr=False)
    token_host: Annotated[
        str | None,
        typer.Option(
            envvar="CLONEGATE_TOKEN_HOST",
            show_default=False,
            help="The one host (host or host:port) the token belongs to; required with a token.",
            metavar="HOST",
        ),
    ] = None
    netrc: Annotated[
        Path | None,
        typer.Option(
            envvar="CLONEGATE_NETRC",
            show_default=False,
            help="netrc file of per-host credentials for https (machine HOST[:PORT] "
            "login USER password SECRET); mode 600.",
            metavar="FILE",
        ),
    ] = None
    ssh_command: Annotated[
        str | None,
        typer.Option(
            envvar="CLONEGATE_SSH_COMMAND",
            help="The ssh program and its options, e.g. 'ssh -i KEY' [default: ssh].",
            metavar="COMMAND",
        ),
    ] = None
    ca_bundle: Annotated[
        Path | None,
        typer.Option(
            help="PEM file of certificate authorities to trust for https.", metavar="FILE"
        ),
    ] = None

    def options(self, ctx: typer.Context) -> list[Option]:
        """The library's options for these settings; a usage error (exit 2) for a bad
        value, naming its option (or the variable it came from)."""
        if self.jobs < 1:
            named = _source(ctx, "jobs", "-j/--max-concurrent-clones")
            raise usage_error(f"{named} must be at least 1, got {self.jobs}")
        jobs, limit = clones_within_open_file_limit(self.jobs)
        if jobs < self.jobs:
            typer.echo(
                f"warning: {_source(ctx, 'jobs', '-j')} {self.jobs} is more clones than "
                f"the open-file limit allows (ulimit -n {limit}, {PER_CLONE} per clone): "
                f"running {jobs} at once",
                err=True,
            )
        options: list[Option] = [
            with_max_concurrent_clones(jobs),
            with_repository_timeout(self.timeout),
            with_analysis_time_limit(self.analysis_timeout),
            with_clone_depth(self.depth or None),
            with_read_timeout(self.read_timeout),
            with_connect_timeout(self.connect_timeout),
        ]
        if self.clone_timeout is not None:
            options.append(with_clone_timeout(self.clone_timeout))
        try:
            options.append(
                with_max_repo_size(parse_size_option("--max-repo-size", self.max_repo_size))
            )
            options.append(
                with_clone_memory_limit(parse_size_option("--clone-memory", self.clone_memory))
            )
            options.append(
                with_analysis_memory_limit(
                    parse_size_option("--analysis-memory", self.analysis_memory)
                )
            )
            if self.memory_budget is not None:
                named = _source(ctx, "memory_budget", "--memory-budget")
                options.append(with_memory_budget(_budget(named, self.memory_budget)))
            options.append(with_low_speed_limit(self.low_speed_limit, self.low_speed_time))
            options += credential_options(self.token, self.token_host, self.netrc)
            if self.ssh_command is not None:
                options.append(with_ssh_command(self.ssh_command))
        except OSError as exc:
            raise usage_error(f"--netrc {self.netrc}: {exc.strerror}") from None
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        if self.ca_bundle is not None:
            if not self.ca_bundle.is_file():
                raise usage_error(f"--ca-bundle {self.ca_bundle}: no such file")
            options.append(with_ca_bundle(self.ca_bundle))
        return options


def check_verbosity(verbose: bool, quiet: bool) -> None:
    """A usage error for -v with -q."""
    if verbose and quiet:
        raise usage_error("--verbose and --quiet contradict each other; give one")


def parse_size_option(option: str, text: str, what: str = "a size without a unit") -> int:
    """Bytes of a size such as ``500M``; a ValueError naming ``option`` otherwise.

    A number without a unit is bytes, and no size option means less than 1 MiB so: one
    below that was most likely meant with a unit (``--max-repo-size 10`` would refuse
    every clone), so it is refused with a hint (``10G``); ``10B`` says bytes are meant.
    """
    value = text.strip()
    if value.replace(".", "", 1).isdigit() and float(value) < MiB:
        raise ValueError(
            f"{option}: {what} must be at least 1 MiB, got {text!r} "
            f"(a number without a unit is bytes; did you mean {value}G?)"
        )
    try:
        return parse_size(text)
    except ValueError as exc:
        raise ValueError(f"{option}: {exc}") from None


def _source(ctx: typer.Context, name: str, flag: str) -> str:
    """How the user gave the value of parameter ``name``: its environment variable, when
    it came from there, or ``flag``; what a message about a bad value must name."""
    source = ctx.get_parameter_source(name)
    if source is not None and source.name == "ENVIRONMENT":
        param = next(p for p in ctx.command.params if p.name == name)
        envvar = param.envvar
        return envvar if isinstance(envvar, str) else flag
    return flag


def _budget(named: str, text: str) -> int | str:
    """The budget in ``text``; a ValueError naming ``named`` otherwise."""
    if text.strip().lower() == "auto":
        return "auto"
    size = parse_size_option(named, text, "a memory budget")
    if size < MiB:
        raise ValueError(f"{named}: a memory budget must be at least 1 MiB, got {text!r}")
    return size


_FIELDS = dataclasses.fields(CloneSettings)
_HINTS = typing.get_type_hints(CloneSettings, include_extras=True)
# What Typer reads from a command's signature: one parameter per field, keyword-only
# like the parameter it replaces (Typer passes every value by name).
_PARAMETERS = [
    inspect.Parameter(
        f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default, annotation=_HINTS[f.name]
    )
    for f in _FIELDS
]


def clone_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with the clone options where its keyword-only ``CloneSettings``
    parameter was: Typer lists them there, and ``command`` receives their values as
    one :class:`CloneSettings` in that parameter."""
    signature = inspect.signature(command, eval_str=True)
    (slot,) = (p for p in signature.parameters.values() if p.annotation is CloneSettings)
    if slot.kind is not inspect.Parameter.KEYWORD_ONLY:
        raise TypeError(f"{command.__name__}: the CloneSettings parameter must be keyword-only")
    parameters: list[inspect.Parameter] = []
    for parameter in signature.parameters.values():
        parameters += _PARAMETERS if parameter is slot else [parameter]

    @functools.wraps(command)
    def with_settings(**values: Any) -> None:
        settings = CloneSettings(**{f.name: values.pop(f.name) for f in _FIELDS})
        command(**values, **{slot.name: settings})

    # inspect.signature, which Typer calls, returns this instead of following __wrapped__.
    with_settings.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    return with_settings

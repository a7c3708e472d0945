"""The clone options of `analyze` and `worker`, declared once (issue 17).

Each field of :class:`CloneFlags` is one command-line option: its type, flags,
help and default. A command takes all of them by declaring one keyword-only
parameter of type ``CloneFlags`` and the decorator :func:`clone_options`, so an
option added here reaches every such command, with its checks and its messages.
The defaults and help of what the adapters do are read from the library's settings
types (``clonegate.CloneSettings``, ``AnalysisSettings``) and the use case's
(``UseCaseConfig``): written there once (ADR 0017; tests/test_cli_settings.py checks).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import clonegate
from clonegate import (
    AnalysisSettings,
    Option,
    UseCaseConfig,
    parse_size,
    with_analysis_time_limit,
    with_breaker,
    with_clone_timeout,
    with_max_concurrent_clones,
    with_memory_budget,
    with_repository_timeout,
    with_retries,
)

from ._descriptors import PER_CLONE, clones_within_open_file_limit
from ._early import MEMORY_BUDGET_DEFAULT
from ._input import credential_options
from ._run import usage_error
from ._setup import Setup, help_of, size_text

if TYPE_CHECKING:
    # Its declarations stay strings until a command is built (_typer_options): a
    # plain analyze runs without Typer (_plain, issue 47).
    import typer

__all__ = ["CloneFlags", "check_verbosity", "parse_size_option"]

MiB = 1 << 20
_CLONE, _ANALYSIS, _USE_CASE = clonegate.CloneSettings(), AnalysisSettings(), UseCaseConfig()


def _clone_help(name: str) -> str:
    return help_of(clonegate.CloneSettings, name)


@dataclasses.dataclass(frozen=True)
class CloneFlags:
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
    ] = _USE_CASE.max_concurrent_clones
    timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds per repository: wait, clone and analysis (not a wait for a CPU).",
            metavar="SECONDS",
        ),
    ] = _USE_CASE.repository_timeout
    analysis_timeout: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds one repository's analysis may run, its wait for a CPU not counted.",
            metavar="SECONDS",
        ),
    ] = _USE_CASE.analysis_time_limit
    retries: Annotated[
        int,
        typer.Option(
            min=0,
            help="Attempts after the first for a clone the server pushed back (HTTP 429, "
            "502, 503, 504), its slot free while it waits; 0: none.",
            metavar="N",
        ),
    ] = _USE_CASE.retries
    retry_timeouts: Annotated[
        bool,
        typer.Option(
            "--retry-timeouts",
            help="Retry a clone whose server went silent past --read-timeout too.",
        ),
    ] = _USE_CASE.retry_timeouts
    breaker: Annotated[
        int,
        typer.Option(
            min=0,
            help="Connection failures in a row that make a host's other repositories wait "
            "for a probe instead of trying; 0: none.",
            metavar="N",
        ),
    ] = _USE_CASE.breaker_threshold
    breaker_cool_down: Annotated[
        float,
        typer.Option(
            min=0.001,
            help="Seconds before a down host's first probe (doubled after each failed one).",
            metavar="SECONDS",
        ),
    ] = _USE_CASE.breaker_cool_down
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
        typer.Option(min=0.001, help=_clone_help("read_timeout"), metavar="SECONDS"),
    ] = _CLONE.read_timeout
    connect_timeout: Annotated[
        float,
        typer.Option(min=0.001, help=_clone_help("connect_timeout"), metavar="SECONDS"),
    ] = _CLONE.connect_timeout
    depth: Annotated[int, typer.Option(min=0, help=_clone_help("depth"), metavar="N")] = (
        _CLONE.depth or 0
    )
    max_repo_size: Annotated[
        str, typer.Option(help=_clone_help("max_repo_size"), metavar="SIZE")
    ] = size_text(_CLONE.max_repo_size)
    clone_memory: Annotated[str, typer.Option(help=_clone_help("max_memory"), metavar="SIZE")] = (
        size_text(_CLONE.max_memory)
    )
    analysis_memory: Annotated[
        str, typer.Option(help=help_of(AnalysisSettings, "max_memory"), metavar="SIZE")
    ] = size_text(_ANALYSIS.max_memory)
    memory_budget: Annotated[
        str,
        typer.Option(
            help="Run clones while their expected memory fits in SIZE (e.g. 1.5G); 'auto': "
            "what this process may use, less what runs outside the budget (3/4 to 92% of it); "
            "'off': the clone limit (-j) alone. "
            "Combines with -j.",
            metavar="SIZE|auto|off",
            envvar="CLONEGATE_MEMORY_BUDGET",
        ),
    ] = MEMORY_BUDGET_DEFAULT
    low_speed_limit: Annotated[
        int, typer.Option(min=1, help=_clone_help("low_speed_limit"), metavar="BYTES")
    ] = _CLONE.low_speed_limit
    low_speed_time: Annotated[
        float,
        typer.Option(min=0.001, help=_clone_help("low_speed_time"), metavar="SECONDS"),
    ] = _CLONE.low_speed_time
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
            help=f"{_clone_help('ssh_command')} [default: {_CLONE.ssh_command}]",
            metavar="COMMAND",
        ),
    ] = None
    ca_bundle: Annotated[
        Path | None, typer.Option(help=_clone_help("ca_bundle"), metavar="FILE")
    ] = _CLONE.ca_bundle

    def setup(self, ctx: typer.Context | None) -> Setup:
        """The library's options and settings for these flags; a usage error (exit 2) for
        a bad value, naming its option (or the variable it came from). ``ctx`` None:
        flags read without Typer (``_plain``), each given on the command line or left
        at its default, none from the environment."""
        try:
            return Setup(self._options(ctx), self._clone(), self._analysis())
        except OSError as exc:
            raise usage_error(f"--netrc {self.netrc}: {exc.strerror}") from None
        except ValueError as exc:
            raise usage_error(str(exc)) from None

    def _options(self, ctx: typer.Context | None) -> tuple[Option, ...]:
        """The use case's own options."""
        if self.jobs < 1:
            named = _source(ctx, "jobs", "-j/--max-concurrent-clones")
            raise usage_error(f"{named} must be at least 1, got {self.jobs}")
        jobs, limit = clones_within_open_file_limit(self.jobs)
        if jobs < self.jobs:
            import typer  # this warning's alone: a plain analyze runs without it

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
            with_retries(self.retries, timeouts=self.retry_timeouts),
            with_breaker(self.breaker, self.breaker_cool_down),
        ]
        if self.clone_timeout is not None:
            options.append(with_clone_timeout(self.clone_timeout))
        named = _source(ctx, "memory_budget", "--memory-budget")
        budget = _budget(named, self.memory_budget)
        if budget is not None:  # a budget by default: the hard limit (ADR 0014, 0007)
            # The default where memory cannot be read is no budget, said once; a
            # budget the user asked for is an error there.
            source = ctx.get_parameter_source("memory_budget") if ctx is not None else None
            asked = source is not None and source.name != "DEFAULT"
            options.append(with_memory_budget(budget, required=asked))
        options += credential_options(self.token, self.token_host, self.netrc)
        return tuple(options)

    def _clone(self) -> clonegate.CloneSettings:
        """The clone adapter's settings."""
        if self.ca_bundle is not None and not self.ca_bundle.is_file():
            raise usage_error(f"--ca-bundle {self.ca_bundle}: no such file")
        return clonegate.CloneSettings(
            depth=self.depth or None,
            read_timeout=self.read_timeout,
            connect_timeout=self.connect_timeout,
            max_repo_size=parse_size_option("--max-repo-size", self.max_repo_size),
            max_memory=parse_size_option("--clone-memory", self.clone_memory),
            low_speed_limit=self.low_speed_limit,
            low_speed_time=self.low_speed_time,
            ssh_command=self.ssh_command if self.ssh_command is not None else _CLONE.ssh_command,
            ca_bundle=self.ca_bundle,
        )

    def _analysis(self) -> AnalysisSettings:
        """The analysis adapter's settings."""
        memory = parse_size_option("--analysis-memory", self.analysis_memory)
        return AnalysisSettings(max_memory=memory)


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


def _source(ctx: typer.Context | None, name: str, flag: str) -> str:
    """How the user gave the value of parameter ``name``: its environment variable, when
    it came from there, or ``flag``; what a message about a bad value must name."""
    if ctx is None:
        return flag
    source = ctx.get_parameter_source(name)
    if source is not None and source.name == "ENVIRONMENT":
        param = next(p for p in ctx.command.params if p.name == name)
        envvar = param.envvar
        return envvar if isinstance(envvar, str) else flag
    return flag


def _budget(named: str, text: str) -> int | str | None:
    """The budget in ``text`` (None: ``off``); a ValueError naming ``named`` otherwise."""
    word = text.strip().lower()
    if word == "off":
        return None
    if word == "auto":
        return "auto"
    size = parse_size_option(named, text, "a memory budget")
    if size < MiB:
        raise ValueError(f"{named}: a memory budget must be at least 1 MiB, got {text!r}")
    return size

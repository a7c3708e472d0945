"""The Typer declarations of the options that several commands share, written once.

What the options do is in the modules that load without Typer (``_clone_options``,
``_host_options``, ``_store_options``, ``_run``): a plain ``analyze`` runs through
them without importing Typer at all (``_plain``, issue 47), and a command built by
Typer reads its options here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clonegate.store import StoreSettings

from ._clone_options import CloneFlags
from ._flag_groups import options_of
from ._setup import help_of

__all__ = [
    "AdaptiveOption",
    "CacheSizeOption",
    "DbOption",
    "ForceOption",
    "HostLimitOption",
    "HostRateOption",
    "IncrementalOption",
    "OutputOption",
    "QuietOption",
    "VerboseOption",
    "clone_options",
]

# A command takes every clone option by declaring a keyword-only CloneFlags parameter.
clone_options = options_of(CloneFlags)

VerboseOption = Annotated[
    bool, typer.Option("-v", "--verbose", help="Log each step of each repository.")
]
QuietOption = Annotated[
    bool, typer.Option("-q", "--quiet", help="No progress or summary, only errors.")
]

# analyze's limits per host (_host_options).
HostLimitOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Clones at once from one host (at most -j); with --adaptive, the most it "
        "goes back up to.  [default: -j]",
        show_default=False,
        metavar="K",
    ),
]
AdaptiveOption = Annotated[
    bool,
    typer.Option(
        "--adaptive/--no-adaptive",
        help="Lower a host's limit when it pushes back (429, 503 with Retry-After, resets), "
        "raise it again as its clones succeed.",
    ),
]
HostRateOption = Annotated[
    str | None,
    typer.Option(
        help="Clone attempts per host at most, spaced evenly: N/s, N/min or N/h (e.g. 30/min).",
        show_default=False,
        metavar="RATE",
    ),
]

# --db and what goes with it (_store_options, ADR 0016).
DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        envvar="CLONEGATE_DB",
        show_default=False,
        help="The result store: an SQLite file (or CLONEGATE_DB); a run creates it if "
        "missing, the reading commands only read it.",
        metavar="PATH",
    ),
]
IncrementalOption = Annotated[
    bool,
    typer.Option(
        help="With --db: report a repository from the store, without cloning it, when "
        "its remote HEAD is at the commit of its last result by this analyzer.",
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option(help="With --db: clone and parse everything again (no reuse, no cached files)."),
]
_CACHE_HELP = help_of(StoreSettings, "cache_limit")
CacheSizeOption = Annotated[
    str,
    typer.Option(help=f"With --db: {_CACHE_HELP[0].lower()}{_CACHE_HELP[1:]}", metavar="SIZE"),
]

# analyze's and report's -o.
OutputOption = Annotated[
    Path | None,
    typer.Option("-o", "--output", help="Write results to FILE instead of stdout.", metavar="FILE"),
]

"""A plain ``analyze`` run without Typer (ADR 0003, issue 47).

Typer and the command's declarations were ~25 ms of CPU on the path of a first
result. A command line that ``_early`` reads whole (URLs, ``-j``, ``--depth``,
``--format``, ``-q``, ``-v``) runs here: the same flags, the same composition
(``CloneFlags.setup``, ``host_options``) and the same ``run_batch`` as ``analyze``,
every other option at its default. tests/test_plain_analyze.py holds the two paths
to the same use case, settings and output.
"""

from __future__ import annotations

import dataclasses
import sys

from ._clone_options import CloneFlags
from ._early import PlainAnalyze
from ._host_options import ADAPTIVE, host_options
from ._input import read_list
from ._run import Format, run_batch

__all__ = ["run_plain"]


def run_plain(plain: PlainAnalyze) -> int:
    """Run ``plain`` as ``clonegate analyze`` would; its exit status."""
    try:
        return _run(plain)
    except Exception as exc:
        # A usage error (usage_error's typer.Exit) has said why already; Typer is
        # loaded only by it.
        typer = sys.modules.get("typer")
        if typer is not None and isinstance(exc, typer.Exit):
            return int(exc.exit_code)
        raise


def _run(plain: PlainAnalyze) -> int:
    defaults = CloneFlags()
    flags = dataclasses.replace(
        defaults,
        jobs=plain.jobs if plain.jobs is not None else defaults.jobs,
        depth=plain.depth if plain.depth is not None else defaults.depth,
    )
    setup = flags.setup(None).adding(*host_options(None, ADAPTIVE, None))
    lines = [str(entry) for entry in read_list(plain.urls, None)]
    output_format = Format(plain.output_format) if plain.output_format is not None else None
    return run_batch(lines, setup, output_format, None, plain.verbose, plain.quiet, None)

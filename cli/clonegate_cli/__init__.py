"""The ``clonegate`` command line. It depends on the library; nothing depends on it."""

from __future__ import annotations

import os
import sys

# Commands that clone: their worker zygote starts before the command line's imports.
_CLONING_COMMANDS = frozenset({"analyze", "demo", "worker"})
# What the command line removes from its environment once read (app.py): a token
# never reaches a worker, not even through /proc/<pid>/environ.
_SECRET_VARIABLES = frozenset({"CLONEGATE_TOKEN"})


def main() -> None:
    """Console-script entry point.

    ``clonegate --version`` answers before Typer, Rich and trio are imported (they take
    most of a second on a busy machine); anything else runs the Typer application.
    A command that clones first starts the workers' zygote, so that its imports
    (dulwich, the grammars) run on another core while this process imports Typer,
    Rich and trio (ADR 0003).
    """
    arguments = sys.argv[1:]
    if arguments == ["--version"]:
        from clonegate import __version__

        print(f"clonegate {__version__}")
        return
    if arguments[:1] and arguments[0] in _CLONING_COMMANDS and "--help" not in arguments:
        from clonegate._adapters.preloads import DEFAULT_MODULES
        from clonegate._adapters.workers.spawn import prestart

        environment = {k: v for k, v in os.environ.items() if k not in _SECRET_VARIABLES}
        prestart(DEFAULT_MODULES, environment)
    from .app import main as run_app

    run_app()

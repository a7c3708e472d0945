"""The ``clonegate`` command line. It depends on the library; nothing depends on it."""

from __future__ import annotations

import sys


def main() -> None:
    """Console-script entry point.

    ``clonegate --version`` answers before Typer, Rich and trio are imported (they take
    most of a second on a busy machine); anything else runs the Typer application.
    """
    if sys.argv[1:] == ["--version"]:
        from clonegate import __version__

        print(f"clonegate {__version__}")
        return
    from .app import main as run_app

    run_app()

"""The ``clonegate`` command line. It depends on the library; nothing depends on it."""

from __future__ import annotations

import os
import sys

# Not typing's: importing it cost ~3 ms before the zygote could start (ADR 0003).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NoReturn

# Commands that clone: their worker zygote starts before the command line's imports.
_CLONING_COMMANDS = frozenset({"analyze", "demo", "worker"})
# What the command line removes from its environment once read (app.py): a token
# never reaches a worker, not even through /proc/<pid>/environ.
_SECRET_VARIABLES = frozenset({"CLONEGATE_TOKEN", "CLONEGATE_REDIS_URL"})


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

    try:
        run_app()
    except SystemExit as exc:
        _exit_now(exc.code)
    _exit_now(0)


def _exit_now(code: object) -> NoReturn:
    """End the process once the command is done, without the interpreter's teardown.

    By then every clone, worker, thread and file of the run is finished and closed
    (trio.run has returned); what is left is freeing trio's, Typer's and Rich's modules
    one by one, about 50 ms of every command's exit (ADR 0003). Output is flushed first.
    """
    status = code if isinstance(code, int) else 0 if code is None else 1
    if not isinstance(code, int | None):
        print(code, file=sys.stderr)  # what SystemExit("message") would have printed
    import logging  # loaded by the command already; not by --version

    logging.shutdown()
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader left after the last line: as _run does
        status = status or 141
    sys.stderr.flush()
    os._exit(status)

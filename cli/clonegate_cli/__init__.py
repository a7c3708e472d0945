"""The ``clonegate`` command line. It depends on the library; nothing depends on it."""

from __future__ import annotations

import errno
import gc
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
    # No cyclic collection while the command line imports: ~70 collections, 10-15 ms
    # of a first result (issue 47), of objects that live as long as the process. On
    # again, with them frozen, once the command's modules are in (_collect_from_now).
    gc.disable()
    _fill_closed_standard_files()
    try:
        _main(sys.argv[1:])
    except OSError as exc:
        # A full disk or device under stdout (`--help > /dev/full`): one line and the
        # status of results that cannot be written, not a traceback.
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        from ._run import EXIT_OUTPUT

        print(f"clonegate: error: cannot write: {exc.strerror}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(EXIT_OUTPUT)


def _main(arguments: list[str]) -> None:
    if arguments == ["--version"]:
        from clonegate import __version__

        print(f"clonegate {__version__}")
        if sys.stdout is not None:
            sys.stdout.flush()  # here, where a failure is caught, not at exit
        return
    plain = None
    if arguments[:1] and arguments[0] in _CLONING_COMMANDS and "--help" not in arguments:
        from ._early import plain_analyze

        environment = {k: v for k, v in os.environ.items() if k not in _SECRET_VARIABLES}
        plain = plain_analyze(arguments, os.environ)
        if plain is not None:
            from clonegate.workers import prestart_first_clone

            prestart_first_clone(environment)
        else:
            from clonegate.workers import ZYGOTE_PRELOAD, prestart

            prestart(ZYGOTE_PRELOAD, environment)
    try:
        if plain is not None:
            _start_first_clone(plain.urls[0], plain.depth)
            # Without Typer (~25 ms of a first result): as analyze would run it.
            from ._plain import run_plain

            _collect_from_now()
            _exit_now(run_plain(plain))
        if arguments[:1] == ["analyze"]:
            # Its module alone: the other commands' modules were ~5 ms of a first result.
            from ._root import main as run_app
        else:
            from .app import main as run_app
        _collect_from_now()
        run_app()
    except SystemExit as exc:
        _exit_now(exc.code)
    except BaseException:  # Ctrl-C before trio ran, a bug: the first clone goes too
        _end_first_clone()
        raise
    _exit_now(0)


_first_clone_sent = False


def _start_first_clone(url: str, depth: int | None) -> None:
    """Start the clone of ``url`` that ``analyze`` with ``--depth`` (None: not given)
    and no other clone option will make (``_early``); the use case takes it over."""
    global _first_clone_sent
    from clonegate import CloneSettings
    from clonegate.workers import start_first_clone

    from ._early import MEMORY_BUDGET_DEFAULT

    # As the option does (_clone_options): 0 is the whole history.
    settings = CloneSettings() if depth is None else CloneSettings(depth=depth or None)
    _first_clone_sent = True  # before: an interrupt may come once it is sent
    start_first_clone(url, settings, ask_memory=MEMORY_BUDGET_DEFAULT != "off")


def _end_first_clone() -> None:
    """A first clone nothing took over (the command failed before it cloned, or was
    interrupted) is killed, reaped and removed (``end_first_clone``); nothing otherwise."""
    if _first_clone_sent:
        from clonegate.workers import end_first_clone

        end_first_clone()


def _collect_from_now() -> None:
    """The cyclic collector on again, the objects made so far (the modules') frozen:
    later collections, over a long run too, never scan them again."""
    gc.freeze()
    gc.enable()


def _fill_closed_standard_files() -> None:
    """/dev/null on each of descriptors 0, 1 and 2 that was closed (``>&-``).

    The next file opened would take such a descriptor: a store, a pipe to a worker,
    a clone's file would then be this process's (or a child's) stdout or stderr, and
    receive its output. ``sys.stdout`` stays None: the commands that write results
    there refuse to start (``results_stdout``), rather than write them nowhere. A
    closed stdin reads as empty and a closed stderr takes what it is told (it was
    closed on purpose), rather than crash every command that reads or tells.
    """
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: this one
    if sys.stdin is None:
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 (the process's, kept open)
    if sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115


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
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:  # the reader left after the last line: as _run does
        status = status or 141
    except OSError as exc:  # a full disk or device: what was buffered is lost
        if sys.stderr is not None:
            print(f"clonegate: error: cannot write stdout: {exc.strerror}", file=sys.stderr)
        from ._run import EXIT_OUTPUT  # loaded by the command already

        status = EXIT_OUTPUT
    if sys.stderr is not None:
        sys.stderr.flush()
    _end_first_clone()
    os._exit(status)

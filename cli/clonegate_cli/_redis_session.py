"""The cluster commands' Redis session: the --redis options, the URL (credentials
never shown), and a run under trio that stops cleanly on a signal (ADR 0015)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import trio
import typer

import clonegate.cluster
import clonegate.errors
from clonegate import redact, visible
from clonegate.store import StoreError

from ._run import (
    EXIT_BROKEN_PIPE,
    EXIT_BY_SIGNAL,
    EXIT_INTERRUPTED,
    EXIT_STORE,
    EXIT_USAGE,
    configure_logging,
    find_exception,
    usage_error,
)
from ._setup import SetupError

if TYPE_CHECKING:
    from clonegate.cluster import Redis

__all__ = [
    "EXIT_UNAVAILABLE",
    "RedisOption",
    "RedisPasswordFileOption",
    "RedisPatienceOption",
    "connect",
    "error",
    "run_with_redis",
]

EXIT_UNAVAILABLE = 3

RedisOption = Annotated[
    str | None,
    typer.Option(
        "--redis",
        envvar="CLONEGATE_REDIS_URL",
        show_default=False,
        help="Redis URL, redis://[user:password@]host:port/db (a Redis Cluster: "
        "redis+cluster://host:port[,host:port...]; Sentinel: "
        "redis+sentinel://host:port[,host:port...]/service), user and password "
        "percent-encoded (prefer the CLONEGATE_REDIS_URL variable or "
        "--redis-password-file: arguments are visible to other users). Never printed.",
        metavar="URL",
    ),
]
RedisPasswordFileOption = Annotated[
    Path | None,
    typer.Option(
        envvar="CLONEGATE_REDIS_PASSWORD_FILE",
        show_default=False,
        help="Read the Redis password from FILE's first line, as written (for a URL without one).",
        metavar="FILE",
    ),
]

RedisPatienceOption = Annotated[
    float,
    typer.Option(
        min=0,
        help="Seconds to keep retrying while Redis is unavailable (a restart, a failover, "
        "a lost connection) before giving up with exit status 3; 0: at once.",
        metavar="S",
    ),
]


class _NoTraceback(logging.Filter):
    """coredis logs a failed connection attempt itself, with the traceback of whatever
    was being handled (a Redis gone silent mid-command: 466 lines of task groups), and
    does so at every retry. The failure reaches clonegate as an exception, which the
    patience logs once per outage: coredis's own lines go only to a debug log, bare."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.exc_info, record.exc_text, record.stack_info = None, None, None
        return logging.getLogger("clonegate").isEnabledFor(logging.DEBUG)


_NO_TRACEBACK = _NoTraceback()


def connect(url: str | None, password_file: Path | None) -> str:
    from clonegate.cluster import redis_url

    try:
        password = None if password_file is None else _read_password(password_file)
        found = redis_url(url, password)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    # Read once, then out of the environment: nothing this command starts needs it.
    os.environ.pop("CLONEGATE_REDIS_URL", None)
    return found


def _read_password(path: Path) -> str:
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise ValueError(f"--redis-password-file {visible(str(path))}: {reason}") from None
    if not lines or not lines[0]:
        raise ValueError(
            f"--redis-password-file {visible(str(path))}: no password on its first line"
        )
    return lines[0]


def run_with_redis(url: str, main: Callable[[Redis[str]], Awaitable[int]]) -> int:
    """Run ``main`` with a client for ``url``, under trio: Redis failures are one clear
    line and exit 3, never a traceback or a hang; SIGTERM and Ctrl-C stop it like
    `analyze` (143, 130).

    A signal cancels ``main`` inside the client, which stays open for its clean-up
    (permits given back, bounded); one before the client is open, or a second one,
    stops everything.
    """
    configure_logging(verbose=False, quiet=False)  # escaped; no-op if the command did
    logging.getLogger("coredis").addFilter(_NO_TRACEBACK)  # once: addFilter checks
    stopped: list[int] = []
    work = trio.CancelScope()
    code = 0

    async def guarded() -> None:
        nonlocal code
        async with trio.open_nursery() as nursery:
            connected = False

            async def on_signal() -> None:
                with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                    async for signum in signals:
                        stopped.append(signum)
                        if connected and not work.cancel_called:
                            work.cancel()
                        else:
                            nursery.cancel_scope.cancel()

            nursery.start_soon(on_signal)
            async with clonegate.cluster.open_redis(url) as client:
                connected = True
                with work:
                    code = await main(client)
            nursery.cancel_scope.cancel()

    try:
        trio.run(guarded)
        return EXIT_BY_SIGNAL[signal.Signals(stopped[0])] if stopped else code
    except BaseException as exc:
        if find_exception(exc, BrokenPipeError) is not None:  # `clonegate results ... | head`
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return EXIT_BROKEN_PIPE
        if isinstance(exc, KeyboardInterrupt):  # Ctrl-C before or after the receiver
            return EXIT_INTERRUPTED
        failure: BaseException | None = find_exception(
            exc,
            (
                clonegate.cluster.RedisUnavailableError,
                clonegate.errors.LimitConfigError,
                SetupError,
                StoreError,
            ),
        )
        if failure is None:
            raise
        if stopped and isinstance(failure, clonegate.cluster.RedisUnavailableError):
            # A second signal closed the client under a clean-up request (a permit
            # given back), or Redis was gone too: the lease returns the permit.
            return EXIT_BY_SIGNAL[signal.Signals(stopped[0])]
        error(str(failure))
        if isinstance(failure, StoreError):  # a worker's --db
            return EXIT_STORE
        return (
            EXIT_USAGE
            if isinstance(failure, (clonegate.errors.LimitConfigError, SetupError))
            else EXIT_UNAVAILABLE
        )


def error(message: str) -> None:
    typer.echo(f"clonegate: error: {visible(redact(message))}", err=True)

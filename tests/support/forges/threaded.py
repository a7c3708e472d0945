"""A forge server in a thread of its own, with its own trio loop: for a test that runs
the command line in the test's thread (``CliRunner``), which runs ``trio.run`` itself,
or in a process the test waits for.

The server's record (``seen``) is read once the block has ended (the thread joined),
or while it runs for a count: a list appended to by one thread."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TypeVar

import trio

from .core import ForgeServer

S = TypeVar("S", bound=ForgeServer)
_BOUND = 30.0  # seconds for the thread to start or stop on a loaded machine: a safety net


@contextmanager
def in_a_thread(server: S) -> Iterator[S]:
    """``server`` serving on 127.0.0.1 for the block; stopped and joined after it."""
    ready = threading.Event()
    stop: list[tuple[trio.lowlevel.TrioToken, trio.CancelScope]] = []
    failed: list[BaseException] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            stop.append((trio.lowlevel.current_trio_token(), nursery.cancel_scope))
            ready.set()

    def run() -> None:
        try:
            trio.run(main)
        except BaseException as exc:  # seen by the test, not lost in the thread
            failed.append(exc)
            ready.set()

    thread = threading.Thread(target=run, name="forge-server", daemon=True)
    thread.start()
    assert ready.wait(_BOUND), "the forge server did not start"
    if failed:
        raise failed[0]
    token, scope = stop[0]
    try:
        yield server
    finally:
        token.run_sync_soon(scope.cancel)  # from any thread, a trio one too
        thread.join(_BOUND)
        assert not thread.is_alive(), "the forge server did not stop"

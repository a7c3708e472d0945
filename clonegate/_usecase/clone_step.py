"""One clone, under the clone timeout, asking the gate for memory as it learns its need."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable

import trio

from .._domain.credentials import Credential
from .._domain.errors import CloneTimeoutError
from .._domain.vcs import VCS, ClonedSource
from .stopwatch import Stopwatch

__all__ = ["clone_timed"]


async def clone_timed(
    vcs: VCS,
    url: str,
    shown: str,
    watch: Stopwatch,
    credential: Credential | None,
    limit: float | None,
    need: Callable[[int], Awaitable[None]] | None = None,
) -> ClonedSource:
    """``vcs.clone(url)``, failing :class:`CloneTimeoutError` past ``limit`` seconds.

    The clone timeout runs from the VCS's ``on_ready``: its set-up (starting a worker
    process, which takes seconds on a busy machine) is not the clone. With ``need``
    (a memory budget, and a VCS that forecasts its memory: the caller's choice), the
    clone's forecasts go to ``need``; the timeout stops while a forecast waits for
    memory, since the clone does nothing then (the repository's own deadline still runs).
    """
    with trio.CancelScope() as clone_scope:

        def ready() -> None:
            if watch.ready_at is not None:
                return  # once: a second call must not push the deadline back
            watch.ready_at = trio.current_time()
            if limit is not None:
                clone_scope.deadline = watch.ready_at + limit

        if need is None:
            return await vcs.clone(url, credential=credential, on_ready=ready)

        async def paused(nbytes: int) -> None:
            deadline, started = clone_scope.deadline, trio.current_time()
            clone_scope.deadline = math.inf
            try:
                await need(nbytes)
            finally:
                # A deadline not set yet (before on_ready) stays unset.
                clone_scope.deadline = deadline + (trio.current_time() - started)

        return await vcs.clone(url, credential=credential, on_ready=ready, on_memory=paused)
    assert limit is not None
    raise CloneTimeoutError(shown, f"the clone took longer than {limit:g} s")

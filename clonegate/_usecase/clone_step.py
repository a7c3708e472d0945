"""One clone, under the clone timeout, asking the gate for memory as it learns its need."""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import trio

from .._domain.credentials import Credential
from .._domain.errors import CloneTimeoutError
from .._domain.events import EventKind
from .._domain.memory import MemoryNeed
from .._domain.vcs import VCS, ClonedSource
from .gate import CloneGate, MemoryLease
from .stopwatch import Stopwatch

__all__ = ["RECEIVED_EVERY", "CloneHooks", "clone_timed", "discard", "throttled"]

logger = logging.getLogger("clonegate")

# A clone's bytes received reach the event hook at most this often (trio's clock):
# the VCS's own reports are rare already (ADR 0003); this keeps a hook cheap even
# when they are not (a worker a hostile repository took over).
RECEIVED_EVERY = 0.25


@dataclass(frozen=True)
class CloneHooks:
    """What a clone tells the run as it goes."""

    need: MemoryNeed | None = None  # memory forecasts (a budget)
    received: Callable[..., object] | None = None  # called with ``received=`` bytes so far
    keep_worker: bool = False  # the budget reserved what an idle worker keeps (idle_workers)

    @classmethod
    def of(
        cls, gate: CloneGate, vcs: VCS, lease: MemoryLease, emit: Callable[..., object]
    ) -> CloneHooks:
        """Where a clone's memory forecasts go: ``gate``'s budget, if there is one and
        ``vcs`` forecasts (its ``opening_memory`` is not None), each change of ``lease``
        an ``emit(EventKind.MEMORY, detail=...)``; its bytes received: an
        ``emit(EventKind.RECEIVED, received=...)``."""

        async def need(nbytes: int, reclaimable: int = 0, /, *, refusable: bool = False) -> bool:
            before = lease.memory
            held = await gate.need(lease, nbytes, reclaimable, refusable=refusable)
            if lease.memory != before:
                emit(EventKind.MEMORY, detail=f"{before} -> {lease.memory} MiB")
            return held

        forecasts = gate.memory is not None and vcs.opening_memory is not None
        keep = gate.keeps_workers
        return cls(need if forecasts else None, partial(emit, EventKind.RECEIVED), keep)


def throttled(emit: Callable[..., object]) -> Callable[[int], None]:
    """``emit(received=n)``, called at most once per :data:`RECEIVED_EVERY` seconds; the
    calls in between are dropped (the next one carries a newer figure). Never a
    checkpoint."""
    last = -math.inf

    def heard(received: int) -> None:
        nonlocal last
        now = trio.current_time()
        if now - last >= RECEIVED_EVERY:
            last = now
            emit(received=received)

    return heard


async def clone_timed(
    vcs: VCS,
    url: str,
    shown: str,
    watch: Stopwatch,
    credential: Credential | None,
    limit: float | None,
    hooks: CloneHooks | None = None,
) -> ClonedSource:
    """``vcs.clone(url)``, failing :class:`CloneTimeoutError` past ``limit`` seconds.

    The clone timeout runs from the VCS's ``on_ready``: its set-up (starting a worker
    process, which takes seconds on a busy machine) is not the clone. With
    ``hooks.need`` (a memory budget, and a VCS that forecasts its memory: the caller's
    choice), the clone's forecasts go to it; the timeout stops while a forecast waits for
    memory, since the clone does nothing then (the repository's own deadline still runs).
    With ``hooks.received``, and a VCS that reports its progress, the bytes received
    so far go to it (:func:`throttled`).
    """
    with trio.CancelScope() as clone_scope:

        def ready() -> None:
            if watch.ready_at is not None:
                return  # once: a second call must not push the deadline back
            watch.ready_at = trio.current_time()
            if limit is not None:
                clone_scope.deadline = watch.ready_at + limit

        hooks = hooks or CloneHooks()
        need, received, progress = hooks.need, hooks.received, None
        if received is not None and vcs.reports_progress:
            progress = throttled(received)
        if need is None:
            return await vcs.clone(url, credential=credential, on_ready=ready, on_progress=progress)

        async def paused(nbytes: int, reclaimable: int = 0, /, *, refusable: bool = False) -> bool:
            deadline, started = clone_scope.deadline, trio.current_time()
            clone_scope.deadline = math.inf
            assert need is not None
            try:
                return await need(nbytes, reclaimable, refusable=refusable)
            finally:
                # A deadline not set yet (before on_ready) stays unset.
                clone_scope.deadline = deadline + (trio.current_time() - started)

        if not hooks.keep_worker:
            return await vcs.clone(
                url, credential=credential, on_ready=ready, on_memory=paused, on_progress=progress
            )
        return await vcs.clone(
            url,
            credential=credential,
            on_ready=ready,
            on_memory=paused,
            on_progress=progress,
            keep_worker=True,
        )
    assert limit is not None
    raise CloneTimeoutError(shown, f"the clone took longer than {limit:g} s")


async def discard(source: ClonedSource, shown: str) -> None:
    """Remove a clone; a failure is a warning: its report stands."""
    try:
        await source.aclose()
    except OSError as exc:
        logger.warning("could not remove the clone of %s at %s: %s", shown, source.path, exc)

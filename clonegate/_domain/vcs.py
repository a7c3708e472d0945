"""The VCS port: what the use case needs from a version-control adapter, and what it gets back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol

from .credentials import Credential
from .memory import MemoryNeed

__all__ = ["VCS", "ClonedSource", "RemoteHead", "Remove"]

# Removes a directory and all under it, shielded from cancellation, never abandoned.
Remove = Callable[[Path], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class ClonedSource:
    """A repository cloned onto local disk.

    Attributes:
      url: the repository URL, credentials redacted.
      path: the repository directory (a bare repository unless ``has_worktree``).
      branch: the remote HEAD's branch, e.g. ``main``.
      commit: the full hex sha of that branch's tip.
      committed_at: the tip's commit time, with its timezone.
      bytes_on_disk: the size of everything under ``path``.
      has_worktree: whether the files are checked out, or only in the object store.
      owned_root: the directory :meth:`aclose` removes (``path`` itself, or the private
        temporary directory around it); ``None`` if the caller chose the destination.
      redirected_to: the repository URL an http(s) redirect led to, if there was one.
      peak_memory: bytes the clone used at most, on top of what its process started
        with, where the VCS measured it (a memory budget learns from it).
      remove: what :meth:`aclose` removes the clone with (keyword only): the domain
        does no I/O (``DulwichVCS`` passes a shielded rmtree run in a thread).
    """

    url: str
    path: Path
    branch: str
    commit: str
    committed_at: datetime
    bytes_on_disk: int
    has_worktree: bool
    owned_root: Path | None
    redirected_to: str | None = None
    peak_memory: int | None = None

    remove: Remove | None = field(default=None, repr=False, compare=False, kw_only=True)

    async def aclose(self) -> None:
        """Remove the clone from disk (``owned_root``, else ``path``) with ``remove``,
        which the VCS that made it gave. Idempotent.

        Removal is shielded from cancellation and never abandoned half-way: once
        started, the directory is gone when this returns. Raises TypeError if the
        VCS gave no ``remove``.
        """
        if self.remove is None:
            raise TypeError("this ClonedSource has no remove= (its VCS must say how)")
        await self.remove(self.owned_root if self.owned_root is not None else self.path)


@dataclass(frozen=True, slots=True)
class RemoteHead:
    """What a remote's HEAD points at, as its ref listing says: no pack transferred."""

    branch: str  # e.g. ``main``; empty if the server does not say
    commit: str  # full hex sha


class VCS(Protocol):
    """Clones one repository, and lists a remote's HEAD. Adapters hold no limit of their
    own (ADR 0003). What used to be optional capabilities (memory forecasts, remote
    heads) are members here (ADR 0017): an adapter without one says so (``None``, or
    :exc:`NotImplementedError`), and the use case never probes with ``isinstance``.
    """

    @property
    def depth(self) -> int | None:
        """Commits of history per clone (None: the whole branch); recorded with a run,
        and what a clone's stored memory figure is kept by (ADR 0014)."""
        ...

    @property
    def max_memory(self) -> int:
        """Bytes one clone may use at most: what a memory budget reserves for a clone
        before any clone has said what it needs (ADR 0014)."""
        ...

    @property
    def opening_memory(self) -> int | None:
        """Bytes a clone uses before it first awaits ``on_memory``; None for a VCS whose
        clones say nothing of their memory (``on_memory`` is then never given)."""
        ...

    @property
    def idle_memory(self) -> int:
        """Bytes a clone's worker may keep while it waits for the next clone; 0 for a VCS
        that keeps none. Under a memory budget a worker is kept only for a caller that
        reserved this much for it (``keep_worker``, ADR 0014)."""
        ...

    @property
    def reports_progress(self) -> bool:
        """Whether a clone tells ``on_progress`` the bytes it received; False for a VCS
        whose clones say nothing of it (``on_progress`` is then never given)."""
        ...

    async def clone(
        self,
        url: str,
        destination: Path | None = None,
        *,
        credential: Credential | None = None,
        on_ready: Callable[[], object] | None = None,
        on_memory: MemoryNeed | None = None,
        on_progress: Callable[[int], object] | None = None,
        keep_worker: bool = False,
    ) -> ClonedSource:
        """Clone ``url``'s default branch into ``destination`` (a new private directory if None).

        ``credential``, when given, is the one bound to ``url``'s own origin
        (:func:`.credentials.credential_for` chose it); it must go to that origin only.

        ``on_ready``, when given, must be called once, from the calling task, with no
        arguments, when the adapter's own set-up is done (for :class:`DulwichVCS`, a
        worker process is running) and the clone itself begins; an adapter with no
        set-up calls it first. The use case starts the clone timeout there, so that
        set-up never counts against it, and reports the set-up time on its own
        (``Timings.setup``).

        ``on_memory`` (given only when :attr:`opening_memory` is not None, under a
        memory budget): awaited, from the calling task, with the bytes the clone will
        use in all from then on, before it uses them, and how many of them are file
        pages it maps (reclaimable, counted in its peak). It returns once they are
        reserved (or at once, if they were); the clone timeout does not run while it
        waits. With ``on_memory``, the clone's worker is kept for the next clone only
        with ``keep_worker``: the caller counted :attr:`idle_memory` as reserved.

        ``on_progress`` (given only when :attr:`reports_progress`): called, from the
        calling task and without awaiting, with the bytes received so far, now and
        then (rarely enough to be cheap; none for a clone too small to mention).

        Raises a :class:`clonegate.CloneError` subclass on failure, or
        :exc:`trio.Cancelled` when the caller's scope is cancelled; in both cases
        nothing is left on disk and no process is left running when it returns.
        """
        ...

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        """The remote HEAD of ``url``: one ref listing, under the clone's own timeouts,
        credential rules and envelope (a server advertising too many refs is refused);
        an incremental run asks it. A VCS that cannot list raises
        :exc:`NotImplementedError` (an incremental run then refuses it when made).

        Raises the :class:`clonegate.CloneError` subclass a clone would (``not_found``,
        ``empty`` for a HEAD-less repository, ``auth``, ...); on cancellation nothing
        is left running.
        """
        ...

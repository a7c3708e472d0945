"""The dulwich VCS adapter: shallow, single-branch clones in killable worker processes."""

from __future__ import annotations

import dataclasses
import errno
import logging
import os
from collections.abc import Callable
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import final

import trio

from ..._domain.credentials import Credential
from ..._domain.errors import (
    ERROR_TYPES,
    CloneCancelledError,
    CloneError,
    InvalidURLError,
    OutOfMemoryError,
    StorageError,
)
from ..._domain.memory import MemoryNeed
from ..._domain.sizes import format_size
from ..._domain.urls import RepoURL, parse_repo_url
from ..._domain.vcs import ClonedSource, RemoteHead
from ..clones import discard
from ..workers import WorkerDied, WorkerPool, run_pool
from ..workers.zygote import RETIRE_GROWTH
from . import pack_forecast
from .clean_up import clean_up
from .clone_job import CLONE, HEAD, CloneJob, clone_job, envelope_of, kind_of
from .debris import new_clone_directory
from .kept_clone import KeptClone
from .kept_debris import sweep_once
from .kept_place import (
    KeptPlace,
    UnsafePlace,
    make_staging,
    open_parent,
)
from .settings import CloneSettings

__all__ = ["DulwichVCS"]

logger = logging.getLogger(__name__)


@final
class DulwichVCS:
    """Clones the remote HEAD branch of a repository with dulwich, in a worker process.

    Args:
      settings: how it clones (:class:`CloneSettings`: depth, timeouts, envelope,
        where clones go); the defaults when None.
      pool: the worker pool its clones run in (the composition's, ADR 0017); when
        None, the ``trio.run``'s own (:func:`~clonegate._adapters.workers.run_pool`).
      allow_local: accept ``file://`` URLs and local paths (tests, the demo).

    Each clone runs in a worker process of its own, forked from a preloaded zygote
    (ADR 0003), in its pool. The caller's cancel scope is the overall deadline: on
    cancellation the worker is killed, the clone's directory removed, and only then
    does :meth:`clone` raise :exc:`trio.Cancelled`, so a limit slot held around the
    call is held until the clone is really gone. The adapter has no concurrency limit of its own.

    :meth:`remote_head` asks a remote for its HEAD without cloning (an incremental
    run), under the same rules; a clone says what its pack will need in memory before
    it indexes it (``on_memory``): the whole ``VCS`` port (``clonegate._domain.vcs``).
    """

    # Before its pack is on disk a clone holds the client, its buffers and the refs
    # (the envelope bounds their number): what the pack's first pass also starts from.
    opening_memory = pack_forecast.FIRST_PASS_BASE
    # Its workers tell the pack bytes they received (pack_intake.ReceivedNotes).
    reports_progress = True
    # A served worker retires once it grew this much (ADR 0003): what it may keep idle.
    idle_memory = RETIRE_GROWTH

    def __init__(
        self,
        settings: CloneSettings | None = None,
        *,
        pool: WorkerPool | None = None,
        allow_local: bool = False,
    ) -> None:
        self.settings = settings = settings if settings is not None else CloneSettings()
        self._pool = pool  # None: the run's own, when a job first needs it
        self._allow_local = allow_local
        self._envelope = envelope_of(settings)

    @property
    def depth(self) -> int | None:
        """Commits of history per clone (None: the whole branch)."""
        return self.settings.depth

    @property
    def max_memory(self) -> int:
        """Bytes of memory one clone may use on top of its worker's start."""
        return self.settings.max_memory

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
        """Clone ``url`` into ``destination`` (must not exist yet) or a private temporary directory.

        ``on_ready`` is called once a worker process is running, right before the clone
        job is handed to it: starting the workers' zygote (a Python interpreter that
        imports dulwich, once per pool) is set-up, not clone time.

        ``credential`` authenticates https on its own origin (scheme, host and port
        of ``url``), and only in answer to the server's 401 challenge; it is refused
        (:class:`InvalidURLError`) for a URL on any other origin. User-info written in
        ``url`` is used as written, in the same way, and wins over ``credential``.
        Neither is ever written to ``.git/config`` nor shown in any message, nor sent
        after a redirect to another origin. Redirects are followed on the first
        request only, up to 5 hops, never from https to http (ADR 0013).

        ``on_memory`` (the VCS port's forecasts): awaited, from the calling task,
        with the bytes the clone will use in all from then on, before each pass over
        its pack that needs them (ADR 0014); at most the adapter's ``max_memory``.

        ``on_progress`` hears the pack bytes received so far, at most once per 256 KiB
        and per 0.25 s of the worker's clock (ADR 0003); never past ``max_repo_size``.

        Raises :exc:`clonegate.CloneError` subclasses; see :class:`clonegate.ErrorKind`.
        """
        repo = parse_repo_url(url, allow_local=self._allow_local)
        shown = repo.redacted
        username, password = _credentials(repo, credential)
        keep = None
        if destination is None and self.settings.keep_in is not None:
            keep = KeptPlace(str(self.settings.keep_in), str(repo.kept_path))
        asks, progress = on_memory is not None, on_progress is not None
        # Served: a worker takes clone after clone while they succeed, each with its own
        # allowance and peak (ADR 0003). The file-size limit is part of the kind: a
        # worker's hard limit cannot be raised for a later job. Under a memory budget
        # only if the caller reserved what an idle worker keeps (idle_memory), which no
        # clone's lease counts (ADR 0014).
        reuse = kind_of(self._envelope) if not asks or keep_worker else None
        pool, first = self._pool or run_pool(), None
        if destination is None and keep is None:
            # The command line's first clone, started from its raw arguments, if it is
            # this one: run as if this call had started it (ADR 0003, issue 47).
            same = partial(self._is_own, repo, username, password, asks, progress)
            first = await pool.claim_first(reuse, self._envelope.max_memory, same)
        if first is not None:
            assert isinstance(first.job, CloneJob)
            assert first.leftover is not None
            job, target = first.job, Path(first.job.target)
            owned_root: Path | None = Path(first.leftover)
            logger.info("%s: the clone started with the command line goes on", shown)
        else:
            owned_root, target, keep = await trio.to_thread.run_sync(
                self._make_target, repo, destination, keep
            )
            job = clone_job(self.settings, repo, username, password, target=str(target), keep=keep)
            job = dataclasses.replace(job, ask_memory=asks, tell_progress=progress)
        answer = None
        if on_memory is not None:
            cap = self._envelope.max_memory

            async def answer(question: object) -> bool:
                # From the worker: believed only as two numbers and a flag, never past
                # the cap. The answer: whether they are held.
                figures = memory_question(question)
                if figures is None:
                    await trio.lowlevel.checkpoint()
                    return False
                nbytes, pages, refusable = figures
                return await on_memory(min(nbytes, cap), min(pages, cap), refusable=refusable)

        try:
            outcome, peak = await pool.run(
                CLONE,
                job,
                on_ready=on_ready,
                memory_allowance=self._envelope.max_memory,
                reuse=reuse,
                on_question=answer,
                on_note=self._progress_to(on_progress),
                first=first,
            )
        except BaseException as exc:
            # Cancelled, KeyboardInterrupt, or a worker killed from outside: the worker
            # is dead by now (run_in_worker waits for it); remove what it left.
            await clean_up(keep, owned_root, target, shown)
            if isinstance(exc, WorkerDied):
                raise _died(shown, exc, "the clone") from None
            if _out_of_descriptors(exc):  # nothing to wait for (ADR 0003)
                raise StorageError(shown, "no worker process: " + _OUT_OF_DESCRIPTORS) from None
            raise
        if outcome.error_kind is not None:
            await clean_up(keep, owned_root, target, shown)
            error = ERROR_TYPES[outcome.error_kind](shown, outcome.error_reason)
            error.peak_memory, error.retry_after = peak, outcome.retry_after
            raise error
        if keep is not None:
            await clean_up(keep, owned_root, target, shown)  # the staging directory, empty
            target = owned_root = Path(keep.keep_in, keep.relative)
        source = ClonedSource(
            url=shown,
            path=target,
            branch=outcome.branch,
            commit=outcome.commit,
            committed_at=datetime.fromisoformat(outcome.committed_at),
            bytes_on_disk=outcome.bytes_on_disk,
            has_worktree=self.settings.checkout,
            owned_root=owned_root or target,
            redirected_to=outcome.redirected_to or None,
            peak_memory=peak,
            remove=discard,
        )
        # A kept clone is removed by aclose as it was reached, never by its path.
        return source if keep is None else KeptClone.of(source, keep)

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        """The commit ``url``'s HEAD points at, and its branch, from one ref listing.

        What ``git ls-remote <url> HEAD`` asks: the server's ref advertisement (over
        protocol v2, only the ``HEAD`` ref), in a worker process of its pool
        like a clone (one that serves listing after listing while they succeed). No
        ``want`` is sent, so no pack is transferred, and nothing is written to disk:
        no directory is made, not even a temporary one.

        ``branch`` is the branch the server says HEAD is a symbolic ref to, without
        ``refs/heads/``; ``""`` if the server does not say (a detached HEAD, an old
        server). ``commit`` is the full hex id HEAD points at, the ``commit`` a clone
        made now would report.

        The rules are :meth:`clone`'s: the same URL policy (``allow_local``), the
        same ``credential`` rules (https and http only, sent to its own origin in
        answer to a 401; a credential bound to another origin is refused with
        :class:`InvalidURLError` before anything is sent; user-info in ``url``
        wins; neither is ever shown in a message), the same connect and read
        timeouts, ssh command and CA bundle, the same envelope (an advertisement
        past its byte cap is ``too_large``, one slower than the low-speed limit
        ``too_slow``) and memory cap, and the same :class:`clonegate.CloneError`
        subclasses: a repository the server does not serve is ``not_found``, one
        with no commit on its HEAD ``empty_repository``, a worker killed from
        outside ``cancelled`` (``out_of_memory`` if the kernel's OOM killer did it).

        On cancellation the worker is killed, and this raises :exc:`trio.Cancelled`
        only once it is dead: nothing is left running.
        """
        repo = parse_repo_url(url, allow_local=self._allow_local)
        username, password = _credentials(repo, credential)
        # The job a clone of this URL would get, with no target: nothing is written.
        job = clone_job(self.settings, repo, username, password, target="", keep=None)
        try:
            outcome, _peak = await (self._pool or run_pool()).run(
                HEAD, job, memory_allowance=self._envelope.max_memory, reuse="listing"
            )
        except WorkerDied as exc:
            raise _died(repo.redacted, exc, "the ref listing") from None
        if outcome.error_kind is not None:
            error = ERROR_TYPES[outcome.error_kind](repo.redacted, outcome.error_reason)
            error.retry_after = outcome.retry_after
            raise error
        return RemoteHead(branch=outcome.branch, commit=outcome.commit)

    def _progress_to(self, on_progress: Callable[[int], object] | None) -> Callable[[object], None]:
        """What hears a worker's notes: believed only as a byte count within the
        envelope's limit, and passed on (a note the worker never sends is dropped)."""
        cap = self._envelope.max_repo_bytes

        def heard(note: object) -> None:
            if on_progress is not None and type(note) is int and note >= 0:
                on_progress(min(note, cap))

        return heard

    def _is_own(
        self,
        repo: RepoURL,
        username: str | None,
        password: str | None,
        asks: bool,
        progress: bool,
        job: object,
    ) -> bool:
        """Whether ``job`` (a first clone's) is the one this clone of ``repo`` would
        send, all but its private directory: same URL, credentials, settings,
        envelope, questions and notes."""
        if not isinstance(job, CloneJob):
            return False
        own = clone_job(self.settings, repo, username, password, target=job.target, keep=None)
        return dataclasses.replace(own, ask_memory=asks, tell_progress=progress) == job

    def _make_target(
        self, repo: RepoURL, destination: Path | None, keep: KeptPlace | None
    ) -> tuple[Path | None, Path, KeptPlace | None]:
        if keep is not None:
            # Absolute, as of this call: the worker's working directory is the pool's.
            keep = dataclasses.replace(keep, keep_in=os.path.abspath(keep.keep_in))
            # A kept clone is staged beside its place, on the same file system, so that
            # one rename puts it there (hidden there, beside the user's clones).
            staging = _make_staging(repo, keep)
            root = Path(keep.keep_in, keep.relative).parent / staging
            return root, root / repo.directory_name, dataclasses.replace(keep, staging=staging)
        if destination is not None:
            if destination.exists() or destination.is_symlink():
                raise StorageError(repo.redacted, f"the destination {destination} already exists")
            if not destination.parent.is_dir():
                raise StorageError(repo.redacted, f"no such directory: {destination.parent}")
            return None, destination, None
        try:
            # 0700: other users cannot read private clones.
            root = new_clone_directory(self.settings.work_dir)
        except OSError as exc:
            raise StorageError(
                repo.redacted, f"cannot create a work directory: {exc.strerror}"
            ) from None
        return root, root / repo.directory_name, None


def _make_staging(repo: RepoURL, keep: KeptPlace) -> str:
    """The directories down to ``keep``'s place, made without following a symbolic
    link (kept_place), and a private (0700) staging directory there."""
    try:
        parent = open_parent(keep, create=True)
        try:
            sweep_once(keep.keep_in)  # what killed runs left under the keep directory
            return make_staging(parent)
        finally:
            os.close(parent)
    except UnsafePlace as exc:
        raise StorageError(repo.redacted, str(exc)) from None
    except OSError as exc:
        where = os.path.dirname(keep.shown)
        raise StorageError(repo.redacted, f"cannot create {where}: {exc.strerror}") from None


_OUT_OF_DESCRIPTORS = "this process is out of file descriptors (see ulimit -n; lower -j)"


def _out_of_descriptors(exc: BaseException) -> bool:
    """Whether ``exc`` is EMFILE or ENFILE, or the pool's failure to start from one."""
    cause = exc if isinstance(exc, OSError) else exc.__cause__
    return isinstance(cause, OSError) and cause.errno in (errno.EMFILE, errno.ENFILE)


def _died(shown: str, exc: WorkerDied, what: str) -> CloneError:
    """The error for a job whose worker ended without a reply (killed from outside,
    or by the kernel's out-of-memory killer)."""
    died: CloneError
    if exc.out_of_memory:
        used = format_size(exc.peak_rss_bytes)
        died = OutOfMemoryError(
            shown, f"the kernel's out-of-memory killer ended {what} (at {used})"
        )
    else:
        died = CloneCancelledError(
            shown, f"{what}'s worker process died before finishing (it was {exc.how})"
        )
    died.peak_memory = exc.peak_rss_bytes
    return died


def _credentials(repo: RepoURL, credential: Credential | None) -> tuple[str | None, str | None]:
    if repo.scheme not in ("https", "http"):
        return None, None
    if repo.username is not None or repo.password is not None:
        # The URL's own user-info: the user's explicit choice for this one remote.
        return repo.username, repo.password
    if credential is None:
        return None, None
    if not credential.matches(repo):
        raise InvalidURLError(
            repo.redacted, f"the credential given is bound to {credential.origin}, not this URL"
        )
    return credential.username, credential.password


def memory_question(question: object) -> tuple[int, int, bool] | None:
    """A worker's question about memory (``pack_index``'s ``need``): the bytes its
    clone will use from then on, how many of them are its pack's pages, and whether
    the question may be refused (see ``MemoryNeed``), as ``(nbytes, reclaimable,
    refusable)``;
    ``None`` for anything else. A bare count has no pages; a pair waits."""
    if type(question) is int:
        question = (question, 0)
    if type(question) is tuple and len(question) == 2:
        question = (*question, False)
    if type(question) is not tuple or len(question) != 3:
        return None
    nbytes, reclaimable, refusable = question
    if type(nbytes) is not int or type(reclaimable) is not int or type(refusable) is not bool:
        return None
    return (nbytes, reclaimable, refusable) if 0 <= reclaimable <= nbytes else None

"""The part of a clone that runs inside a worker process (ADR 0003).

Everything here runs in a worker process (one per clone), never in the caller's process: dulwich
holds the GIL while it unpacks, and a process is the only thing that can be stopped
for certain. Arguments and results are plain picklable data. Exceptions never cross
the process boundary: each is classified into an ``ErrorKind`` and a message with every
secret removed, so no traceback can carry a token out.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import shutil
import signal
import socket
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._domain.errors import ErrorKind
from ..._domain.sizes import format_size
from ..._domain.urls import redact
from ..workers.zygote import ask_parent, end_after_reply, tell_parent
from .checkout_size import bytes_under, ensure_checkout_fits
from .clone_config import record_refs
from .clone_job import CloneJob, CloneOutcome
from .envelope import Breach, TransferMeter
from .isolation import checkout, isolated_repo_class
from .kept_place import KeptPlace, UnsafePlace, open_directory, open_parent, through
from .worker_errors import Failure, classify, handshake_timeout, retry_after_of, ssh_seconds
from .worker_http import GuardedPool, bound_tls_handshake

if TYPE_CHECKING:
    from dulwich.client import GitClient

# What a clone and its ssh child need from the environment, and nothing else: no
# token, no unrelated secret reaches a child (ssh, or anything it starts).
_KEPT_VARIABLES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "SSH_AUTH_SOCK"}
    | {"SSL_CERT_FILE", "SSL_CERT_DIR"}
    | {f"{name}_proxy" for name in ("http", "https", "all", "no")}
    | {f"{name}_PROXY" for name in ("HTTP", "HTTPS", "ALL", "NO")}
)
# Set for the clone: no prompt may ever wait, and no git configuration but the
# repository's own is read (dulwich honours these as git does).
_SET_VARIABLES = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def clone_in_worker(job: CloneJob) -> CloneOutcome:
    """Clone ``job.url``'s remote HEAD branch into ``job.target``; never raises."""
    try:
        return _clone(job)
    except (Exception, Breach) as exc:  # every failure becomes data (module docstring)
        # A served worker (DulwichVCS.clone) takes the next clone only after a clean
        # one: a failure may have left a socket, a child or a big heap behind.
        end_after_reply()
        kind, reason = failure_of(exc, job)
        wait = retry_after_of(exc) if isinstance(exc, Exception) else None
        return CloneOutcome(error_kind=kind, error_reason=reason, retry_after=wait)


def failure_of(exc: Exception | Breach, job: CloneJob) -> tuple[ErrorKind, str]:
    """The kind and message of ``exc``, raised by a job for ``job.url``, with every
    secret scrubbed: user-info in any URL the text quotes, and the job's password and
    user name wherever else a server or a library echoed them."""
    if isinstance(exc, Breach):
        return exc.kind, exc.reason
    kind, reason = classify(exc, job, has_credentials=job.username is not None, mid_transfer=False)
    reason = redact(reason)
    for secret in (s for s in (job.password, job.username) if s and len(s) >= 4):
        reason = reason.replace(secret, "***")
    return kind, reason


def minimal_environment() -> None:
    """Reduce this worker's environment to what a clone needs (``_KEPT_VARIABLES``).

    Children (ssh) inherit it. This process runs one clone at a time and owns its
    environment; the parent's is untouched.
    """
    kept = {k: v for k, v in os.environ.items() if k in _KEPT_VARIABLES or k.startswith("LC_")}
    os.environ.clear()
    os.environ.update(kept | _SET_VARIABLES)


def _clone(job: CloneJob) -> CloneOutcome:
    # git:// and ssh have no timeout of their own in dulwich: a socket default bounds
    # the connect and every read. This process runs one clone at a time, so the
    # process-wide setting is ours alone. HTTP gets explicit urllib3 timeouts.
    socket.setdefaulttimeout(job.read_timeout)
    minimal_environment()
    # No file of the clone may pass the repository size limit: past it, a write
    # fails with EFBIG (SIGXFSZ, which would kill the worker, is ignored).
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = job.envelope.max_repo_bytes
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    client, path = _client_for(job)
    if job.keep is not None:
        outcome = _keep(job, job.keep, client, path)
    else:
        outcome = _new_clone(job, client, path, job.target)
    pool = getattr(client, "pool_manager", None)
    if isinstance(pool, GuardedPool) and pool.redirected_to:
        where = pool.redirected_to.split("?")[0].removesuffix("/info/refs")
        outcome = dataclasses.replace(outcome, redirected_to=redact(where))
    return outcome


def _keep(job: CloneJob, place: KeptPlace, client: GitClient, path: str) -> CloneOutcome:
    """Clone into ``place``, or update the clone there, through directory descriptors
    only (kept_place): no symbolic link below the keep directory is ever followed."""
    try:
        parent = open_parent(place, create=False)
        try:
            return _clone_or_update(job, place, client, path, parent)
        finally:
            os.close(parent)
    except UnsafePlace as exc:
        raise Failure(ErrorKind.STORAGE, str(exc)) from None


def _clone_or_update(
    job: CloneJob, place: KeptPlace, client: GitClient, path: str, parent: int
) -> CloneOutcome:
    try:
        os.lstat(place.name, dir_fd=parent)
    except FileNotFoundError:
        staging = open_directory(parent, place.staging, f"{place.shown}'s staging directory")
        try:
            name = os.path.basename(job.target)
            outcome = _new_clone(job, client, path, f"{through(staging)}/{name}")
            _move_into_place(place, staging, name, parent)
        finally:
            os.close(staging)
        return outcome
    at = open_directory(parent, place.name, place.shown)
    try:
        return _update(job, place, client, path, through(at))
    finally:
        os.close(at)


def _move_into_place(place: KeptPlace, staging: int, name: str, parent: int) -> None:
    # Complete, then moved into place in one rename: the stable path never holds a
    # half-made clone, whatever stops this one. Between descriptors: a path is not
    # walked again.
    try:
        os.rename(name, place.name, src_dir_fd=staging, dst_dir_fd=parent)
    except OSError as exc:
        raise Failure(
            ErrorKind.STORAGE, f"cannot move the clone into place at {place.shown}: {exc.strerror}"
        ) from None


def _new_clone(job: CloneJob, client: GitClient, path: str, target: str) -> CloneOutcome:
    isolated = isolated_repo_class()
    Path(target).mkdir(mode=0o700)
    repo = isolated.init_bare(target) if job.bare else isolated.init(target)
    try:
        head, branch = _fetch_head(job, client, path, repo)
        if not job.bare:
            checkout(_within(job, repo, head, repo.get_worktree().reset_index))
        outcome = _outcome(repo, head, branch, target)
    finally:
        repo.close()  # an unclosed Repo makes noise from __del__ at exit
    if outcome.bytes_on_disk > job.envelope.max_repo_bytes:
        raise Failure(
            ErrorKind.TOO_LARGE,
            f"the clone takes {format_size(outcome.bytes_on_disk)} on disk "
            f"({outcome.bytes_on_disk} bytes), more than the limit of "
            f"{format_size(job.envelope.max_repo_bytes)}",
        )
    return outcome


def _within(
    job: CloneJob, repo: Any, head: bytes, write: Callable[[], object]
) -> Callable[[], None]:
    """``write``, once the files it writes are known to fit in the size limit."""

    def write_within() -> None:
        ensure_checkout_fits(repo, head, job.envelope.max_repo_bytes)
        write()

    return write_within


def _update(
    job: CloneJob, place: KeptPlace, client: GitClient, path: str, where: str
) -> CloneOutcome:
    """Bring the kept clone at ``place`` (opened as ``where``) to the remote's HEAD:
    fetch, then reset.

    Refuses, touching nothing, a directory that is not a clone of ``job.url`` of the
    same kind (bare or with a working tree): it may be someone's work, or another
    repository's clone.
    """
    from dulwich import porcelain
    from dulwich.errors import NotGitRepository

    try:
        repo = isolated_repo_class()(where)
    except (NotGitRepository, OSError, ValueError) as exc:
        # ValueError: a config dulwich cannot read (one an older clonegate wrote).
        what = "a git clone that can be read" if isinstance(exc, ValueError) else "a git clone"
        raise Failure(
            ErrorKind.STORAGE,
            f"{place.shown} exists and is not {what}; move it away or keep clones elsewhere",
        ) from None
    try:
        try:
            origin = repo.get_config().get((b"remote", b"origin"), b"url")
        except KeyError:
            origin = b""
        if origin != job.url.encode() or repo.bare != job.bare:
            worktree = "without" if job.bare else "with"
            raise Failure(
                ErrorKind.STORAGE,
                f"{place.shown} holds a clone of another repository, or not one {worktree} "
                "a working tree; move it away or keep clones elsewhere",
            )
        head, branch = _fetch_head(job, client, path, repo)
        if not job.bare:
            # The files too, deletions included.
            checkout(_within(job, repo, head, lambda: porcelain.reset(repo, "hard", head)))
        return _outcome(repo, head, branch, where)
    finally:
        repo.close()


def _fetch_head(job: CloneJob, client: GitClient, path: str, repo: Any) -> tuple[bytes, str]:
    """Fetch the remote HEAD's branch into ``repo`` and record its refs: (sha, branch)."""
    heard_refs = False
    # ssh (and local) transfers come through pipes and files, which only rchar sees.
    sockets = job.url.startswith(("git://", "http://", "https://"))
    meter = TransferMeter(job.envelope, pipes=not sockets)

    def wants_head(refs: Any, depth: int | None = None) -> Any:
        nonlocal heard_refs
        heard_refs = True
        meter.check_refs(len(refs))
        head = refs.get(b"HEAD")
        return [head] if head else []

    from .pack_intake import ReceivedNotes, fetch_into

    try:
        need = ask_parent if job.ask_memory else None
        notes = ReceivedNotes(tell_parent) if job.tell_progress else None
        result: Any = fetch_into(client, path, repo, wants_head, job.depth, meter, need, notes)
    except Failure:
        raise
    except Exception as exc:
        has_credentials = job.username is not None
        kind, reason = classify(exc, job, has_credentials=has_credentials, mid_transfer=heard_refs)
        raise Failure(kind, reason) from exc
    head: bytes | None = result.refs.get(b"HEAD")
    if not head:
        raise Failure(ErrorKind.EMPTY, "the repository has no commits on its HEAD branch")
    head_ref = result.symrefs.get(b"HEAD", b"")
    return head, record_refs(repo, job.url, head, head_ref)


def _outcome(repo: Any, head: bytes, branch: str, where: str) -> CloneOutcome:
    commit = repo[head]
    committed_at = datetime.fromtimestamp(
        commit.commit_time, timezone(timedelta(seconds=commit.commit_timezone))
    )
    return CloneOutcome(
        branch=branch,
        commit=head.decode("ascii"),
        committed_at=committed_at.isoformat(),
        bytes_on_disk=bytes_under(where),
    )


def _client_for(job: CloneJob) -> tuple[GitClient, str]:
    from urllib.parse import urlsplit

    from dulwich.client import Urllib3HttpGitClient, get_transport_and_path
    from dulwich.config import ConfigDict

    kwargs: dict[str, Any] = {}
    if job.url.startswith(("http://", "https://")):
        # Made here, not by get_transport_and_path: dulwich 1.2 drops the brackets of
        # an IPv6 host when it rebuilds the URL. Credentials go to the guard, never
        # to dulwich, which would send them before being asked.
        guarded: Any = GuardedPool(_pool_manager(job), job.url, job.username, job.password)
        http = Urllib3HttpGitClient(job.url, pool_manager=guarded, config=ConfigDict())
        return http, urlsplit(job.url).path
    if job.url.startswith("ssh://") or "://" not in job.url:
        # BatchMode: never prompt (an unknown host key or a passphrase fails instead).
        # setpriv --pdeathsig: if this worker is killed (a cancelled clone), the kernel
        # kills the ssh child too, instead of leaving it to run on as an orphan.
        guard = "setpriv --pdeathsig KILL -- " if shutil.which("setpriv") else ""
        kwargs["ssh_command"] = (
            f"{guard}{job.ssh_command} -o BatchMode=yes"
            f" -o ConnectTimeout={ssh_seconds(handshake_timeout(job)[0])}"
            f" -o ServerAliveInterval={ssh_seconds(job.read_timeout / 3)}"
            " -o ServerAliveCountMax=3"
        )
    # An empty config: the user's ~/.gitconfig must not rewrite URLs (insteadOf) or
    # call credential helpers behind our back.
    client, path = get_transport_and_path(job.url, config=ConfigDict(), **kwargs)
    return client, path


def _pool_manager(job: CloneJob) -> Any:
    import urllib.request

    import urllib3

    # retries=False: urllib3 would otherwise retry a timed-out read, multiplying the
    # timeout (2 s became 8 s in measurements).
    options: dict[str, Any] = {
        "timeout": urllib3.Timeout(connect=job.connect_timeout, read=job.read_timeout),
        "retries": False,
    }
    if job.ca_bundle is not None:
        options["ca_certs"] = job.ca_bundle
    parts = urllib3.util.parse_url(job.url)
    proxy = urllib.request.getproxies().get(parts.scheme or "")
    manager: Any
    if proxy and not urllib.request.proxy_bypass(parts.host or ""):
        manager = urllib3.ProxyManager(proxy, **options)
    else:
        manager = urllib3.PoolManager(**options)
    bound_tls_handshake(manager, *handshake_timeout(job))
    return manager

"""The part of a clone that runs inside a worker process (ADR 0003).

Everything here runs in a trio-parallel worker, never in the caller's process: dulwich
holds the GIL while it unpacks, and a process is the only thing that can be stopped
for certain. Arguments and results are plain picklable data. Exceptions never cross
the process boundary: each is classified into an ``ErrorKind`` and a message with every
secret removed, so no traceback can carry a token out.
"""

from __future__ import annotations

import dataclasses
import errno
import importlib
import os
import resource
import shutil
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..._domain.errors import ErrorKind
from ..._domain.urls import redact

if TYPE_CHECKING:
    from dulwich.client import GitClient

# A worker whose peak memory passed this is replaced after its current job, so one
# large repository does not leave a bloated process behind for the next ones.
RETIRE_ABOVE_PEAK_RSS_BYTES = 512 * 1024 * 1024
_NOT_FOUND_SIGNS = (
    "404",
    "not found",
    "no such repository",
    "not exported",
    "does not appear to be a git repository",
)
_STORAGE_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT})


@dataclass(frozen=True, slots=True)
class CloneJob:
    url: str  # no credentials
    shown_url: str  # redacted, for messages
    username: str | None
    password: str | None
    target: str
    bare: bool
    depth: int | None
    connect_timeout: float
    read_timeout: float
    ssh_command: str = "ssh"
    ca_bundle: str | None = None
    # A kept clone's stable home: cloned into ``target`` then moved here, or, if it is
    # already there, updated in place.
    keep_at: str | None = None

    def __repr__(self) -> str:  # never show the password, even in a debugger
        return f"CloneJob({self.shown_url!r} -> {self.target!r})"


@dataclass(frozen=True, slots=True)
class CloneOutcome:
    branch: str = ""
    commit: str = ""
    committed_at: str = ""  # ISO 8601 with offset
    bytes_on_disk: int = 0
    updated: bool = False  # an existing kept clone was fetched and reset, not cloned
    error_kind: ErrorKind | None = None
    error_reason: str = ""


class _Failure(Exception):
    def __init__(self, kind: ErrorKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason


def retire_if_bloated() -> bool:
    """trio-parallel ``retire`` hook: end this worker after its job if it grew too big."""
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak_kib * 1024 > RETIRE_ABOVE_PEAK_RSS_BYTES


def worker_ready() -> None:
    """The set-up job: starts a worker process if none is idle, and loads what a clone needs.

    Importing dulwich and urllib3 takes a third of a second on an idle machine; it is
    part of starting a worker, not of the clone, so it happens here, before on_ready.
    """
    for module in ("dulwich.client", "dulwich.config", "dulwich.errors", "dulwich.repo", "urllib3"):
        importlib.import_module(module)


def clone_in_worker(job: CloneJob) -> CloneOutcome:
    """Clone ``job.url``'s remote HEAD branch into ``job.target``; never raises."""
    secrets = [s for s in (job.password, job.username) if s and len(s) >= 4]
    try:
        return _clone(job)
    except Exception as exc:  # every failure becomes data; see the module docstring
        kind, reason = (
            (exc.kind, exc.reason) if isinstance(exc, _Failure) else _classify(exc, job, False)
        )
        reason = redact(reason)
        for secret in secrets:
            reason = reason.replace(secret, "***")
        return CloneOutcome(error_kind=kind, error_reason=reason)


def _clone(job: CloneJob) -> CloneOutcome:
    from dulwich.repo import Repo

    # git:// and ssh have no timeout of their own in dulwich: a socket default bounds
    # the connect and every read. This process runs one clone at a time, so the
    # process-wide setting is ours alone. HTTP gets explicit urllib3 timeouts.
    socket.setdefaulttimeout(job.read_timeout)
    os.environ["GIT_TERMINAL_PROMPT"] = "0"  # nothing may ever wait on a prompt

    client, path = _client_for(job)
    if job.keep_at is not None and os.path.lexists(job.keep_at):
        return _update(job, client, path)
    Path(job.target).mkdir(mode=0o700)
    repo = Repo.init_bare(job.target) if job.bare else Repo.init(job.target)
    try:
        head, branch = _fetch_head(job, client, path, repo)
        if not job.bare:
            repo.get_worktree().reset_index()
        outcome = _outcome(repo, head, branch, job.target)
    finally:
        repo.close()  # an unclosed Repo makes noise from __del__ at exit
    if job.keep_at is not None:
        # Complete, then moved into place in one rename: the stable path never holds a
        # half-made clone, whatever stops this one.
        os.rename(job.target, job.keep_at)
    return outcome


def _update(job: CloneJob, client: GitClient, path: str) -> CloneOutcome:
    """Bring the kept clone at ``job.keep_at`` to the remote's HEAD: fetch, then reset.

    Refuses, touching nothing, a directory that is not a clone of ``job.url`` of the
    same kind (bare or with a working tree): it may be someone's work, or another
    repository's clone.
    """
    from dulwich import porcelain
    from dulwich.errors import NotGitRepository
    from dulwich.repo import Repo

    assert job.keep_at is not None
    try:
        repo = Repo(job.keep_at)
    except (NotGitRepository, OSError):
        raise _Failure(
            ErrorKind.STORAGE,
            f"{job.keep_at} exists and is not a git clone; move it away or keep clones elsewhere",
        ) from None
    try:
        try:
            origin = repo.get_config().get((b"remote", b"origin"), b"url")
        except KeyError:
            origin = b""
        if origin != job.url.encode() or repo.bare != job.bare:
            worktree = "without" if job.bare else "with"
            raise _Failure(
                ErrorKind.STORAGE,
                f"{job.keep_at} holds a clone of another repository, or not one {worktree} "
                "a working tree; move it away or keep clones elsewhere",
            )
        head, branch = _fetch_head(job, client, path, repo)
        if not job.bare:
            porcelain.reset(repo, "hard", head)  # the files too, deletions included
        outcome = _outcome(repo, head, branch, job.keep_at)
    finally:
        repo.close()
    return dataclasses.replace(outcome, updated=True)


def _fetch_head(job: CloneJob, client: GitClient, path: str, repo: Any) -> tuple[bytes, str]:
    """Fetch the remote HEAD's branch into ``repo`` and record its refs: (sha, branch)."""
    heard_refs = False

    def wants_head(refs: Any, depth: int | None = None) -> Any:
        nonlocal heard_refs
        heard_refs = True
        head = refs.get(b"HEAD")
        return [head] if head else []

    try:
        result: Any = client.fetch(
            path, repo, determine_wants=wants_head, depth=job.depth, ref_prefix=[b"HEAD"]
        )
    except Exception as exc:
        if not heard_refs and _is_hangup(exc) and job.url.startswith("git://"):
            # git daemon closes the connection, without a word, on a path it
            # does not serve.
            raise _Failure(
                ErrorKind.NOT_FOUND,
                "repository not found (the server closed the connection before listing refs)",
            ) from exc
        raise _Failure(*_classify(exc, job, mid_transfer=heard_refs)) from exc
    head: bytes | None = result.refs.get(b"HEAD")
    if not head:
        raise _Failure(ErrorKind.EMPTY, "the repository has no commits on its HEAD branch")
    head_ref = result.symrefs.get(b"HEAD", b"")
    return head, _record_refs(repo, job.url, head, head_ref)


def _outcome(repo: Any, head: bytes, branch: str, where: str) -> CloneOutcome:
    commit = repo[head]
    committed_at = datetime.fromtimestamp(
        commit.commit_time, timezone(timedelta(seconds=commit.commit_timezone))
    )
    return CloneOutcome(
        branch=branch,
        commit=head.decode("ascii"),
        committed_at=committed_at.isoformat(),
        bytes_on_disk=sum(_file_sizes(Path(where))),
    )


def _client_for(job: CloneJob) -> tuple[GitClient, str]:
    from dulwich.client import get_transport_and_path
    from dulwich.config import ConfigDict

    kwargs: dict[str, Any] = {}
    if job.url.startswith(("http://", "https://")):
        kwargs["pool_manager"] = _pool_manager(job)
        kwargs["username"] = job.username
        kwargs["password"] = job.password
    elif job.url.startswith("ssh://") or "://" not in job.url:
        # BatchMode: never prompt (an unknown host key or a passphrase fails instead).
        # setpriv --pdeathsig: if this worker is killed (a cancelled clone), the kernel
        # kills the ssh child too, instead of leaving it to run on as an orphan.
        guard = "setpriv --pdeathsig KILL -- " if shutil.which("setpriv") else ""
        kwargs["ssh_command"] = (
            f"{guard}{job.ssh_command} -o BatchMode=yes"
            f" -o ConnectTimeout={max(1, round(job.connect_timeout))}"
            f" -o ServerAliveInterval={max(1, round(job.read_timeout / 3))}"
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
    proxy = urllib.request.getproxies().get(job.url.split(":", 1)[0])
    host = job.url.split("/")[2].rsplit("@", 1)[-1].split(":")[0]
    if proxy and not urllib.request.proxy_bypass(host):
        return urllib3.ProxyManager(proxy, **options)
    return urllib3.PoolManager(**options)


def _record_refs(repo: Any, url: str, head: bytes, head_ref: bytes) -> str:
    """Set the refs and the config a ``git clone --single-branch`` would have."""
    if not head_ref.startswith(b"refs/heads/"):
        repo.refs[b"HEAD"] = head  # the server's HEAD is detached: so is ours
        return ""
    branch = head_ref.removeprefix(b"refs/heads/")
    tracking = b"refs/remotes/origin/" + branch
    repo.refs[head_ref] = head
    repo.refs.set_symbolic_ref(b"HEAD", head_ref)
    repo.refs[tracking] = head
    config = repo.get_config()
    # The URL recorded is the one without credentials: tokens never reach .git/config.
    config.set((b"remote", b"origin"), b"url", url.encode())
    config.set((b"remote", b"origin"), b"fetch", b"+" + head_ref + b":" + tracking)
    config.set((b"branch", branch), b"remote", b"origin")
    config.set((b"branch", branch), b"merge", head_ref)
    config.write_to_path()
    return branch.decode("utf-8", "replace")


def _file_sizes(root: Path) -> Iterator[int]:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            yield os.lstat(os.path.join(dirpath, name)).st_size


def _is_hangup(exc: BaseException) -> bool:
    from dulwich.errors import HangupException

    return isinstance(exc, HangupException)


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _classify(exc: Exception, job: CloneJob, mid_transfer: bool) -> tuple[ErrorKind, str]:
    from dulwich.client import HTTPUnauthorized
    from dulwich.errors import GitProtocolError, HangupException, NotGitRepository

    chain = list(_chain(exc))
    text = " ".join(str(e) for e in chain).lower()
    for e in chain:
        if isinstance(e, HTTPUnauthorized):
            if job.username is None:
                return ErrorKind.AUTHENTICATION, "authentication required (no credentials given)"
            return ErrorKind.AUTHENTICATION, "authentication failed (the credentials were refused)"
        if isinstance(e, socket.gaierror):
            return ErrorKind.TRANSPORT, f"unknown host ({e.strerror or e})"
        if isinstance(e, ConnectionRefusedError):
            return ErrorKind.TRANSPORT, "connection refused"
        if isinstance(e, TimeoutError) or type(e).__name__ in (
            "ReadTimeoutError",
            "ConnectTimeoutError",
        ):
            return ErrorKind.TIMEOUT, (
                f"no answer within the {job.read_timeout:g} s read timeout"
                if "connect" not in type(e).__name__.lower()
                else f"could not connect within {job.connect_timeout:g} s"
            )
        if isinstance(e, OSError) and e.errno in _STORAGE_ERRNOS:
            return ErrorKind.STORAGE, f"cannot write the clone: {e.strerror}"
        if isinstance(e, NotGitRepository):
            return ErrorKind.NOT_FOUND, "repository not found"
    if "permission denied" in text:  # ssh: the key was refused
        return ErrorKind.AUTHENTICATION, "authentication failed (ssh: permission denied)"
    if "host key verification failed" in text:
        return ErrorKind.TRANSPORT, "ssh host key verification failed (unknown or changed host key)"
    if "could not resolve hostname" in text:
        return ErrorKind.TRANSPORT, "unknown host"
    if "connection refused" in text:
        return ErrorKind.TRANSPORT, "connection refused"
    if "certificate verify failed" in text:
        return ErrorKind.TRANSPORT, "TLS certificate verification failed"
    if any(sign in text for sign in _NOT_FOUND_SIGNS):
        return ErrorKind.NOT_FOUND, "repository not found"
    broken = (HangupException, ConnectionError, GitProtocolError)
    if mid_transfer and any(isinstance(e, broken) for e in chain):
        # The server listed its refs, then the stream ended early or turned to noise.
        return ErrorKind.TRANSPORT, f"the connection broke during the transfer ({exc})"
    if any(isinstance(e, HangupException) for e in chain):
        return ErrorKind.TRANSPORT, "the server hung up"
    if any(isinstance(e, ConnectionError) for e in chain):
        return ErrorKind.TRANSPORT, f"the connection broke ({exc})"
    if any(isinstance(e, GitProtocolError) for e in chain) or type(exc).__name__ in (
        "ProtocolError",
        "BadStatusLine",
        "ValueError",
        "AssertionError",
    ):
        return ErrorKind.TRANSPORT, f"the server does not speak the git protocol ({exc})"
    return ErrorKind.TRANSPORT, f"{type(exc).__name__}: {exc}"

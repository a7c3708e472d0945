"""What a clone job is and what it answers: the types that cross the process boundary.

The parent builds a :class:`CloneJob` and reads a :class:`CloneOutcome`; the work
itself (``clone_worker``, ``head_worker``) runs only in workers, which the parent
names (``wire.Named``) rather than imports: the worker's modules (error
classification, the guarded HTTP pool, the checkout's isolation) were ~5 ms of a
first result in the parent (ADR 0003, issue 47).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..._domain.errors import ErrorKind
from ..._domain.urls import RepoURL
from ..workers.wire import Named
from .envelope import Envelope
from .kept_place import KeptPlace
from .settings import CloneSettings

__all__ = ["CLONE", "HEAD", "CloneJob", "CloneOutcome", "clone_job", "envelope_of", "kind_of"]

# The workers' entry points, by name: imported where they run (the zygote has them),
# never in this process (a first result waited ~5 ms for them; issue 47).
CLONE = Named(f"{__package__}.clone_worker", "clone_in_worker")
HEAD = Named(f"{__package__}.head_worker", "head_in_worker")


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
    # A kept clone's stable home: cloned into its staging directory then moved there,
    # or, if it is already there, updated in place; reached as kept_place says.
    keep: KeptPlace | None = None
    envelope: Envelope = dataclasses.field(default_factory=Envelope)
    # Tell the parent what indexing the pack will need before it does (a memory
    # budget reserves it, ADR 0014); the question waits for the answer.
    ask_memory: bool = False
    # Tell the parent the pack bytes received so far, now and then (a display's figure).
    tell_progress: bool = False

    @property
    def max_memory(self) -> int:
        return self.envelope.max_memory

    @property
    def max_file_size(self) -> int:
        return self.envelope.max_repo_bytes

    def __repr__(self) -> str:  # never show the password, even in a debugger
        return f"CloneJob({self.shown_url!r} -> {self.target!r})"


@dataclass(frozen=True, slots=True)
class CloneOutcome:
    branch: str = ""
    commit: str = ""
    committed_at: str = ""  # ISO 8601 with offset
    bytes_on_disk: int = 0
    redirected_to: str = ""  # the repository URL the server's redirect led to
    error_kind: ErrorKind | None = None
    error_reason: str = ""
    retry_after: float | None = None  # seconds a server that pushed back asked to wait


def envelope_of(settings: CloneSettings) -> Envelope:
    """The envelope every clone of ``settings`` runs in."""
    return Envelope(
        max_repo_bytes=settings.max_repo_size,
        max_memory=settings.max_memory,
        low_speed_bytes_per_second=settings.low_speed_limit,
        low_speed_seconds=settings.low_speed_time,
    )


def kind_of(envelope: Envelope) -> str:
    """The kind of served worker a clone in ``envelope`` takes (ADR 0003): the
    file-size limit is part of it, since a worker's hard limit cannot be raised."""
    return f"clone/{envelope.max_repo_bytes}"


def clone_job(
    settings: CloneSettings,
    repo: RepoURL,
    username: str | None,
    password: str | None,
    *,
    target: str,
    keep: KeptPlace | None,
    ask_memory: bool = False,
) -> CloneJob:
    """What a worker needs to reach ``repo`` under ``settings``: the one place a clone's
    job is made, for a clone and for the command line's first clone alike."""
    return CloneJob(
        url=repo.path if repo.scheme == "file" else repo.without_credentials,
        shown_url=repo.redacted,
        username=username,
        password=password,
        target=target,
        bare=not settings.checkout,
        depth=settings.depth,
        connect_timeout=settings.connect_timeout,
        read_timeout=settings.read_timeout,
        ssh_command=settings.ssh_command,
        ca_bundle=str(settings.ca_bundle) if settings.ca_bundle is not None else None,
        keep=keep,
        envelope=envelope_of(settings),
        ask_memory=ask_memory,
    )

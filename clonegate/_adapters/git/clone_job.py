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
from .envelope import Envelope
from .kept_place import KeptPlace

__all__ = ["CloneJob", "CloneOutcome"]


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

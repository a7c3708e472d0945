"""Domain errors. Each names the repository by its redacted URL and says what went wrong."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "CONNECTION_FAILURE_KINDS",
    "RETRIED_KINDS",
    "AnalysisError",
    "AuthenticationError",
    "CloneCancelledError",
    "CloneError",
    "CloneTimeoutError",
    "ConnectionLostError",
    "EmptyRepositoryError",
    "ErrorKind",
    "HostUnavailableError",
    "InvalidRepositoryError",
    "InvalidURLError",
    "OutOfMemoryError",
    "ProtocolError",
    "ReadTimeoutError",
    "RepositoryNotFoundError",
    "StorageError",
    "ThrottledError",
    "TooLargeError",
    "TooSlowError",
    "TransportError",
    "UnavailableError",
    "UnreachableError",
    "retried_kinds",
]


class ErrorKind(StrEnum):
    """Why a clone failed; the ``kind`` in reports (ADR 0012 lists what leads to each).
    An analysis (phase ``analyze``) fails with ``timeout``, ``out_of_memory`` or
    ``analysis_error`` (see :class:`AnalysisError`).

    - ``invalid_url``: the text is not a URL clonegate clones; nothing was contacted.
    - ``not_found``: the server has no such repository, or hides it.
    - ``authentication``: the server wants credentials, or refused the ones sent.
    - ``transport``: no conversation with the server, for a reason a second attempt
      would meet again: unknown host, TLS failure, an unreachable proxy, an ssh host key.
    - ``unreachable``: no connection to the server: refused, or no answer to the
      connect within the connect timeout (a host that is down, or drops connections
      under load); retried, and counted by the host's breaker (ADR 0019).
    - ``connection_lost``: the server reset the connection, or closed it before its
      answer ended (mid-transfer, or before a word, as a full git daemon does);
      retried. Until issue 43 these were ``transport``.
    - ``protocol``: the server answered, but not as a git server should: not git,
      dumb HTTP only, a redirect clonegate refuses, a malformed stream.
    - ``timeout``: a deadline passed (the repository's, the clone's), or a TLS or ssh
      handshake went unanswered.
    - ``read_timeout``: the server sent nothing within the read timeout in the middle
      of a conversation; retried only with ``with_retry_timeouts`` (``--retry-timeouts``).
      Until issue 43 this was ``timeout``; its status is still ``timeout``.
    - ``cancelled``: the clone's worker was killed from outside clonegate.
    - ``empty_repository``: the repository has no commit on its HEAD branch.
    - ``invalid_repository``: what the server sent cannot be a valid repository:
      corrupt objects, a branch name or file path git would refuse.
    - ``storage``: the clone could not be written locally (a full disk, a name too
      long for the file system, a kept path through a symbolic link).
    - ``too_large``: the clone left its resource envelope: more pack data, refs, memory
      or bytes on disk than its limits allow (the message gives the figure).
    - ``too_slow``: the server sent less than the low-speed limit for its whole
      window (a trickle), long before any timeout.
    - ``out_of_memory``: the kernel's out-of-memory killer ended the clone's worker:
      the machine or its memory cgroup ran out, the clone's own cap was not reached.
    - ``throttled``: the server asked clonegate to slow down (HTTP 429, too many
      requests); retried (:data:`RETRIED_KINDS`).
    - ``unavailable``: the server, or a proxy before it, could not serve now (HTTP 502,
      503, 504); retried.
    - ``host_unavailable``: the repository's host refused every connection until the
      host's breaker gave it up, or until the repository's deadline, while the
      repository waited for it (ADR 0019): never tried again in that run.
    """

    INVALID_URL = "invalid_url"
    NOT_FOUND = "not_found"
    AUTHENTICATION = "authentication"
    TRANSPORT = "transport"
    PROTOCOL = "protocol"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    EMPTY = "empty_repository"
    INVALID_REPOSITORY = "invalid_repository"
    STORAGE = "storage"
    TOO_LARGE = "too_large"
    TOO_SLOW = "too_slow"
    OUT_OF_MEMORY = "out_of_memory"
    THROTTLED = "throttled"
    UNAVAILABLE = "unavailable"
    UNREACHABLE = "unreachable"
    CONNECTION_LOST = "connection_lost"
    READ_TIMEOUT = "read_timeout"
    HOST_UNAVAILABLE = "host_unavailable"


# The kinds a later attempt may cure: the server pushed back (429, 502-504, a "rate
# limit" in its words), or the connection failed or broke, as it does under load
# (issue 43). Every other kind is the same on a second try (not found, authentication,
# an invalid URL or repository, too large, out of memory, cancelled) or is not a
# server's passing state (an unknown host, a TLS failure, a deadline), so it is
# reported at once (ADR 0006). A read timeout is retried only when asked
# (:func:`retried_kinds`): each retry of a silent server holds a clone slot for the
# whole read timeout again, and a server that went silent is more often stuck than busy.
RETRIED_KINDS = frozenset(
    {
        ErrorKind.THROTTLED,
        ErrorKind.UNAVAILABLE,
        ErrorKind.UNREACHABLE,
        ErrorKind.CONNECTION_LOST,
    }
)

# The kinds that say no conversation with the host took place (refused, connect
# timeout, unknown host, TLS, proxy): what a host's breaker counts as failures.
CONNECTION_FAILURE_KINDS = frozenset({ErrorKind.UNREACHABLE, ErrorKind.TRANSPORT})


def retried_kinds(*, timeouts: bool) -> frozenset[ErrorKind]:
    """:data:`RETRIED_KINDS`, with ``read_timeout`` when ``timeouts``."""
    return RETRIED_KINDS | {ErrorKind.READ_TIMEOUT} if timeouts else RETRIED_KINDS


class CloneError(Exception):
    """A repository could not be cloned.

    Attributes:
      url: the repository's URL with any credentials replaced by ``***``.
      kind: an :class:`ErrorKind`.
      reason: what went wrong, without the URL.
      peak_memory: bytes the clone had used at most when it failed, where the VCS
        measured it (a memory budget learns from it); otherwise ``None``.
      retry_after: seconds the server asked to wait before the next attempt (its
        ``Retry-After``), where the VCS read it; otherwise ``None``.
      limit_probe: a push-back the host's adaptive limit took as its own (it came
        while the limit could still go lower): the cost of finding the host's
        capacity, which the retries do not charge (ADR 0019). Set by the use case.
    """

    kind: ErrorKind = ErrorKind.TRANSPORT
    peak_memory: int | None = None
    retry_after: float | None = None
    limit_probe: bool = False

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason

    def __reduce__(self) -> tuple[type[CloneError], tuple[str, str]]:
        return (type(self), (self.url, self.reason))


class InvalidURLError(CloneError, ValueError):
    """The text is not a URL clonegate can clone (found before any network access)."""

    kind = ErrorKind.INVALID_URL


class RepositoryNotFoundError(CloneError):
    """The server answered, and has no such repository (or hides it)."""

    kind = ErrorKind.NOT_FOUND


class AuthenticationError(CloneError):
    """The server wants credentials, or refused the ones given."""

    kind = ErrorKind.AUTHENTICATION


class TransportError(CloneError):
    """No conversation with the server, or it broke off: unknown host, refused, reset,
    TLS, proxy, a server that stopped mid-answer."""

    kind = ErrorKind.TRANSPORT


class UnreachableError(TransportError):
    """No connection to the server: refused, or no answer to the connect in time.
    A :class:`TransportError`, as it was until issue 43."""

    kind = ErrorKind.UNREACHABLE


class ConnectionLostError(TransportError):
    """The server reset the connection or closed it before its answer ended.
    A :class:`TransportError`, as it was until issue 43."""

    kind = ErrorKind.CONNECTION_LOST


class ProtocolError(CloneError):
    """The server answered, but not as a git server: not git, dumb HTTP, a refused redirect."""

    kind = ErrorKind.PROTOCOL


class CloneTimeoutError(CloneError):
    """No progress within the read timeout, or the clone's own deadline passed."""

    kind = ErrorKind.TIMEOUT


class ReadTimeoutError(CloneTimeoutError):
    """The server sent nothing within the read timeout, in the middle of a
    conversation. A :class:`CloneTimeoutError`, as it was until issue 43."""

    kind = ErrorKind.READ_TIMEOUT


class CloneCancelledError(CloneError):
    """The clone was stopped from outside clonegate (its worker process was killed).

    Cancellation by the caller (a cancel scope, a deadline, Ctrl-C) is not this error:
    it propagates as :exc:`trio.Cancelled`, as trio requires.
    """

    kind = ErrorKind.CANCELLED


class EmptyRepositoryError(CloneError):
    """The repository exists but has no commit on its default branch."""

    kind = ErrorKind.EMPTY


class InvalidRepositoryError(CloneError):
    """What the server sent is not a valid repository: corrupt objects, a branch name or
    a file path that git refuses."""

    kind = ErrorKind.INVALID_REPOSITORY


class StorageError(CloneError):
    """The clone could not be written locally: disk full, read-only, or no permission."""

    kind = ErrorKind.STORAGE


class TooLargeError(CloneError):
    """The clone passed a limit of its envelope: pack size, refs, memory, disk."""

    kind = ErrorKind.TOO_LARGE


class TooSlowError(CloneError):
    """The server sent less than the low-speed limit over its whole window."""

    kind = ErrorKind.TOO_SLOW


class OutOfMemoryError(CloneError):
    """The kernel's out-of-memory killer ended the clone's worker (the message gives
    the memory it had used); the system or cgroup ran out, not the clone's cap."""

    kind = ErrorKind.OUT_OF_MEMORY


class ThrottledError(CloneError):
    """The server asked for fewer requests (HTTP 429): a later attempt may succeed."""

    kind = ErrorKind.THROTTLED


class UnavailableError(CloneError):
    """The server, or a proxy before it, could not serve now (HTTP 502, 503, 504)."""

    kind = ErrorKind.UNAVAILABLE


class HostUnavailableError(CloneError):
    """The repository's host was down (its breaker open) until the host was given up,
    or until the repository's deadline (ADR 0019); the message says how many
    connections to it failed."""

    kind = ErrorKind.HOST_UNAVAILABLE


ERROR_TYPES: dict[ErrorKind, type[CloneError]] = {
    cls.kind: cls
    for cls in (
        InvalidURLError,
        RepositoryNotFoundError,
        AuthenticationError,
        TransportError,
        ProtocolError,
        CloneTimeoutError,
        CloneCancelledError,
        EmptyRepositoryError,
        InvalidRepositoryError,
        StorageError,
        TooLargeError,
        TooSlowError,
        OutOfMemoryError,
        ThrottledError,
        UnavailableError,
        UnreachableError,
        ConnectionLostError,
        ReadTimeoutError,
        HostUnavailableError,
    )
}


class AnalysisError(Exception):
    """An analysis stopped for what the repository made it do, not for a bug of
    clonegate's: the report's phase is ``analyze``, its kind ``kind``.

    - ``timeout``: it ran past its time limit (``--analysis-timeout``); the time it
      waited for an analysis process does not count.
    - ``out_of_memory``: it needed more than its memory cap (``--analysis-memory``),
      or the kernel's out-of-memory killer ended its worker.
    - ``analysis_error``: its worker process died without a reply (a parser that
      crashed on the repository's content).

    ``reason`` says what happened, with the figure, without the URL.
    """

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason

    def __reduce__(self) -> tuple[type[AnalysisError], tuple[str, str]]:
        return (type(self), (self.kind, self.reason))

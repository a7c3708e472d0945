"""Domain errors. Each names the repository by its redacted URL and says what went wrong."""

from __future__ import annotations

from enum import StrEnum

__all__ = [
    "AuthenticationError",
    "CloneCancelledError",
    "CloneError",
    "CloneTimeoutError",
    "EmptyRepositoryError",
    "ErrorKind",
    "InvalidURLError",
    "RepositoryNotFoundError",
    "StorageError",
    "TransportError",
]


class ErrorKind(StrEnum):
    """Why a clone failed; the ``kind`` in reports."""

    INVALID_URL = "invalid_url"
    NOT_FOUND = "not_found"
    AUTHENTICATION = "authentication"
    TRANSPORT = "transport"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    EMPTY = "empty_repository"
    STORAGE = "storage"


class CloneError(Exception):
    """A repository could not be cloned.

    Attributes:
      url: the repository's URL with any credentials replaced by ``***``.
      kind: an :class:`ErrorKind`.
      reason: what went wrong, without the URL.
    """

    kind: ErrorKind = ErrorKind.TRANSPORT

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
    """The connection failed: refused, unknown host, reset, or a server that does not speak git."""

    kind = ErrorKind.TRANSPORT


class CloneTimeoutError(CloneError):
    """No progress within the read timeout, or the clone's own deadline passed."""

    kind = ErrorKind.TIMEOUT


class CloneCancelledError(CloneError):
    """The clone was stopped from outside clonegate (its worker process was killed).

    Cancellation by the caller (a cancel scope, a deadline, Ctrl-C) is not this error:
    it propagates as :exc:`trio.Cancelled`, as trio requires.
    """

    kind = ErrorKind.CANCELLED


class EmptyRepositoryError(CloneError):
    """The repository exists but has no commit on its default branch."""

    kind = ErrorKind.EMPTY


class StorageError(CloneError):
    """The clone could not be written locally: disk full, read-only, or no permission."""

    kind = ErrorKind.STORAGE


ERROR_TYPES: dict[ErrorKind, type[CloneError]] = {
    cls.kind: cls
    for cls in (
        InvalidURLError,
        RepositoryNotFoundError,
        AuthenticationError,
        TransportError,
        CloneTimeoutError,
        CloneCancelledError,
        EmptyRepositoryError,
        StorageError,
    )
}

"""Turning whatever a clone raised into an ``ErrorKind`` and a sentence for people.

Runs in the worker. Messages are fixed phrases, with a server's own words (an
``ERR`` line) quoted where they help; never a Python repr, an exception's class
name or a urllib3 pool description. Every message is redacted by the caller.
"""

from __future__ import annotations

import ast
import errno
import functools
import re
import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from ..._domain.errors import ErrorKind
from ..._domain.sizes import format_size
from ..._domain.urls import visible

__all__ = [
    "Failure",
    "classify",
    "handshake_timeout",
    "rate_limited",
    "retry_after_of",
    "ssh_seconds",
]

# git daemon's and ssh's words for a repository that is not there (dulwich passes
# them on as a GitProtocolError's or a HangupException's text, nothing else says it).
_NOT_FOUND_SIGNS = (
    "404",
    "not found",
    "no such repository",
    "not exported",
    "does not appear to be a git repository",
)
# ENAMETOOLONG: a name from the repository (a file, a branch) this file system cannot hold.
_STORAGE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EDQUOT, errno.ENAMETOOLONG}
)
CERTIFICATE_FAILED = (
    "TLS certificate verification failed (a server whose certificate comes from a private "
    "authority needs that authority's certificate: --ca-bundle FILE)"
)
# dulwich's words when the stream ended inside a pkt-line: its length prefix promised
# more bytes than came, or the stream stopped within the four-byte prefix itself.
# Anchored: only dulwich's own message, not a server's ERR line that quotes it.
_SHORT_PKT = re.compile(
    r"length of pkt read ([0-9a-f]{4}) does not match length prefix ([0-9a-f]{4})\Z"
)
_PREFIX = re.compile(r"""invalid pkt-line length prefix: (b(['"])(?:[^\\]|\\.)*?\2)\Z""")
# A bytes repr quoted in a message (dulwich's "Invalid pkt-line length prefix: b'..'"):
# a backslash escapes the next character, so b'0\\' ends at its second quote.
# A URL quoted in a message (dulwich's "unexpected http resp 429 for http://host:40404/r404.git"):
# its port and path are the repository's name, never the server's answer.
_QUOTED_URL = re.compile(r"\S+://\S*")
# How servers that speak only in words (git daemon's ERR line, an ssh forge's message,
# a side-band error) say they throttle: GitHub's "This request was rate-limited due to
# too many requests", GitLab's "Rate limit exceeded", "Too Many Requests".
_RATE_LIMITED = re.compile(r"rate[- ]?limit|too many requests", re.IGNORECASE)
_BYTES_REPR = re.compile(r"""\s*:?\s*b(['"])(?:[^\\]|\\.)*?\1""")


class Failure(Exception):
    """A failure already classified where it happened."""

    def __init__(self, kind: ErrorKind, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.retry_after: float | None = None  # seconds the server asked to wait


def retry_after_of(exc: BaseException) -> float | None:
    """The ``Retry-After`` seconds of the :class:`Failure` that ``exc`` holds, if any."""
    return next((e.retry_after for e in chain(exc) if isinstance(e, Failure)), None)


class Limits(Protocol):
    @property
    def connect_timeout(self) -> float: ...
    @property
    def read_timeout(self) -> float: ...
    @property
    def max_memory(self) -> int: ...
    @property
    def max_file_size(self) -> int: ...


def handshake_timeout(limits: Limits) -> tuple[float, str]:
    """How long a TLS or ssh handshake waits for each answer, and which timeout that is.

    A handshake is both a connection's set-up and a wait for the server's answer: the
    smaller of the two bounds it (urllib3 and ssh used the connect timeout alone, so a
    server that accepted and never answered held a clone 30 s at ``--read-timeout 4``).
    """
    if limits.read_timeout <= limits.connect_timeout:
        return limits.read_timeout, "read"
    return limits.connect_timeout, "connect"


def ssh_seconds(seconds: float) -> int:
    """``seconds`` as ssh's options take them: whole, at least one."""
    return max(1, round(seconds))


def chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc`` and its causes and contexts, each once."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


@dataclass(frozen=True, slots=True)
class _Types:
    """The exception types of dulwich, urllib3 and http.client a clone may meet.

    Sets are matched by exact type (``type(e) in ...``): a subclass means something
    else (urllib3's NewConnectionError is a ConnectTimeoutError, dulwich's
    HangupException a GitProtocolError, DeltaCycle an UnresolvedDeltas).
    """

    unauthorized: type[BaseException]
    proxy: type[BaseException]
    tls: tuple[type[BaseException], ...]
    line_too_long: type[BaseException]
    connect_timeout: type[BaseException]
    read_timeout: type[BaseException]
    tree_too_deep: tuple[type[BaseException], ...]
    not_git: type[BaseException]
    incomplete: frozenset[type[BaseException]]  # the stream ended inside an HTTP body
    invalid_data: frozenset[type[BaseException]]  # data no valid repository holds
    git_protocol: type[BaseException]  # dulwich's own words, or a server's ERR line
    hangup: type[BaseException]
    not_git_protocol: frozenset[type[BaseException]]  # an answer that is no git
    broken_mid_transfer: frozenset[type[BaseException]]


@functools.cache
def _types() -> _Types:
    # Imported when a clone fails, in the worker: the parent imports this module for
    # Failure alone, and never imports dulwich.
    import http.client

    import urllib3.exceptions
    from dulwich import errors
    from dulwich.client import HTTPUnauthorized
    from dulwich.index import InvalidPathError
    from dulwich.object_store import MaxTreeDepthExceeded
    from dulwich.pack import UnresolvedDeltas

    from .pack_index import CorruptPack

    not_git_protocol = frozenset(
        {
            errors.GitProtocolError,
            errors.UnexpectedCommandError,
            urllib3.exceptions.ProtocolError,
            http.client.BadStatusLine,
        }
    )
    return _Types(
        unauthorized=HTTPUnauthorized,
        proxy=urllib3.exceptions.ProxyError,
        tls=(urllib3.exceptions.SSLError, ssl.SSLError),
        line_too_long=http.client.LineTooLong,
        connect_timeout=urllib3.exceptions.ConnectTimeoutError,
        read_timeout=urllib3.exceptions.ReadTimeoutError,
        tree_too_deep=(RecursionError, MaxTreeDepthExceeded),
        not_git=errors.NotGitRepository,
        incomplete=frozenset({http.client.IncompleteRead, urllib3.exceptions.IncompleteRead}),
        invalid_data=frozenset(
            {
                errors.RefFormatError,
                InvalidPathError,
                errors.ObjectFormatException,
                errors.FileFormatException,
                errors.ChecksumMismatch,
                errors.ApplyDeltaError,
                errors.ObjectMissing,
                CorruptPack,
                UnresolvedDeltas,  # a delta whose base neither the pack nor the clone holds
            }
        ),
        git_protocol=errors.GitProtocolError,
        hangup=errors.HangupException,
        not_git_protocol=not_git_protocol,
        broken_mid_transfer=not_git_protocol | {errors.HangupException, ConnectionError},
    )


def classify(
    exc: BaseException, limits: Limits, *, has_credentials: bool, mid_transfer: bool
) -> tuple[ErrorKind, str]:
    """The kind and message for ``exc``, raised by a clone.

    ``mid_transfer``: the server had listed its refs, so a broken stream is a broken
    transfer rather than a server that does not speak git.
    """
    found = list(chain(exc))
    for e in found:
        if isinstance(e, Failure):
            return e.kind, e.reason
        kind = _by_type(e, limits, has_credentials)
        if kind is not None:
            return kind
    types = _types()
    met = {type(e) for e in found}
    if met & types.incomplete or any(_cut_short(e) for e in found):
        # Before the words, whose byte counts may hold "404". git says "the remote end
        # hung up unexpectedly": a server that dies while it answers (killed, or its
        # host gone) ends the stream wherever it was, inside a pkt-line or not.
        if mid_transfer:
            return ErrorKind.CONNECTION_LOST, "the connection broke during the transfer"
        return (
            ErrorKind.CONNECTION_LOST,
            "the connection ended in the middle of the server's answer",
        )
    # Before the words: a message about invalid data may quote anything ("404" in an
    # offset, "not found" in a path), and must not read as the server's answer.
    if met & types.invalid_data:
        return ErrorKind.INVALID_REPOSITORY, f"the server sent invalid data ({_words(exc)})"
    text = " ".join(str(e) for e in found).lower()
    by_text = _ssh_handshake(text, limits) or _throttled(found) or _by_text(text)
    if by_text is not None:
        return by_text
    return _by_protocol(exc, found, mid_transfer)


def _by_protocol(
    exc: BaseException, found: list[BaseException], mid_transfer: bool
) -> tuple[ErrorKind, str]:
    """What a stream that broke, or an answer that is no git, is (no words said more)."""
    types = _types()
    met = {type(e) for e in found}
    if mid_transfer and met & types.broken_mid_transfer:
        return ErrorKind.CONNECTION_LOST, "the connection broke during the transfer"
    if types.hangup in met:
        # Before a word: a git daemon at its --max-connections, or one killed, says nothing.
        return ErrorKind.CONNECTION_LOST, "the server hung up"
    if any(isinstance(e, ConnectionError) for e in found):
        return ErrorKind.CONNECTION_LOST, "the connection broke"
    protocol_error = next((e for e in found if type(e) is types.git_protocol), None)
    if protocol_error is not None:
        # dulwich's own description, or the server's words (an ERR line).
        return ErrorKind.PROTOCOL, f"git protocol error: {_words(protocol_error)}"
    if met & types.not_git_protocol or any(
        isinstance(e, (ValueError, AssertionError)) for e in found
    ):
        return ErrorKind.PROTOCOL, f"the server does not speak the git protocol ({_words(exc)})"
    return ErrorKind.TRANSPORT, f"the clone failed ({_words(exc)})"


def _cut_short(e: BaseException) -> bool:
    """Whether ``e`` is dulwich saying that the stream ended inside a pkt-line: only
    its words say so (tests/test_worker_errors.py reads them from the locked dulwich)."""
    if type(e) is not _types().git_protocol:
        return False
    text = str(e).lower()
    short = _SHORT_PKT.match(text)
    if short is not None:
        return int(short[1], 16) < int(short[2], 16)
    prefix = _PREFIX.match(text)
    if prefix is None:
        return False
    try:
        # dulwich quotes the prefix it read; fewer than four bytes means the stream ended.
        return len(ast.literal_eval(prefix[1])) < 4
    except (ValueError, SyntaxError):
        return False


def _by_type(
    e: BaseException, limits: Limits, has_credentials: bool
) -> tuple[ErrorKind, str] | None:
    return _by_network_type(e, limits, has_credentials) or _by_local_type(e, limits)


def _by_network_type(
    e: BaseException, limits: Limits, has_credentials: bool
) -> tuple[ErrorKind, str] | None:
    types = _types()
    if isinstance(e, types.unauthorized):
        if has_credentials:
            return ErrorKind.AUTHENTICATION, "authentication failed (the credentials were refused)"
        return ErrorKind.AUTHENTICATION, "authentication required (no credentials for this host)"
    if isinstance(e, types.proxy):
        return ErrorKind.TRANSPORT, "cannot connect through the proxy (check HTTPS_PROXY)"
    if isinstance(e, types.tls):
        # OpenSSL's words: ssl.SSLCertVerificationError is not all that says it.
        if "certificate verify failed" in str(e).lower():
            return ErrorKind.TRANSPORT, CERTIFICATE_FAILED
        return ErrorKind.TRANSPORT, "the TLS handshake failed"
    if isinstance(e, types.line_too_long):
        # http.client's own words ("got more than 65536 bytes when reading header line").
        return ErrorKind.PROTOCOL, f"the server's HTTP answer has a line too long ({e})"
    if isinstance(e, socket.gaierror):
        return ErrorKind.TRANSPORT, f"unknown host ({e.strerror or 'name resolution failed'})"
    if isinstance(e, ConnectionRefusedError):
        return ErrorKind.UNREACHABLE, "connection refused"
    if isinstance(e, ConnectionResetError):
        return ErrorKind.CONNECTION_LOST, "the connection was reset by the server"
    if type(e) is types.connect_timeout:  # not its subclass NewConnectionError
        return ErrorKind.UNREACHABLE, f"could not connect within {limits.connect_timeout:g} s"
    if isinstance(e, (TimeoutError, types.read_timeout)):
        return ErrorKind.READ_TIMEOUT, (
            f"no answer within the {limits.read_timeout:g} s read timeout"
        )
    return None


def _by_local_type(e: BaseException, limits: Limits) -> tuple[ErrorKind, str] | None:
    if isinstance(e, MemoryError):
        return ErrorKind.TOO_LARGE, (
            f"the clone needed more than its memory limit of {format_size(limits.max_memory)}"
        )
    if isinstance(e, OSError) and e.errno == errno.EFBIG:
        return ErrorKind.TOO_LARGE, (
            f"a file of the clone passed the size limit of {format_size(limits.max_file_size)}"
        )
    if isinstance(e, OSError) and e.errno in _STORAGE_ERRNOS:
        return ErrorKind.STORAGE, f"cannot write the clone: {e.strerror}"
    if isinstance(e, _types().tree_too_deep):
        # Only the repository's own structure nests deep enough: trees within trees.
        return ErrorKind.INVALID_REPOSITORY, "the repository's trees are nested too deeply"
    if isinstance(e, _types().not_git):
        return ErrorKind.NOT_FOUND, "repository not found"
    return None


def _ssh_handshake(text: str, limits: Limits) -> tuple[ErrorKind, str] | None:
    if "timed out during banner exchange" not in text:  # ssh's words: its ConnectTimeout
        return None
    seconds, which = handshake_timeout(limits)
    return ErrorKind.TIMEOUT, (
        f"no answer to the ssh handshake within {ssh_seconds(seconds)} s (the {which} timeout)"
    )


def _by_text(text: str) -> tuple[ErrorKind, str] | None:
    # ssh and git daemon say what happened only in words.
    if "permission denied" in text:
        return ErrorKind.AUTHENTICATION, "authentication failed (ssh: permission denied)"
    if "host key verification failed" in text:
        return ErrorKind.TRANSPORT, "ssh host key verification failed (unknown or changed host key)"
    if "could not resolve hostname" in text:
        return ErrorKind.TRANSPORT, "unknown host"
    if "connection refused" in text:
        return ErrorKind.UNREACHABLE, "connection refused"
    # ssh's and the OS's words for a connect unanswered: no conversation, not a hang-up.
    for words in ("connection timed out", "no route to host", "network is unreachable"):
        if words in text:
            return ErrorKind.UNREACHABLE, f"could not connect ({words})"
    if "certificate verify failed" in text:
        return ErrorKind.TRANSPORT, CERTIFICATE_FAILED
    answer = _QUOTED_URL.sub(" ", text)
    if any(sign in answer for sign in _NOT_FOUND_SIGNS):
        return ErrorKind.NOT_FOUND, "repository not found"
    return None


def rate_limited(words: str) -> bool:
    """Whether a server's ``words`` (an ERR line, a side-band error) say it throttles."""
    return _RATE_LIMITED.search(_QUOTED_URL.sub(" ", words)) is not None


def _throttled(found: list[BaseException]) -> tuple[ErrorKind, str] | None:
    # A forge throttling git:// or ssh says so in an ERR line or ssh's relayed words;
    # a local error may quote a file of the repository (docs/rate-limit.md).
    types = _types()
    spoken = (e for e in found if type(e) in (types.git_protocol, types.hangup))
    said = next((e for e in spoken if rate_limited(str(e))), None)
    if said is None:
        return None
    return ErrorKind.THROTTLED, f"the server asked for fewer requests: {visible(_words(said))}"


def _words(exc: BaseException) -> str:
    """The first line of an exception's text, short, or its kind in words when it has none.

    dulwich's own texts are sentences or a server's ``ERR`` line; anything that looks
    like a Python repr (urllib3's ``('Connection aborted.', ...)``) is replaced.
    """
    text = _BYTES_REPR.sub("", str(exc)).strip()
    text = text.splitlines()[0] if text else ""
    bracketed = text[:1] + text[-1:] in ("()", "<>")
    if not text or bracketed or "Error(" in text or "Pool(" in text:
        name = type(exc).__name__
        spaced = "".join(f" {c.lower()}" if c.isupper() else c for c in name).strip()
        return spaced.removesuffix(" error").removesuffix(" exception") or "unknown"
    return text[:200]

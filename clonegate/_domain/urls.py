"""Repository URLs: validation, redaction of credentials, and safe directory names."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from urllib.parse import SplitResult, quote, unquote, urlsplit

from .errors import InvalidURLError

__all__ = [
    "DEFAULT_PORTS",
    "RepoURL",
    "check_host",
    "mask_userinfo",
    "parse_repo_url",
    "redact",
    "shown_url",
    "split_userinfo",
    "visible",
]

NETWORK_SCHEMES = frozenset({"https", "http", "git", "ssh"})
_SCHEME_ALIASES = {"git+ssh": "ssh", "ssh+git": "ssh"}
DEFAULT_PORTS = {"https": 443, "http": 80, "git": 9418, "ssh": 22}  # by scheme
# user@host:path, as git understands it: no scheme, and a colon before any slash.
_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/\s]+)@)?(?P<host>[^:/\s]+):(?P<path>[^/].*|/.*)$")
# In free text a URL ends at whitespace (see redact).
_WORD = re.compile(r"\S+")
_SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")
_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9._-]+")
# A DNS name or IPv4 address: letters, digits, '-', '_' (internal names use it) and
# dots, never starting with '-'. Anything else in a host is at best a typo and at
# worst an option or a shell command aimed at ssh or a proxy (issue 13).
_LABEL = r"[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?"
_HOST = re.compile(rf"^{_LABEL}(?:\.{_LABEL})*\.?$")
# An ssh login: what OpenSSH and the forges accept, and nothing a shell or ssh's own
# option parser could read as something else.
_SSH_USER = re.compile(r"^[A-Za-z0-9_.][A-Za-z0-9_.+~-]*$")


def visible(text: str) -> str:
    """``text`` with every character that is not printable shown as an escape
    (``\\x1b``, ``\\udcff`` for an undecodable byte): safe to show on a terminal."""
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def redact(text: str) -> str:
    """Replace the user-info part of every URL inside ``text`` with ``***``.

    Used on every message, log line and exception text that may quote a URL.
    """
    return _WORD.sub(_redact_word, text)


def _redact_word(match: re.Match[str]) -> str:
    """One whitespace-free run of text with its URL's user-info masked: from the first
    ``scheme://`` to the run's LAST ``@`` (as urllib, curl and the Redis URL's parser
    read user-info: a raw password may hold ``@``, or ``/`` as base64 does).

    A scan, not a regular expression: ``scheme://\\S*@`` backtracks from every
    position, quadratic in a long run without an ``@`` that a server can send (400 KB
    of ``a://`` took 38 s). Here each character is looked at a bounded number of times.
    """
    word = match.group()
    last_at = word.rfind("@")
    at = word.find("://")
    while at >= 0 and at + 3 <= last_at:
        if _has_scheme_before(word, at):
            return f"{word[: at + 3]}***{word[last_at:]}"
        at = word.find("://", at + 3)
    return word


def _has_scheme_before(word: str, colon: int) -> bool:
    """Whether a scheme ends at ``colon``: a letter at a word's start, then scheme
    characters up to it (what ``\\b[a-z][a-z0-9+.-]*`` before ``://`` matches)."""
    start = colon
    while start > 0 and word[start - 1] in _SCHEME_CHARS:
        start -= 1
    for position in range(start, colon):
        at_word_start = position == 0 or not (
            word[position - 1].isalnum() or word[position - 1] == "_"
        )
        if word[position].isascii() and word[position].isalpha() and at_word_start:
            return True
    return False


def split_userinfo(url: str) -> tuple[str, str | None, str]:
    """``url`` as ``(scheme://, user-info, the rest)``: the user-info is everything up to
    the LAST ``@`` (spaces and slashes included), ``None`` without one."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        scheme, rest = "", url
    userinfo, at, tail = rest.rpartition("@")
    return f"{scheme}{sep}", (userinfo if at else None), tail


def mask_userinfo(url: str) -> str:
    """``url`` for a message about a URL, parsed or not: its user-info (see
    :func:`split_userinfo`) becomes ``***``."""
    scheme, userinfo, rest = split_userinfo(url)
    return url if userinfo is None else f"{scheme}***@{rest}"


@dataclass(frozen=True, slots=True)
class RepoURL:
    """A validated repository location. ``str()`` and ``repr()`` never show secrets."""

    scheme: str  # https, http, git, ssh or file
    host: str  # lower-case; empty for file
    port: int | None
    path: str
    username: str | None = field(default=None, repr=False)
    password: str | None = field(default=None, repr=False)
    scp_like: bool = False

    @property
    def redacted(self) -> str:
        """The URL for people and logs: credentials replaced by ``***``."""
        if self.scheme in ("https", "http") and self.username is not None:
            return self._format("***")
        if self.password is not None:
            return self._format(f"{self.username}:***")
        return self._format(self.username)

    @property
    def without_credentials(self) -> str:
        """The URL to connect to and to record as ``origin``: no user name, no password.

        For ssh the user name is a login, not a secret, and is kept.
        """
        return self._format(self.username if self.scheme == "ssh" else None)

    @property
    def key(self) -> str:
        """The identity of the repository: two URLs with the same key clone the same thing.

        Scheme and host are case-insensitive, the default port is implied, and a
        trailing ``/`` or ``.git`` does not matter; credentials do not count.
        """
        path = self.path.rstrip("/")
        path = path.removesuffix(".git").rstrip("/")
        host = f"[{self.host}]" if ":" in self.host else self.host
        port = "" if self.port in (None, DEFAULT_PORTS.get(self.scheme)) else f":{self.port}"
        return f"{self.scheme}://{host}{port}/{path.lstrip('/')}"

    @property
    def directory_name(self) -> str:
        """A directory name from the URL: one safe path component, unique per :attr:`key`."""
        tail = PurePosixPath(self.path.rstrip("/")).name.removesuffix(".git")
        readable = _UNSAFE_NAME_CHARS.sub("-", f"{self.host}-{tail}").strip(".-")[:64]
        digest = hashlib.sha256(self.key.encode()).hexdigest()[:10]
        return f"{readable or 'repository'}-{digest}"

    @property
    def kept_path(self) -> PurePosixPath:
        """Where a kept clone lives, relative to the keep directory: ``<host>/<path>``.

        Readable and stable from run to run (ghorg's layout): the host (with a port
        other than the scheme's default), then each path component with a trailing
        ``.git`` dropped. Every component is made safe: no ``..``, no hidden names, no
        characters outside ``[A-Za-z0-9._-]``, so no URL can point outside the keep
        directory. Different URLs can share a path (two schemes, two spellings); the
        VCS tells them apart by the clone's recorded origin.
        """
        port = "" if self.port in (None, DEFAULT_PORTS.get(self.scheme)) else f"_{self.port}"
        parts = [f"{self.host}{port}" if self.host else "local"]
        parts += self.path.removesuffix("/").removesuffix(".git").split("/")
        safe = [_UNSAFE_NAME_CHARS.sub("-", part).lstrip(".-")[:100] for part in parts]
        kept = [part for part in safe if part]
        return PurePosixPath(*kept, *(["repository"] if len(kept) < 2 else []))

    def __str__(self) -> str:
        return self.redacted

    def _format(self, userinfo: str | None) -> str:
        user = f"{userinfo}@" if userinfo is not None else ""
        if self.scp_like:
            return f"{user}{self.host}:{self.path}"
        if self.scheme == "file":
            return f"file://{quote(self.path)}"
        host = f"[{self.host}]" if ":" in self.host else self.host  # IPv6 literal
        port = f":{self.port}" if self.port is not None else ""
        return f"{self.scheme}://{user}{host}{port}{quote(self.path, safe='/~:@!$&()*+,;=')}"


def parse_repo_url(text: str, *, allow_local: bool = False) -> RepoURL:
    """Validate ``text`` as a repository to clone, or raise :class:`InvalidURLError`.

    Accepted: ``https://``, ``http://``, ``git://``, ``ssh://`` (and ``git+ssh://``) URLs
    and scp-like ``user@host:path``. ``file://`` URLs and local paths only when
    ``allow_local`` (tests and the demo): they bypass the network limits that make
    the clone limit meaningful, and a local path on a shared machine is not ours to read.
    """
    raw = text.strip()
    shown = visible(mask_userinfo(raw))
    _check_text(raw, shown)
    if "://" not in raw:
        return _without_scheme(raw, shown, allow_local)
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError:
        # urllib's message may quote the user-info (a password read as a port).
        raise InvalidURLError(
            shown, "malformed URL: the host, port or user-info is unreadable"
        ) from None
    scheme = _SCHEME_ALIASES.get(parts.scheme.lower(), parts.scheme.lower())
    if scheme == "file":
        if not allow_local:
            raise InvalidURLError(shown, "file:// URLs are not allowed")
        return RepoURL(scheme="file", host="", port=None, path=unquote(parts.path))
    if scheme not in NETWORK_SCHEMES:
        raise InvalidURLError(shown, f"unsupported scheme {parts.scheme!r}")
    return _network_url(scheme, parts, port, shown)


def _check_text(raw: str, shown: str) -> None:
    """InvalidURLError unless ``raw`` is printable text with no whitespace."""
    if not raw:
        raise InvalidURLError(shown or "''", "empty URL")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in raw):  # bytes that were not UTF-8
        raise InvalidURLError(shown, "the URL is not valid UTF-8")
    if not raw.isprintable() or any(ch.isspace() for ch in raw):
        raise InvalidURLError(shown, "the URL contains whitespace or control characters")


def _without_scheme(raw: str, shown: str, allow_local: bool) -> RepoURL:
    """An scp-like ``user@host:path``, or (``allow_local``) a local path."""
    scp = _SCP_LIKE.match(raw)
    if scp and not raw.startswith(("/", ".", "~")):
        user, _, password = (scp["user"] or "").partition(":")
        host = _checked_host(scp["host"].lower(), shown)
        _check_ssh_user(user or None, shown)
        return RepoURL(
            scheme="ssh",
            host=host,
            port=None,
            path=scp["path"],
            username=user or None,
            password=password or None,
            scp_like=True,
        )
    if allow_local:
        return RepoURL(scheme="file", host="", port=None, path=raw)
    raise InvalidURLError(shown, "not a URL (local paths are not allowed)")


def shown_url(url: str) -> str:
    """``url`` as reports show it: parsed and redacted, or, if it does not parse, redacted."""
    try:
        return parse_repo_url(url, allow_local=True).redacted
    except InvalidURLError:
        return visible(redact(url.strip()))  # the raw line may hold terminal controls


def _network_url(scheme: str, parts: SplitResult, port: int | None, shown: str) -> RepoURL:
    host = _checked_host((parts.hostname or "").lower(), shown)
    path = unquote(parts.path)
    if not path.strip("/"):
        raise InvalidURLError(shown, "no repository path")
    if not path.isprintable():  # %00, %0a, ... would reach logs and the file system
        raise InvalidURLError(shown, "the repository path contains control characters")
    if parts.query or parts.fragment:
        raise InvalidURLError(shown, "a repository URL has no query or fragment")
    username = unquote(parts.username) if parts.username is not None else None
    password = unquote(parts.password) if parts.password is not None else None
    if not all(part is None or part.isprintable() for part in (username, password)):
        raise InvalidURLError(shown, "the user-info contains control characters")
    if scheme == "ssh":
        _check_ssh_user(username, shown)
    return RepoURL(scheme, host, port, path, username, password)


def check_host(host: str) -> str:
    """``host`` (lower-case, IPv6 without brackets) if it is a DNS name, an IPv4 or an IPv6
    address; else ValueError saying why. Nothing else is a host: see ``_HOST``."""
    if not host:
        raise ValueError("no host")
    if ":" in host:  # an IPv6 literal, from inside brackets
        try:
            ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            raise ValueError("the host is not a valid IPv6 address") from None
        return host
    if not _HOST.match(host):
        raise ValueError(
            f"the host {visible(repr(host))} is not a host name or address"
            " (letters, digits, '.', '-')"
        )
    return host


def _checked_host(host: str, shown: str) -> str:
    try:
        return check_host(host)
    except ValueError as exc:
        raise InvalidURLError(shown, str(exc)) from None


def _check_ssh_user(user: str | None, shown: str) -> None:
    if user is not None and not _SSH_USER.match(user):
        raise InvalidURLError(
            shown, f"the ssh user {user!r} is not a login name (it may not start with '-')"
        )

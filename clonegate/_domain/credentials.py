"""Credentials bound to one https origin, and the rule that picks them for a URL (ADR 0013).

A credential names the host (and port) it belongs to; clonegate never sends it
anywhere else. Lists of repositories name other people's hosts, so a secret with no
host would go to whichever server a list happens to name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .urls import RepoURL, check_host

__all__ = ["Credential", "credential_for", "netrc_credentials"]

TOKEN_USERNAME = "x-access-token"  # what GitHub, Gitea and Forgejo accept with a token
_HTTPS_PORT = 443


@dataclass(frozen=True, slots=True)
class Credential:
    """A user name and password (or token) for https on one host and port.

    ``repr()`` and ``str()`` never show the password.

    Attributes:
      host: the host name or address, lower-case (an IPv6 address without brackets).
      port: the TCP port; 443 unless the binding named another.
      username: the user name sent with the password (``x-access-token`` for a token).
      password: the secret.
    """

    host: str
    port: int
    username: str
    password: str = field(repr=False)

    def __post_init__(self) -> None:
        for name, value in (("username", self.username), ("password", self.password)):
            if not isinstance(value, str) or not value or not value.isprintable():
                raise ValueError(f"the credential's {name} must be printable text, not empty")
        if ":" in self.username:
            raise ValueError("a user name cannot contain ':' (HTTP basic authentication)")
        if any(ch.isspace() for ch in self.password):
            raise ValueError("the credential's password or token contains whitespace")
        if not 0 < self.port < 65536:
            raise ValueError(f"port {self.port} is out of range")

    @classmethod
    def token(cls, token: str, host: str) -> Credential:
        """A token for ``host`` (``github.com``, ``git.example.com:8443``, ``[::1]:8443``),
        sent as the password of the user ``x-access-token``."""
        name, port = parse_host(host)
        return cls(name, port, TOKEN_USERNAME, token)

    @property
    def origin(self) -> str:
        """``https://host[:port]``: where this credential may be sent."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"https://{host}" + ("" if self.port == _HTTPS_PORT else f":{self.port}")

    def matches(self, repo: RepoURL) -> bool:
        """Whether ``repo`` is on this credential's origin (https, same host, same port)."""
        port = repo.port if repo.port is not None else _HTTPS_PORT
        return repo.scheme == "https" and repo.host == self.host and port == self.port


def parse_host(text: str) -> tuple[str, int]:
    """``host[:port]`` (an IPv6 address in brackets) as ``(host, port)``; ValueError if not."""
    raw = text.strip().lower()
    if "/" in raw or "@" in raw:
        raise ValueError(f"{text!r} is a URL or has user-info; give only host[:port]")
    port_text = ""
    if raw.startswith("["):
        host, bracket, rest = raw[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r} is not host[:port]")
        port_text = rest[1:]
    else:
        host, _, port_text = raw.partition(":")
    try:
        host = check_host(host)
    except ValueError as exc:
        raise ValueError(f"{text!r}: {exc}") from None
    if not port_text:
        return host, _HTTPS_PORT
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r} has no valid port")
    return host, int(port_text)


def credential_for(repo: RepoURL, credentials: Sequence[Credential]) -> Credential | None:
    """The credential to use for ``repo``: the last one bound to its origin, if any.

    User-info written in the URL wins: it is the user's choice for that one URL, and
    a bound credential never replaces it. Nothing is ever chosen for plain http or
    for a host no credential names.
    """
    if repo.username is not None or repo.password is not None:
        return None
    for credential in reversed(credentials):
        if credential.matches(repo):
            return credential
    return None


def netrc_credentials(
    source: str, entries: Mapping[str, tuple[str, str | None, str]]
) -> tuple[Credential, ...]:
    """The ``machine`` entries of a netrc file (``netrc.netrc(...).hosts``), each bound to
    its host (``host:port`` too); ``source`` names the file in errors.

    A ``default`` entry is ignored: it would apply to every host in a list. Raises
    ValueError for an entry that is not a valid credential.
    """
    # Python's netrc files the default entry under the name "default".
    items = ((machine, entry) for machine, entry in entries.items() if machine != "default")
    return tuple(_entries(source, items))


def _entries(
    source: str, items: Iterable[tuple[str, tuple[str, str | None, str]]]
) -> Iterable[Credential]:
    for machine, (login, _account, password) in items:
        try:
            host, port = parse_host(machine)
            yield Credential(host, port, login or TOKEN_USERNAME, password)
        except ValueError as exc:
            raise ValueError(f"{source}: machine {machine!r}: {exc}") from None

"""Where lists come from: one argument or ``--from-file`` line read as a repository URL,
an ``owner/repo`` shorthand, or a Source (a forge's organisation, user, group,
workspace or search) to be listed (ADR 0023).

Pure: no network, no file system. Every line, however malformed, either reads or
raises one :class:`InvalidURLError` that names it escaped; :func:`read_entries` turns
a whole list into values and errors side by side, so one bad line never hides another.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from .errors import InvalidURLError
from .urls import check_host, mask_userinfo, parse_repo_url, visible

__all__ = [
    "MAX_ENTRY_CHARS",
    "Forge",
    "Source",
    "SourceKind",
    "entry_of",
    "read_entries",
]

# Far above any real source or URL (GitHub caps a search query near 256 characters,
# a name at 100), far below what costs anything to read or to show in an error.
MAX_ENTRY_CHARS = 2_048
MAX_QUERY_CHARS = 1_024
_SHOWN_START = 60  # how much of an overlong line its error quotes


class Forge(StrEnum):
    """A forge whose list API clonegate reads; ``forgejo:`` is read as ``gitea``
    (Forgejo serves Gitea's API)."""

    GITHUB = "github"
    GITLAB = "gitlab"
    GITEA = "gitea"
    BITBUCKET = "bitbucket"


class SourceKind(StrEnum):
    """What a source lists: an organisation's, a user's, a group's (with its subgroups)
    or a workspace's repositories, or a search's results."""

    ORG = "org"
    USER = "user"
    GROUP = "group"
    WORKSPACE = "workspace"
    SEARCH = "search"


_PREFIXES = {"github": Forge.GITHUB, "gitlab": Forge.GITLAB, "gitea": Forge.GITEA}
_PREFIXES |= {"forgejo": Forge.GITEA, "bitbucket": Forge.BITBUCKET}
_KINDS = {
    Forge.GITHUB: (SourceKind.ORG, SourceKind.USER, SourceKind.SEARCH),
    Forge.GITLAB: (SourceKind.GROUP, SourceKind.USER),
    Forge.GITEA: (SourceKind.ORG, SourceKind.USER),
    Forge.BITBUCKET: (SourceKind.WORKSPACE,),
}
# The public instance a source without @HOST lists; Gitea and Forgejo have none.
_PUBLIC_HOSTS = {Forge.GITHUB: "github.com", Forge.GITLAB: "gitlab.com"}
_PUBLIC_HOSTS |= {Forge.BITBUCKET: "bitbucket.org"}
# `github:`, `GitLab:`...: a forge's name and a colon, before any '/' or '@'.
_PREFIX = re.compile(r"^(?P<forge>[A-Za-z]+):(?!//)")
# One name: what every forge allows in an owner, group or repository name (letters,
# digits, '_', '-', '.'), never starting with '.' or '-' (an option, a hidden file,
# '..'). Nothing that could change the API path it is put into ('/', '?', '#', '%').
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,254}$")
# A GitHub owner: letters, digits and single hyphens, at most 39 characters.
_GITHUB_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
_MAX_GROUP_DEPTH = 20  # GitLab nests subgroups 20 deep at most


@dataclass(frozen=True, slots=True)
class Source:
    """A list of repositories a forge serves: what one source argument names.

    Attributes:
      forge: the forge whose API lists it.
      kind: organisation, user, group (subgroups included), workspace or search.
      name: the owner's name (a GitLab group's full path, ``a/b/c``), or the query.
      base_url: the instance's web address, ``https://host[:port][/path]``, with no
        trailing ``/``: the public instance's (``https://github.com``) unless the
        source named another with ``@HOST`` or ``@URL``.
      text: the source as written, escaped: what messages show.
    """

    forge: Forge
    kind: SourceKind
    name: str
    base_url: str
    text: str

    @property
    def host(self) -> str:
        """The instance's host, lower-case (an IPv6 address without brackets)."""
        return urlsplit(self.base_url).hostname or ""

    @property
    def public(self) -> bool:
        """Whether this source lists the forge's public instance (github.com...)."""
        return self.base_url == f"https://{_PUBLIC_HOSTS.get(self.forge, '')}"

    @property
    def api_url(self) -> str:
        """The API root the forge documents for this instance: ``https://api.github.com``
        (or ``https://HOST/api/v3`` for GitHub Enterprise Server, ``https://api.X.ghe.com``
        for GitHub Enterprise Cloud), ``BASE/api/v4`` (GitLab), ``BASE/api/v1`` (Gitea,
        Forgejo), ``https://api.bitbucket.org/2.0`` (``BASE/2.0`` at another address)."""
        if self.forge is Forge.GITHUB:
            if self.public:
                return "https://api.github.com"
            if self.host.endswith(".ghe.com"):
                return f"https://api.{self.host}"
            return f"{self.base_url}/api/v3"
        if self.forge is Forge.GITLAB:
            return f"{self.base_url}/api/v4"
        if self.forge is Forge.GITEA:
            return f"{self.base_url}/api/v1"
        # Bitbucket Cloud's API at another address (a proxy, a test server): Bitbucket
        # Data Center speaks another API, whose 404 is the listing's error, never a
        # silent empty list.
        return "https://api.bitbucket.org/2.0" if self.public else f"{self.base_url}/2.0"

    def __str__(self) -> str:
        return self.text


def entry_of(text: str, *, allow_local: bool = False) -> str | Source:
    """One argument or list line: a repository URL to clone (as text: a URL as given,
    or the ``https://`` URL an ``owner/repo`` shorthand stands for) or a :class:`Source`.

    Read in this order, with no look at the file system (ADR 0023): a URL
    (``scheme://``); a source (``forge:kind/name[@host]``, the forge's name in any
    case); a local path (``/``, ``.``, ``~``) or scp-like ``[user@]host:path``,
    read as :func:`parse_repo_url` reads them; else a shorthand, ``owner/repo`` on
    github.com or ``host/path`` (a first part with a dot is a host). Raises
    :class:`InvalidURLError`, naming the line escaped, for anything else.
    """
    raw = text.strip()
    if len(raw) > MAX_ENTRY_CHARS:
        raise InvalidURLError(_shown_long(raw), f"longer than {MAX_ENTRY_CHARS} characters")
    shown = visible(mask_userinfo(raw))
    if not raw or not raw.isprintable() or any(0xD800 <= ord(ch) <= 0xDFFF for ch in raw):
        parse_repo_url(raw)  # raises, with the URL parser's own words
    prefix = _PREFIX.match(raw)
    if prefix and prefix["forge"].lower() in _PREFIXES:
        forge = _PREFIXES[prefix["forge"].lower()]
        return _source(raw, _shown_source(raw), forge, raw[prefix.end() :])
    if "://" in raw or raw.startswith(("/", ".", "~")) or _scp_like(raw):
        parse_repo_url(raw, allow_local=allow_local)  # raises for what cannot be cloned
        return raw
    return _shorthand(raw, shown)


def read_entries(
    lines: Iterable[tuple[str, str]], *, allow_local: bool = False
) -> Iterator[tuple[str, str | Source | InvalidURLError]]:
    """Each ``(where, text)`` (``argument 2``, ``list.txt line 7``) with what it reads
    as, or the error that says why not: every line is read, whatever the others hold."""
    for where, text in lines:
        try:
            yield where, entry_of(text, allow_local=allow_local)
        except InvalidURLError as exc:
            yield where, exc.with_traceback(None)


def _shown_long(raw: str) -> str:
    """An overlong line named by its start alone, escaped: read no further than that
    (a 10 MB line costs no 10 MB copy), and, if the line holds an '@' anywhere, cut
    before any user-info could begin (the password may run past the part shown)."""
    head = raw[:_SHOWN_START]
    if "@" in raw:
        scheme = head.find("://")
        head = head[: scheme + 3] if scheme >= 0 else ""
    return f"{visible(head)}… ({len(raw)} characters)"


def _shown_source(raw: str) -> str:
    """A source as messages show it: escaped, and the user-info of an ``@URL`` masked
    (a source has no user-info of its own: its '@' names the instance)."""
    scheme = raw.find("://")
    at = raw.rfind("@", 0, scheme) if scheme >= 0 else -1
    shown = raw if at < 0 else raw[: at + 1] + mask_userinfo(raw[at + 1 :])
    return visible(shown)[:MAX_ENTRY_CHARS]


def _scp_like(raw: str) -> bool:
    """``host:path`` or ``user@host:path`` as git reads it: a ':' before any '/'."""
    colon, slash = raw.find(":"), raw.find("/")
    return colon > 0 and (slash < 0 or colon < slash)


def _source(raw: str, shown: str, forge: Forge, rest: str) -> Source:
    kind_text, slash, body = rest.partition("/")
    kinds = _KINDS[forge]
    kind = next((kind for kind in kinds if kind.value == kind_text.lower()), None)
    if kind is None or not slash:
        allowed = ", ".join(f"{forge.value}:{kind.value}/…" for kind in kinds)
        raise InvalidURLError(shown, f"not a source: {forge.value} lists {allowed}")
    if kind is SourceKind.SEARCH:
        query, at = _query(body, shown)
        return Source(forge, kind, query, _base_url(forge, at, shown), shown)
    name, at, where = body.partition("@")
    _check_name(forge, kind, name, shown)
    return Source(forge, kind, name, _base_url(forge, where if at else None, shown), shown)


def _query(body: str, shown: str) -> tuple[str, str | None]:
    """A search's query and its ``@HOST``: a quoted query is what lies between the
    first and the last '"', and only a quoted one can be followed by ``@HOST`` (an
    unquoted query with '@' is refused: it is unclear which part is the host)."""
    if body.startswith('"'):
        closing = body.rfind('"')
        if closing == 0:
            raise InvalidURLError(shown, "the search query has no closing '\"'")
        query, after = body[1:closing], body[closing + 1 :]
        if after and not after.startswith("@"):
            raise InvalidURLError(shown, "after a quoted query only @HOST may follow")
        where = after[1:] if after else None
    elif "@" in body:
        raise InvalidURLError(shown, "quote a query that holds '@': search/\"QUERY\"@HOST")
    else:
        query, where = body, None
    if not query.strip():
        raise InvalidURLError(shown, "the search query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidURLError(shown, f"the search query is over {MAX_QUERY_CHARS} characters")
    return query, where


def _check_name(forge: Forge, kind: SourceKind, name: str, shown: str) -> None:
    parts = name.split("/")
    nested = forge is Forge.GITLAB and kind is SourceKind.GROUP
    if len(parts) > (_MAX_GROUP_DEPTH if nested else 1):
        raise InvalidURLError(shown, f"a {forge.value} {kind.value} is one name, with no '/'")
    for part in parts:
        if not _NAME.match(part) or part.endswith((".git", ".atom")):
            raise InvalidURLError(
                shown,
                f"{visible(repr(part))} is not a {kind.value} name (letters, digits, '_',"
                " '-', '.'; not starting with '.' or '-')",
            )


def _base_url(forge: Forge, where: str | None, shown: str) -> str:
    """The instance's web address from ``@HOST`` (``host[:port]``, https implied) or
    ``@URL`` (``https://host[:port][/path]``; ``http://`` only as written, and no
    token is ever sent over it); the public instance's without either."""
    if where is None:
        if forge not in _PUBLIC_HOSTS:
            raise InvalidURLError(
                shown, f"a {forge.value} source names its instance: …@codeberg.org, …@HOST"
            )
        return f"https://{_PUBLIC_HOSTS[forge]}"
    return _instance(where, shown)


def _instance(where: str, shown: str) -> str:
    """``https://host[:port][/path]`` from what follows a source's '@'."""
    url = where if "://" in where else f"https://{where}"
    try:
        parts = urlsplit(url)
        port = parts.port
        host = check_host(parts.hostname or "")
        if port == 0:
            raise ValueError("port 0")
    except ValueError as exc:
        reason = f"the instance {visible(repr(where))} is unreadable: {exc}"
        raise InvalidURLError(shown, reason) from None
    path = parts.path.rstrip("/")
    if parts.scheme not in ("https", "http") or parts.username or parts.password:
        raise InvalidURLError(shown, "an instance is https://host[:port][/path], no user-info")
    if parts.query or parts.fragment or not all(_NAME.match(p) for p in path.split("/")[1:]):
        raise InvalidURLError(shown, "the instance's path is not a plain path")
    shown_host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{shown_host}{f':{port}' if port else ''}{path}"


def _shorthand(raw: str, shown: str) -> str:
    """``owner/repo`` (github.com) or ``host/path`` as an https URL."""
    parts = raw.split("/")
    if "." in parts[0] or parts[0] == "localhost":
        try:
            host = check_host(parts[0].lower())
        except ValueError as exc:
            raise InvalidURLError(shown, f"not a URL: {exc}") from None
        if len(parts) < 3 or not all(_NAME.match(part) for part in parts[1:]):
            raise InvalidURLError(shown, "not a URL: host/owner/repo needs an owner and a name")
        return f"https://{host}/{'/'.join(parts[1:])}"
    if len(parts) != 2 or not _GITHUB_OWNER.match(parts[0]) or not _NAME.match(parts[1]):
        raise InvalidURLError(
            shown,
            "not a URL, a source (github:org/NAME...) or owner/repo"
            " (local paths start with '/', './' or '~')",
        )
    return f"https://github.com/{parts[0]}/{parts[1]}"

"""Forge API tokens from the environment, each bound to its own hosts (ADR 0013, 0023).

The variables are read as each forge's own command line reads them, and each token
is bound the way ADR 0013 binds every credential: to one https origin, never to
whichever host a list names.

- ``GH_TOKEN``, else ``GITHUB_TOKEN`` (gh's order): github.com's API
  (``api.github.com``) and its clones (``github.com``); with ``GH_HOST`` on a
  ``*.ghe.com`` tenant, that tenant (``api.X.ghe.com`` and ``X.ghe.com``) instead.
- ``GH_ENTERPRISE_TOKEN``, else ``GITHUB_ENTERPRISE_TOKEN``: the GitHub Enterprise
  Server named by ``GH_HOST`` (API and clones on that host); unbound without it.
- ``GITLAB_TOKEN``, else ``GITLAB_ACCESS_TOKEN`` (glab's): the host of
  ``GITLAB_HOST``, else ``GL_HOST``, else gitlab.com; clones as the user ``oauth2``,
  which GitLab accepts with any token.
- ``GITEA_TOKEN``: the host of ``GITEA_INSTANCE_URL`` (what tea reads for a login
  from the environment); unbound without it: Gitea has no public instance to guess.

A token whose host is missing, unreadable or plain http is bound nowhere and
:attr:`ForgeTokens.unbound` says why, so the command line can refuse a source that
would otherwise list without it (ADR 0013: a token with no host is a usage error,
not a silent anonymous run). An empty variable is unset, as gh reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from .credentials import Credential, parse_host
from .sources import Forge, Source

__all__ = ["ApiToken", "ForgeTokens", "forge_tokens"]

_GITLAB_USERNAME = "oauth2"  # GitLab takes any user name with a token; glab uses this one
_HTTPS_PORT = 443


@dataclass(frozen=True, slots=True)
class ApiToken:
    """A token for one forge's API on one https origin; ``repr()`` hides the token.

    Attributes:
      forge: the forge whose API takes it.
      host, port: the API's origin (https).
      token: the secret.
      variable: the environment variable it came from (for messages).
    """

    forge: Forge
    host: str
    port: int
    token: str = field(repr=False)
    variable: str

    def matches(self, url: str) -> bool:
        """Whether a request to ``url`` may carry this token: https, same host, same port.
        Checked on every request, the pages a server links to included."""
        try:
            parts = urlsplit(url)
            port = parts.port or _HTTPS_PORT
        except ValueError:
            return False
        return parts.scheme == "https" and parts.hostname == self.host and port == self.port


@dataclass(frozen=True, slots=True)
class ForgeTokens:
    """The tokens of the environment, bound.

    Attributes:
      api: tokens for API requests, each to its origin.
      clone: credentials for cloning, each to its origin (ADR 0013's rules apply).
      unbound: ``(forge, why)`` for each token set but bound nowhere.
    """

    api: tuple[ApiToken, ...] = ()
    clone: tuple[Credential, ...] = ()
    unbound: tuple[tuple[Forge, str], ...] = ()

    def for_request(self, url: str) -> ApiToken | None:
        """The token an API request to ``url`` carries: the last one bound to its
        origin; None for any other origin, and always for plain http."""
        return next((token for token in reversed(self.api) if token.matches(url)), None)

    def problem(self, source: Source) -> str | None:
        """Why ``source`` would be listed without the token its forge's variable holds
        (bound nowhere, or to another host), or None: for a usage error."""
        if self.for_request(source.api_url) is not None:
            return None
        return next((why for forge, why in self.unbound if forge is source.forge), None)


def forge_tokens(environ: Mapping[str, str]) -> ForgeTokens:
    """The forge tokens ``environ`` holds, bound to their hosts (see the module's text)."""
    env = {name: value.strip() for name, value in environ.items() if value.strip()}
    bound = _Binder()
    _bind_github(env, bound)
    gitlab = _first(env, "GITLAB_TOKEN", "GITLAB_ACCESS_TOKEN")
    if gitlab is not None:
        name, token = gitlab
        host = env.get("GITLAB_HOST") or env.get("GL_HOST") or "gitlab.com"
        bound.bind(Forge.GITLAB, name, token, host, host, _GITLAB_USERNAME)
    if "GITEA_TOKEN" in env:
        if "GITEA_INSTANCE_URL" in env:
            host = env["GITEA_INSTANCE_URL"]
            bound.bind(Forge.GITEA, "GITEA_TOKEN", env["GITEA_TOKEN"], host, host)
        else:
            bound.refuse(Forge.GITEA, "GITEA_TOKEN is set, but GITEA_INSTANCE_URL is not")
    return ForgeTokens(tuple(bound.api), tuple(bound.clone), tuple(bound.unbound))


def _bind_github(env: Mapping[str, str], bound: _Binder) -> None:
    """gh's two tokens: github.com's (or a ghe.com tenant's), and an Enterprise Server's."""
    gh_host = env.get("GH_HOST", "github.com").lower()
    github = _first(env, "GH_TOKEN", "GITHUB_TOKEN")
    if github is not None:
        name, token = github
        if gh_host.endswith(".ghe.com"):
            bound.bind(Forge.GITHUB, name, token, f"api.{gh_host}", gh_host)
        else:
            bound.bind(Forge.GITHUB, name, token, "api.github.com", "github.com")
    enterprise = _first(env, "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN")
    if enterprise is not None:
        name, token = enterprise
        if gh_host == "github.com" or gh_host.endswith(".ghe.com"):
            bound.refuse(Forge.GITHUB, f"{name} is set, but GH_HOST names no Enterprise Server")
        else:
            bound.bind(Forge.GITHUB, name, token, gh_host, gh_host)


def _first(env: Mapping[str, str], *names: str) -> tuple[str, str] | None:
    return next(((name, env[name]) for name in names if name in env), None)


class _Binder:
    """Collects the bindings; a token that cannot be bound becomes a reason."""

    def __init__(self) -> None:
        self.api: list[ApiToken] = []
        self.clone: list[Credential] = []
        self.unbound: list[tuple[Forge, str]] = []

    def refuse(self, forge: Forge, why: str) -> None:
        self.unbound.append((forge, why))

    def bind(
        self,
        forge: Forge,
        variable: str,
        token: str,
        api_host: str,
        clone_host: str,
        username: str | None = None,
    ) -> None:
        try:
            api = _origin(api_host)
            credential = Credential.token(token, _origin(clone_host))
            if username is not None:
                credential = Credential(credential.host, credential.port, username, token)
        except ValueError as exc:
            # The message names the host, never the token.
            self.refuse(forge, f"{variable} is bound nowhere: {exc}")
            return
        self.api.append(ApiToken(forge, *parse_host(api), token, variable))
        self.clone.append(credential)


def _origin(value: str) -> str:
    """``host[:port]`` from a host or an https URL (``https://gitlab.example.com/gl``);
    ValueError for plain http or anything unreadable."""
    if "://" not in value:
        parse_host(value)
        return value
    parts = urlsplit(value)
    if parts.scheme.lower() != "https":
        raise ValueError(f"{parts.scheme or 'no'}:// instance: a token goes over https only")
    if parts.username is not None or parts.password is not None:
        raise ValueError("the instance's URL has user-info")
    parse_host(parts.netloc)
    return parts.netloc

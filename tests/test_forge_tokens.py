"""Forge tokens from the environment, each bound to its own hosts (ADR 0013, 0023)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clonegate._domain.credentials import credential_for
from clonegate._domain.forge_tokens import ForgeTokens, forge_tokens
from clonegate._domain.sources import Source, entry_of
from clonegate._domain.urls import parse_repo_url


def source(text: str) -> Source:
    read = entry_of(text)
    assert isinstance(read, Source)
    return read


def api_token(tokens: ForgeTokens, url: str) -> str | None:
    token = tokens.for_request(url)
    return None if token is None else token.token


def clone_password(tokens: ForgeTokens, url: str) -> str | None:
    credential = credential_for(parse_repo_url(url), tokens.clone)
    return None if credential is None else credential.password


def test_github_token_goes_to_github_and_nowhere_else() -> None:
    tokens = forge_tokens({"GITHUB_TOKEN": "ghs_actions", "GH_TOKEN": "gho_mine"})
    # gh's order: GH_TOKEN first.
    assert api_token(tokens, "https://api.github.com/orgs/pallets/repos?page=2") == "gho_mine"
    assert clone_password(tokens, "https://github.com/pallets/click.git") == "gho_mine"
    for elsewhere in (
        "http://api.github.com/orgs/x/repos",  # plain http
        "https://api.github.com:8443/orgs/x/repos",  # another port
        "https://api.github.com.evil.example/orgs/x/repos",
        "https://evil.example/orgs/x/repos?next=api.github.com",
        "https://gitlab.com/api/v4/groups/x/projects",
        "not a url at all",
        "https://[::1/",
    ):
        assert tokens.for_request(elsewhere) is None, elsewhere
    assert clone_password(tokens, "https://evil.example/pallets/click.git") is None
    assert clone_password(tokens, "https://alice:pw@github.com/x/y") is None  # user-info wins
    assert tokens.problem(source("github:org/pallets")) is None


def test_a_token_repr_never_shows_it() -> None:
    tokens = forge_tokens({"GH_TOKEN": "gho_secret", "GITLAB_TOKEN": "glpat_secret"})
    assert "secret" not in repr(tokens)


def test_ghe_com_tenant_takes_the_github_token_when_gh_host_names_it() -> None:
    tokens = forge_tokens({"GH_TOKEN": "t", "GH_HOST": "acme.ghe.com"})
    assert api_token(tokens, source("github:org/x@acme.ghe.com").api_url + "/orgs") == "t"
    assert clone_password(tokens, "https://acme.ghe.com/x/y") == "t"
    assert api_token(tokens, "https://api.github.com/orgs/x") is None


def test_an_enterprise_token_needs_gh_host() -> None:
    bound = forge_tokens({"GH_ENTERPRISE_TOKEN": "e", "GH_HOST": "ghe.corp"})
    assert api_token(bound, source("github:org/x@ghe.corp").api_url + "/orgs/x/repos") == "e"
    assert clone_password(bound, "https://ghe.corp/x/y") == "e"
    unbound = forge_tokens({"GITHUB_ENTERPRISE_TOKEN": "e"})
    assert unbound.api == ()
    assert unbound.clone == ()
    problem = unbound.problem(source("github:org/x@ghe.corp"))
    assert problem == "GITHUB_ENTERPRISE_TOKEN is set, but GH_HOST names no Enterprise Server"


def test_gitlab_token_goes_to_its_host_as_glab_reads_it() -> None:
    public = forge_tokens({"GITLAB_TOKEN": "glpat"})
    assert api_token(public, source("gitlab:group/x").api_url + "/groups/x/projects") == "glpat"
    credential = credential_for(parse_repo_url("https://gitlab.com/g/p.git"), public.clone)
    assert credential is not None
    assert (credential.username, credential.password) == ("oauth2", "glpat")
    own = forge_tokens({"GITLAB_TOKEN": "glpat", "GITLAB_HOST": "https://gitlab.example.com/gl"})
    assert api_token(own, source("gitlab:group/x@https://gitlab.example.com/gl").api_url) == "glpat"
    assert api_token(own, "https://gitlab.com/api/v4/groups/x") is None
    gl_host = forge_tokens({"GITLAB_ACCESS_TOKEN": "a", "GL_HOST": "git.example:8443"})
    assert api_token(gl_host, "https://git.example:8443/api/v4/projects") == "a"


def test_gitea_token_needs_its_instance() -> None:
    bound = forge_tokens({"GITEA_TOKEN": "g", "GITEA_INSTANCE_URL": "https://codeberg.org"})
    assert api_token(bound, source("gitea:org/x@codeberg.org").api_url + "/orgs/x/repos") == "g"
    assert clone_password(bound, "https://codeberg.org/x/y.git") == "g"
    unbound = forge_tokens({"GITEA_TOKEN": "g"})
    assert unbound.api == ()
    assert unbound.problem(source("gitea:org/x@codeberg.org")) == (
        "GITEA_TOKEN is set, but GITEA_INSTANCE_URL is not"
    )
    assert unbound.problem(source("github:org/x")) is None  # not that forge's token


@pytest.mark.parametrize(
    ("environ", "why"),
    [
        ({"GITLAB_TOKEN": "t", "GITLAB_HOST": "http://gitlab.example.com"}, "https only"),
        ({"GITLAB_TOKEN": "t", "GITLAB_HOST": "https://u:p@gitlab.example.com"}, "user-info"),
        ({"GITLAB_TOKEN": "t", "GITLAB_HOST": "-oProxyCommand=x"}, "not a host name"),
        ({"GITEA_TOKEN": "t", "GITEA_INSTANCE_URL": "ftp://x"}, "https only"),
        ({"GH_TOKEN": "two words"}, "whitespace"),
        ({"GH_ENTERPRISE_TOKEN": "e", "GH_HOST": "a/b"}, "give only host[:port]"),
    ],
)
def test_a_token_with_an_unusable_host_is_bound_nowhere(environ: dict[str, str], why: str) -> None:
    tokens = forge_tokens(environ)
    assert tokens.api == ()
    assert tokens.clone == ()
    ((_, reason),) = tokens.unbound
    assert why in reason
    assert "two words" not in reason


def test_empty_variables_are_unset() -> None:
    tokens = forge_tokens({"GH_TOKEN": "", "GITHUB_TOKEN": "g", "GITLAB_TOKEN": "  "})
    assert api_token(tokens, "https://api.github.com/x") == "g"
    assert [token.variable for token in tokens.api] == ["GITHUB_TOKEN"]


HOST = st.sampled_from(["api.github.com", "github.com", "gitlab.com", "codeberg.org", "evil.x"])


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["https", "http", "ftp", "HTTPS"]),
    HOST,
    st.sampled_from(["", ":443", ":8443"]),
    st.text(alphabet="/?#@:.a", max_size=12),
)
def test_a_token_goes_only_to_the_origin_it_is_bound_to(
    scheme: str, host: str, port: str, tail: str
) -> None:
    tokens = forge_tokens(
        {
            "GH_TOKEN": "gh",
            "GITLAB_TOKEN": "gl",
            "GITEA_TOKEN": "ge",
            "GITEA_INSTANCE_URL": "https://codeberg.org",
        }
    )
    url = f"{scheme}://{host}{port}/{tail}"
    token = tokens.for_request(url)
    if token is not None:
        assert scheme.lower() == "https"
        assert port in ("", ":443")
        assert "@" not in url.split("/")[2]  # no user-info moved the host
        assert (token.host, token.token) in {
            ("api.github.com", "gh"),
            ("gitlab.com", "gl"),
            ("codeberg.org", "ge"),
        }
        assert host == token.host

"""Credentials: what a binding names, and which URL gets which credential."""

from __future__ import annotations

import pytest

from clonegate import Credential, parse_repo_url
from clonegate._domain.credentials import credential_for


@pytest.mark.parametrize(
    ("host", "bound"),
    [
        ("github.com", ("github.com", 443, "https://github.com")),
        ("GitHub.COM:443", ("github.com", 443, "https://github.com")),
        ("git.example:8443", ("git.example", 8443, "https://git.example:8443")),
        ("[::1]:8443", ("::1", 8443, "https://[::1]:8443")),
        ("[::1]", ("::1", 443, "https://[::1]")),
    ],
)
def test_a_binding_names_one_origin(host: str, bound: tuple[str, int, str]) -> None:
    credential = Credential.token("t0ken", host)
    assert (credential.host, credential.port, credential.origin) == bound
    assert credential.username == "x-access-token"
    assert "t0ken" not in repr(credential)
    assert "t0ken" not in str(credential)


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("", "no host"),
        ("https://github.com", "give only host[:port]"),
        ("me@github.com", "give only host[:port]"),
        ("github.com:0", "no valid port"),
        ("github.com:x", "no valid port"),
        ("[::1", "is not host[:port]"),
        ("-oProxyCommand=x", "is not a host name"),
        ("git example", "is not a host name"),
    ],
)
def test_a_binding_that_is_not_a_host_is_refused(host: str, why: str) -> None:
    with pytest.raises(ValueError, match=why.replace("[", r"\[").replace("]", r"\]")):
        Credential.token("t0ken", host)


@pytest.mark.parametrize("secret", ["", "two words", "line\nbreak"])
def test_a_secret_must_be_one_printable_word(secret: str) -> None:
    with pytest.raises(ValueError, match="password"):
        Credential.token(secret, "github.com")


def test_the_last_binding_for_an_origin_wins_and_user_info_beats_all() -> None:
    older = Credential.token("old", "git.example")
    newer = Credential("git.example", 443, "bot", "new")
    bound = (older, newer, Credential.token("other", "git.example:8443"))
    assert credential_for(parse_repo_url("https://git.example/o/r.git"), bound) is newer
    assert credential_for(parse_repo_url("https://git.example:8443/o/r.git"), bound) is bound[2]
    for url in (
        "https://me@git.example/o/r.git",
        "http://git.example/o/r.git",
        "ssh://git@git.example/o/r.git",
        "https://sub.git.example/o/r.git",
    ):
        assert credential_for(parse_repo_url(url), bound) is None, url

"""Arguments and list lines read as URLs, ``owner/repo`` shorthand or forge sources
(ADR 0023): each syntax, each refusal, and hostile lines that are one error each."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clonegate._domain.errors import InvalidURLError
from clonegate._domain.sources import (
    MAX_ENTRY_CHARS,
    Forge,
    Source,
    SourceKind,
    entry_of,
    read_entries,
)
from clonegate._domain.urls import parse_repo_url


@pytest.mark.parametrize(
    ("text", "forge", "kind", "name", "base", "api"),
    [
        ("github:org/pallets", "github", "org", "pallets", "https://github.com", None),
        ("github:user/sindresorhus", "github", "user", "sindresorhus", None, None),
        ('github:search/"language:python stars:>1000"', "github", "search", None, None, None),
        ("github:search/language:python stars:>1000", "github", "search", None, None, None),
        ("gitlab:group/gitlab-org", "gitlab", "group", None, "https://gitlab.com", None),
        ("gitlab:group/gitlab-org/security/x", "gitlab", "group", None, None, None),
        ("gitlab:user/alice", "gitlab", "user", "alice", None, None),
        ("gitea:org/NAME@codeberg.org", "gitea", "org", "NAME", "https://codeberg.org", None),
        ("forgejo:user/bob@codeberg.org", "gitea", "user", "bob", None, None),
        ("bitbucket:workspace/atlassian", "bitbucket", "workspace", None, None, None),
        ("GitHub:ORG/pallets", "github", "org", "pallets", None, None),
        ("  github:org/pallets  ", "github", "org", "pallets", None, None),
    ],
)
def test_each_source_syntax_reads(
    text: str, forge: str, kind: str, name: str | None, base: str | None, api: str | None
) -> None:
    source = entry_of(text)
    assert isinstance(source, Source)
    assert (source.forge, source.kind) == (Forge(forge), SourceKind(kind))
    if name is not None:
        assert source.name == name
    if base is not None:
        assert source.base_url == base
    assert source.text == text.strip()


def test_a_search_keeps_its_query_as_written() -> None:
    quoted = entry_of('github:search/"language:python stars:>1000"')
    bare = entry_of("github:search/language:python stars:>1000")
    phrase = entry_of('github:search/""hello world" in:readme"@ghe.example.com')
    assert isinstance(quoted, Source)
    assert isinstance(bare, Source)
    assert quoted.name == bare.name == "language:python stars:>1000"
    assert isinstance(phrase, Source)
    assert phrase.name == '"hello world" in:readme'
    assert phrase.base_url == "https://ghe.example.com"


@pytest.mark.parametrize(
    ("text", "base", "api"),
    [
        ("github:org/pallets", "https://github.com", "https://api.github.com"),
        ("github:org/x@ghe.corp", "https://ghe.corp", "https://ghe.corp/api/v3"),
        ("github:org/x@acme.ghe.com", "https://acme.ghe.com", "https://api.acme.ghe.com"),
        ("gitlab:group/x", "https://gitlab.com", "https://gitlab.com/api/v4"),
        (
            "gitlab:group/x@https://gitlab.example.com/gl/",
            "https://gitlab.example.com/gl",
            "https://gitlab.example.com/gl/api/v4",
        ),
        ("gitea:org/x@git.example:8443", "https://git.example:8443", None),
        ("gitea:org/x@http://127.0.0.1:3000", "http://127.0.0.1:3000", None),
        ("gitea:org/x@[::1]:3000", "https://[::1]:3000", "https://[::1]:3000/api/v1"),
        ("bitbucket:workspace/x", "https://bitbucket.org", "https://api.bitbucket.org/2.0"),
        ("bitbucket:workspace/x@http://127.0.0.1:80", "http://127.0.0.1:80", None),
        ("bitbucket:workspace/x@[::1]:9", "https://[::1]:9", "https://[::1]:9/2.0"),
    ],
)
def test_the_instance_and_its_api(text: str, base: str, api: str | None) -> None:
    source = entry_of(text)
    assert isinstance(source, Source)
    assert source.base_url == base
    if api is not None:
        assert source.api_url == api


@pytest.mark.parametrize(
    ("text", "url"),
    [
        ("pallets/click", "https://github.com/pallets/click"),
        ("pallets/click.git", "https://github.com/pallets/click.git"),
        ("github.com/pallets/click", "https://github.com/pallets/click"),
        ("GitLab.com/group/sub/project", "https://gitlab.com/group/sub/project"),
        ("localhost/a/b", "https://localhost/a/b"),
        ("https://example.com/a/b.git", "https://example.com/a/b.git"),
        ("git@github.com:pallets/click.git", "git@github.com:pallets/click.git"),
        ("ssh://git@host/x", "ssh://git@host/x"),
    ],
)
def test_urls_and_shorthand(text: str, url: str) -> None:
    assert entry_of(text) == url
    parse_repo_url(url)  # what the rest of the run is handed is a URL it reads


def test_a_path_that_exists_is_still_shorthand(tmp_path_cwd: None) -> None:
    """ADR 0023: no look at the file system. ``pallets/click`` is github.com's even
    where a directory of that name exists; a local path starts with /, ./ or ~."""
    assert entry_of("pallets/click") == "https://github.com/pallets/click"
    assert entry_of("./pallets/click", allow_local=True) == "./pallets/click"
    with pytest.raises(InvalidURLError, match="local paths are not allowed"):
        entry_of("./pallets/click")


@pytest.fixture
def tmp_path_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pallets" / "click").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("github:team/x", "github lists github:org/"),
        ("github:org", "not a source"),
        ("github:org/", "is not a org name"),
        ("github:org/a/b", "one name, with no '/'"),
        ("github:org/../x", "one name"),
        ("github:org/-rf", "not a org name"),
        ("github:org/.hidden", "not a org name"),
        ("github:org/a?b", "not a org name"),
        ("github:org/a%2fb", "not a org name"),
        ("gitlab:group/x.git", "not a group name"),
        ("gitlab:org/x", "gitlab lists gitlab:group/"),
        ("gitea:org/x", "names its instance"),
        ("github:search/", "query is empty"),
        ('github:search/"   "', "query is empty"),
        ('github:search/"unclosed', "no closing"),
        ('github:search/"q"x', "only @HOST may follow"),
        ("github:search/a@b.com", "quote a query"),
        ("github:search/" + "q" * 1025, "over 1024"),
        ("github:org/x@ftp://h", "https://host"),
        ("gitlab:group/x@https://u:pw@h.com", "no user-info"),
        ("gitlab:group/x@https://h.com/a?b", "plain path"),
        ("gitlab:group/x@https://h.com:99999", "unreadable"),
        ("gitlab:group/x@h.com:0", "unreadable"),
        ("gitlab:group/x@", "unreadable"),
        ("github:org/x@-oProxyCommand=x", "unreadable"),
        ("a/b/c", "not a URL, a source"),
        ("pallets", "not a URL, a source"),
        ("pal.lets/click", "needs an owner and a name"),
        ("github.com/pallets", "needs an owner and a name"),
        ("github.com/../x/y", "needs an owner and a name"),
        ("user@host.com/a/b", "not a host name"),
        ("-oProxyCommand=x/y", "not a URL, a source"),
        ("", "empty URL"),
        ("https://h/x y", "whitespace"),
    ],
)
def test_a_line_that_reads_as_nothing_says_why(text: str, why: str) -> None:
    with pytest.raises(InvalidURLError) as caught:
        entry_of(text)
    assert why in caught.value.reason
    assert caught.value.kind == "invalid_url"


def test_secrets_and_controls_never_reach_the_message() -> None:
    for text in (
        "gitlab:group/x@https://alice:s3cret@h.com",
        "https://alice:s3cret@h.com/\x1b[2Jx",
        "github:org/\x1b]0;pwned\x07",
        "owner/\u202erepo",
    ):
        with pytest.raises(InvalidURLError) as caught:
            entry_of(text)
        message = str(caught.value)
        assert "s3cret" not in message
        assert message.isprintable(), message


def test_a_huge_line_is_one_short_error() -> None:
    with pytest.raises(InvalidURLError) as caught:
        entry_of("github:org/" + "a" * 10_000_000)
    assert len(str(caught.value)) < MAX_ENTRY_CHARS + 200
    assert "longer than" in caught.value.reason


@pytest.mark.parametrize(
    "text",
    [
        "https://alice:" + "s3cret" * 1000 + "@h/x",
        "alice:" + "s3cret" * 1000 + "@h:x",
        "github:org/x@https://bob:" + "s3cret" * 1000 + "@h",
    ],
)
def test_an_overlong_line_shows_no_part_of_a_secret(text: str) -> None:
    with pytest.raises(InvalidURLError) as caught:
        entry_of(text)
    assert "s3cret" not in str(caught.value)
    assert f"({len(text)} characters)" in str(caught.value)


def test_every_line_of_a_list_is_read_whatever_the_others_hold() -> None:
    lines = [
        ("argument 1", "github:org/pallets"),
        ("argument 2", "\x00\xff"),
        ("list line 1", "pallets/click"),
        ("list line 2", "github:org/a/b"),
        ("list line 3", "gitea:org/x@codeberg.org"),
    ]
    read = list(read_entries(lines))
    assert [where for where, _ in read] == [where for where, _ in lines]
    kinds = [type(entry).__name__ for _, entry in read]
    assert kinds == ["Source", "InvalidURLError", "str", "InvalidURLError", "Source"]
    error = read[1][1]
    assert isinstance(error, InvalidURLError)
    assert error.__traceback__ is None  # kept without the frames that raised it


# Pieces that meet often: forge prefixes, kinds, '@', quotes, escapes, controls.
PIECES = list("abgl:/@\"'.-_~ %?#\\\x00\x1b\u202e\udcff9")
PIECES += ["github:", "gitlab:", "gitea:", "bitbucket:", "://", "org/", "search/", "group/"]
LINE = st.lists(st.sampled_from(PIECES), max_size=20).map("".join)


@settings(max_examples=3000, deadline=None)
@given(st.one_of(LINE, st.text(max_size=80)))
def test_any_line_reads_or_is_one_invalid_url_error(text: str) -> None:
    """No line raises anything but InvalidURLError, and every message is printable."""
    entry: str | Source | InvalidURLError
    try:
        entry = entry_of(text)
    except InvalidURLError as exc:
        entry = exc
    if isinstance(entry, InvalidURLError):
        assert str(entry).isprintable()
    elif isinstance(entry, Source):
        assert entry.text.isprintable()
        assert entry.base_url.startswith(("https://", "http://"))
        assert "/" not in entry.name or entry.kind in (SourceKind.GROUP, SourceKind.SEARCH)
        assert entry.api_url.startswith(entry.base_url) or entry.public or ".ghe.com" in entry.host
    else:
        parse_repo_url(entry)


NAME = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_-]{0,20}\Z")


@settings(max_examples=500, deadline=None)
@given(NAME, st.sampled_from(["github:org", "github:user", "gitlab:group", "bitbucket:workspace"]))
def test_a_valid_name_reads_back_as_itself(name: str, prefix: str) -> None:
    source = entry_of(f"{prefix}/{name}")
    assert isinstance(source, Source)
    assert source.name == name
    assert source.public

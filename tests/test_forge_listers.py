"""The registry of listing adapters (clonegate/_adapters/forges/registry.py): every forge
has exactly one adapter, and ForgeListers hands each source to its forge's, keeping one
adapter per forge (so a re-list reuses its ETags). And what every forge's adapter does
alike, run once per forge: a failure mid-way keeps the pages before it, malformed items
are one error each, a redirect is never followed and the token (in each forge's own
header) goes to its API host only (issue 45, ADR 0023)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio
import urllib3

from clonegate._adapters.forges.registry import LISTERS, ForgeListers
from clonegate._domain.forge_tokens import ForgeTokens
from clonegate._domain.sources import Forge

from .support.forges.bitbucket import BitbucketApi
from .support.forges.catalogue import made
from .support.forges.core import Answer, ForgeServer, failing_from, on_request, rewrite, serving
from .support.forges.gitea import GiteaApi
from .support.forges.github import GitHubApi
from .support.forges.gitlab import GitLabApi
from .support.forges.listing import Listing, https_context, listed, source, token_for

GIT = "http://127.0.0.1:9418"


def test_every_forge_has_exactly_one_adapter() -> None:
    forges = [forge for forge, _ in LISTERS]
    assert sorted(forges) == sorted(Forge)
    assert len(set(forges)) == len(forges)


async def test_each_source_goes_to_its_forges_adapter(nursery: trio.Nursery) -> None:
    github = GitHubApi(made("acme", 150), git_base=GIT, orgs=["acme"], prefix="/api/v3")
    gitlab = GitLabApi(made("acme", 3), git_base=GIT)
    gitea = GiteaApi(made("acme", 4), git_base=GIT, orgs=["acme"])
    bitbucket = BitbucketApi(made("acme", 5), git_base=GIT)
    for server in (github, gitlab, gitea, bitbucket):
        await nursery.start(server.serve)
    got = Listing()
    listers = ForgeListers(ForgeTokens(), on_wait=got.note)
    texts = [
        f"github:org/acme@{github.base_url}",
        f"gitlab:group/acme@{gitlab.base_url}",
        f"forgejo:org/acme@{gitea.base_url}",
        f"bitbucket:workspace/acme@{bitbucket.base_url}",
        f"github:org/acme@{github.base_url}",  # again: the same adapter, its ETags
    ]
    for text in texts:
        await listed(listers, source(text), got)
    assert got.error is None
    assert len(got.listed) == 150 + 3 + 4 + 5 + 150
    # Each record says the forge whose listing said it (the report's listed object).
    forges = [record.forge for record in got.listed]
    assert (
        forges
        == [Forge.GITHUB] * 150
        + [Forge.GITLAB] * 3
        + [Forge.GITEA] * 4
        + [Forge.BITBUCKET] * 5
        + [Forge.GITHUB] * 150
    )
    assert [seen.status for seen in github.seen] == [200, 200, 304, 304]
    assert [len(server.seen) for server in (gitlab, gitea, bitbucket)] == [1, 1, 1]


@pytest.mark.parametrize(
    ("make", "text", "per_page"),
    [
        (lambda: GitLabApi(made("acme", 350), git_base=GIT), "gitlab:group/acme@{}", 100),
        (lambda: GiteaApi(made("acme", 150), git_base=GIT, orgs=["acme"]), "gitea:org/acme@{}", 50),
        (lambda: BitbucketApi(made("acme", 350), git_base=GIT), "bitbucket:workspace/acme@{}", 100),
    ],
    ids=["gitlab", "gitea", "bitbucket"],
)
async def test_a_failure_midway_keeps_what_was_listed(
    nursery: trio.Nursery, make: Callable[[], ForgeServer], text: str, per_page: int
) -> None:
    server = await serving(nursery, make())
    # The forge's own error shapes, each with a hostile message.
    failure = b'{"message": "boom\\u001b[2J", "error": {"message": "boom\\u001b[2J"}}'
    server.tamper = failing_from(3, Answer(500, {}, failure))
    got = Listing()
    await listed(
        ForgeListers(ForgeTokens(), on_wait=got.note), source(text.format(server.base_url)), got
    )
    assert got.names == [f"acme/repo-{i:05d}" for i in range(2 * per_page)]
    assert got.error is not None
    assert "HTTP 500" in str(got.error)
    assert "boom" in str(got.error)
    assert str(got.error).isprintable()


_SPOILS: dict[str, list[tuple[int, str | None, object]]] = {
    "gitlab": [
        (3, "http_url_to_repo", "file:///etc/\x1b[2J"),
        (5, None, ["not a project"]),
        (7, "star_count", -1),
        (9, "path_with_namespace", "evil\x1b]0;x\x07/name"),
        (11, "last_activity_at", "yesterday\x1b[2J"),
        (12, "topics", "cli"),
    ],
    "gitea": [
        (1, "clone_url", "https://user:secret@127.0.0.1/acme/x.git"),
        (2, "id", "12"),
        (3, "archived", "yes"),
        (4, "topics", "cli"),
        (5, "full_name", "rtl\u202egnp/x"),
        (6, "updated_at", "2024-01-01T00:00:00"),  # no zone
    ],
}


@pytest.mark.parametrize(
    ("forge", "make", "text"),
    [
        ("gitlab", lambda: GitLabApi(made("acme", 150), git_base=GIT), "gitlab:group/acme@{}"),
        (
            "gitea",
            lambda: GiteaApi(made("acme", 50), git_base=GIT, orgs=["acme"]),
            "gitea:org/acme@{}",
        ),
    ],
)
async def test_malformed_items_are_one_error_each(
    nursery: trio.Nursery, forge: str, make: Callable[[], ForgeServer], text: str
) -> None:
    server = await serving(nursery, make())
    spoils = _SPOILS[forge]

    def spoil(items: list[Any]) -> None:
        for index, key, value in spoils:
            if key is None:
                items[index] = value
            else:
                items[index][key] = value

    server.tamper = on_request(1, rewrite(spoil))
    got = Listing()
    listers = ForgeListers(ForgeTokens(), on_wait=got.note)
    await listed(listers, source(text.format(server.base_url)), got)
    assert got.error is None
    assert len(got.refused) == len(spoils)
    assert [f"acme/repo-{index:05d}" in got.names for index, _, _ in spoils] == [False] * 6
    assert all(message.isprintable() for message in got.refused)
    assert not any("secret" in message for message in got.refused)


_FORGES: dict[str, tuple[Callable[[], ForgeServer], str, str, str]] = {
    # forge: (server, source, the header the token goes in, its value)
    "github": (
        lambda: GitHubApi(made("acme", 5), git_base=GIT, orgs=["acme"], prefix="/api/v3"),
        "github:org/acme@{}",
        "authorization",
        "Bearer {}",
    ),
    "gitlab": (
        lambda: GitLabApi(made("acme", 5), git_base=GIT),
        "gitlab:group/acme@{}",
        "private-token",
        "{}",
    ),
    "gitea": (
        lambda: GiteaApi(made("acme", 5), git_base=GIT, orgs=["acme"]),
        "gitea:org/acme@{}",
        "authorization",
        "token {}",
    ),
    "bitbucket": (
        lambda: BitbucketApi(made("acme", 5), git_base=GIT),
        "bitbucket:workspace/acme@{}",
        "authorization",
        "Bearer {}",
    ),
}


@pytest.mark.parametrize("forge", sorted(_FORGES))
async def test_a_redirect_is_never_followed_and_the_token_stays_home(
    nursery: trio.Nursery, tmp_path: Path, forge: str
) -> None:
    make, text, header, form = _FORGES[forge]
    context, ca = https_context(tmp_path)
    api, elsewhere = make(), make()
    api.tls = elsewhere.tls = context
    await serving(nursery, api)
    await serving(nursery, elsewhere)
    location = {"Location": f"{elsewhere.base_url}/moved"}
    api.tamper = lambda request, served, index: Answer(302, location)
    tokens = token_for(Forge(forge), api, "s3cret-token")
    got = Listing()
    pool = urllib3.PoolManager(ca_certs=ca)
    kind = dict(LISTERS)[Forge(forge)]
    lister = kind(tokens, on_wait=got.note, pool=pool)
    await listed(lister, source(text.format(api.base_url)), got)
    assert got.listed == []
    assert got.error is not None
    assert "HTTP 302" in str(got.error)
    assert "s3cret" not in str(got.error)
    assert [seen.headers.get(header) for seen in api.seen] == [form.format("s3cret-token")]
    assert [seen.host for seen in api.seen] == [f"127.0.0.1:{api.port}"]
    assert elsewhere.seen == []

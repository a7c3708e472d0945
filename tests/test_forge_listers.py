"""The registry of listing adapters (clonegate/_adapters/forges/registry.py): every forge
has exactly one adapter, and ForgeListers hands each source to its forge's, keeping one
adapter per forge (so a re-list reuses its ETags) (issue 45, ADR 0023)."""

from __future__ import annotations

import trio

from clonegate._adapters.forges.registry import LISTERS, ForgeListers
from clonegate._domain.forge_tokens import ForgeTokens
from clonegate._domain.sources import Forge

from .support.forges.bitbucket import BitbucketApi
from .support.forges.catalogue import made
from .support.forges.gitea import GiteaApi
from .support.forges.github import GitHubApi
from .support.forges.gitlab import GitLabApi
from .support.forges.listing import Listing, listed, source

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
    assert [seen.status for seen in github.seen] == [200, 200, 304, 304]
    assert [len(server.seen) for server in (gitlab, gitea, bitbucket)] == [1, 1, 1]

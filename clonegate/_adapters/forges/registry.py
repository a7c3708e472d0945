"""Which adapter lists which forge: one list, read by :class:`ForgeListers`, the one
:class:`~clonegate._domain.listing.Lister` the wiring hands the listing producer
(issue 45, ADR 0023). A forge added to :class:`Forge` gets its line here
(tests/test_forge_listers.py checks that every forge has one)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import urllib3

from ..._domain.forge_tokens import ForgeTokens
from ..._domain.listing import Page, WaitNote
from ..._domain.sources import Forge, Source
from .bitbucket import BitbucketLister
from .gitea import GiteaLister
from .github import GitHubLister
from .gitlab import GitLabLister
from .http import HttpLister

__all__ = ["LISTERS", "ForgeListers"]

LISTERS: tuple[tuple[Forge, type[HttpLister]], ...] = (
    (Forge.GITHUB, GitHubLister),
    (Forge.GITLAB, GitLabLister),
    (Forge.GITEA, GiteaLister),  # Forgejo too: `forgejo:` sources are read as Gitea
    (Forge.BITBUCKET, BitbucketLister),
)


class ForgeListers:
    """Lists any source with its forge's adapter, one adapter per forge (each keeps
    its ETags for a re-list), all on one connection pool."""

    def __init__(self, tokens: ForgeTokens, *, on_wait: WaitNote, timeout: float = 30.0) -> None:
        pool = urllib3.PoolManager()
        self._listers = {
            forge: kind(tokens, on_wait=on_wait, timeout=timeout, pool=pool)
            for forge, kind in LISTERS
        }

    def pages(self, source: Source, *, deadline: float) -> AsyncIterator[Page]:
        """Every page of ``source``, by its forge's adapter (the listing port)."""
        return self._listers[source.forge].pages(source, deadline=deadline)

"""Which adapter lists which forge: one list, read by :class:`ForgeListers`, the one
:class:`~clonegate._domain.listing.Lister` the wiring hands the listing producer
(issue 45, ADR 0023). A forge added to :class:`Forge` gets its line here, or the
listing refuses its sources in words."""

from __future__ import annotations

from collections.abc import AsyncIterator

import urllib3

from ..._domain.forge_tokens import ForgeTokens
from ..._domain.listing import ListingError, Page, WaitNote
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

    def __init__(
        self,
        tokens: ForgeTokens,
        *,
        on_wait: WaitNote,
        timeout: float = 30.0,
        pool: urllib3.PoolManager | None = None,
    ) -> None:
        self._tokens = tokens
        self._on_wait = on_wait
        self._timeout = timeout
        self._pool = pool if pool is not None else urllib3.PoolManager()
        self._made: dict[Forge, HttpLister] = {}

    def pages(self, source: Source, *, deadline: float) -> AsyncIterator[Page]:
        """Every page of ``source``, by its forge's adapter (the listing port)."""
        return self._lister(source).pages(source, deadline=deadline)

    def _lister(self, source: Source) -> HttpLister:
        if source.forge not in self._made:
            kind = dict(LISTERS).get(source.forge)
            if kind is None:
                raise ListingError(f"{source}: no adapter lists {source.forge.value}")
            self._made[source.forge] = kind(
                self._tokens, on_wait=self._on_wait, timeout=self._timeout, pool=self._pool
            )
        return self._made[source.forge]

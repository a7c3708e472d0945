"""What the listing adapters' tests share: a listing walked to its end or its error,
adapters made with a record of their rate-limit waits, and a CA for https servers.

:func:`listed` walks any :class:`~clonegate._domain.listing.Lister`; a
:class:`Listing` keeps its pages, the error that ended it (pages given before it
stand) and the waits announced."""

from __future__ import annotations

import math
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import trustme
import urllib3

from clonegate._adapters.forges.http import HttpLister
from clonegate._domain.forge_tokens import ApiToken, ForgeTokens
from clonegate._domain.listed import Listed
from clonegate._domain.listing import Lister, ListingError, Page
from clonegate._domain.sources import Forge, Source, entry_of

from .core import ForgeServer

FOREVER = math.inf


@dataclass
class Listing:
    """What one listing gave: its pages, then its error if it failed."""

    pages: list[Page] = field(default_factory=list)
    error: ListingError | None = None
    waits: list[tuple[str, float]] = field(default_factory=list)

    @property
    def listed(self) -> list[Listed]:
        return [record for page in self.pages for record in page.listed]

    @property
    def refused(self) -> list[str]:
        return [message for page in self.pages for message in page.refused]

    @property
    def names(self) -> list[str]:
        return [record.full_name for record in self.listed]

    def note(self, why: str, seconds: float) -> None:
        self.waits.append((why, seconds))


def adapter(
    kind: type[HttpLister],
    got: Listing,
    tokens: ForgeTokens | None = None,
    ca: str | None = None,
) -> HttpLister:
    """An adapter of ``kind`` whose waits ``got`` records; ``ca`` trusts a test CA."""
    pool = urllib3.PoolManager(ca_certs=ca) if ca is not None else None
    return kind(tokens or ForgeTokens(), on_wait=got.note, pool=pool)


async def listed(
    lister: Lister, source: Source, got: Listing, deadline: float = FOREVER
) -> Listing:
    """Every page of ``source`` into ``got``, then the error that ended it, if any."""
    try:
        async for page in lister.pages(source, deadline=deadline):
            got.pages.append(page)
    except ListingError as exc:
        got.error = exc
    return got


def source(text: str) -> Source:
    found = entry_of(text)
    assert isinstance(found, Source)
    return found


def token_for(forge: Forge, server: ForgeServer, secret: str) -> ForgeTokens:
    """``secret`` bound to ``server``'s origin, as ``forge_tokens`` would bind it."""
    return ForgeTokens(api=(ApiToken(forge, "127.0.0.1", server.port, secret, "TOKEN"),))


def https_context(tmp_path: Path) -> tuple[ssl.SSLContext, str]:
    """A server context for 127.0.0.1 and the file of the CA that signed it."""
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1", "localhost").configure_cert(context)
    path = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(path))
    return context, str(path)


async def run(
    kind: type[HttpLister],
    text: str,
    *,
    tokens: ForgeTokens | None = None,
    ca: str | None = None,
    deadline: float = FOREVER,
) -> Listing:
    """The listing of the source ``text`` by a new adapter of ``kind``, its waits too."""
    got = Listing()
    return await listed(adapter(kind, got, tokens, ca), source(text), got, deadline)

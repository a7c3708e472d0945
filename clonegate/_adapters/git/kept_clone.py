"""``KeptClone``: a kept clone as the parent hands it out, removed the way it was made.

Apart from :mod:`.kept_place` because it is the parent's only: the clone workers
import that module, and the zygote that forks them never imports trio (ADR 0003).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import trio

from ..._domain.vcs import ClonedSource
from .kept_place import KeptPlace, remove_kept

__all__ = ["KeptClone"]


@dataclass(frozen=True, slots=True, kw_only=True)
class KeptClone(ClonedSource):
    """A kept clone, as :meth:`DulwichVCS.clone` returns it: :meth:`aclose` removes it
    with :func:`remove_kept`, not by its path, which may run through a link by then."""

    place: KeptPlace

    @classmethod
    def of(cls, source: ClonedSource, place: KeptPlace) -> KeptClone:
        """``source``, kept at ``place``."""
        values = {field.name: getattr(source, field.name) for field in dataclasses.fields(source)}
        return cls(place=place, **values)

    async def aclose(self) -> None:
        """Remove the kept clone from disk, following no symbolic link. Idempotent.

        Shielded and never abandoned half-way, as :meth:`ClonedSource.aclose`; raises
        :class:`OSError`, removing nothing, if its path runs through a link by now.
        """
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(remove_kept, self.place)

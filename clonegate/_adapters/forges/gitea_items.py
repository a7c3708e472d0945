"""One Gitea (or Forgejo) repository as a :class:`Listed` (ADR 0023).

Gitea sends every flag the record holds but ``disabled``; ``size`` is in KiB, as
GitHub's; a language of ``""`` is none; the time is ``updated_at``, which a push moves
but so does a change of the repository's settings: the ADR says what that means for
``--pushed-after``.
"""

from __future__ import annotations

from typing import Any

from ..._domain.listed import Listed
from .items import Fields

__all__ = ["listed_of"]


def listed_of(item: Any) -> Listed:
    """``item`` as a record; ValueError (escaped words) when it does not hold."""
    got = Fields(item, "full_name")
    return Listed(
        full_name=got.get("full_name"),
        clone_url=got.get("clone_url"),
        forge_id=got.number("id"),
        default_branch=got.named("default_branch"),
        archived=got.get("archived"),
        fork=got.get("fork"),
        empty=got.get("empty"),
        mirror=got.get("mirror"),
        size_kib=got.get("size"),
        language=got.named("language"),
        topics=got.topics("topics"),
        stars=got.get("stars_count"),
        pushed_at=got.time("updated_at"),
    )

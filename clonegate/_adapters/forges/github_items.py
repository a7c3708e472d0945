"""One GitHub repository item (list endpoints and search alike) as a :class:`Listed`.

The item is a server's JSON: every field's type is checked here or in ``Listed``, and
any misfit is a ValueError naming it, escaped; one item, one error (ADR 0023).
"""

from __future__ import annotations

from typing import Any

from ..._domain.listed import Listed
from ..._domain.sources import Forge
from .items import Fields

__all__ = ["listed_of"]


def listed_of(item: Any) -> Listed:
    """``item`` as a record; ValueError (escaped words) when it does not hold."""
    got = Fields(item, "full_name")
    return Listed(
        full_name=got.get("full_name"),
        clone_url=got.get("clone_url"),
        forge_id=got.number("id"),
        default_branch=got.get("default_branch"),
        archived=got.get("archived"),
        fork=got.get("fork"),
        # GitHub says no "empty"; a size of 0 is a guess it may contradict: not said.
        empty=None,
        disabled=got.get("disabled"),
        # A mirror has a mirror_url; null says it is none; no key says nothing.
        mirror=got.flag_of_presence("mirror_url"),
        size_kib=got.get("size"),
        language=got.get("language"),
        topics=got.topics("topics"),
        stars=got.get("stargazers_count"),
        pushed_at=got.time("pushed_at"),
        forge=Forge.GITHUB,
    )

"""One GitHub repository item (list endpoints and search alike) as a :class:`Listed`.

The item is a server's JSON: every field's type is checked here or in ``Listed``, and
any misfit is a ValueError naming it, escaped; one item, one error (ADR 0023).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ..._domain.listed import Listed
from ..._domain.sources import Forge
from ..._domain.urls import visible

__all__ = ["listed_of"]


def listed_of(item: Any) -> Listed:
    """``item`` as a record; ValueError (escaped words) when it does not hold."""
    if not isinstance(item, dict):
        raise ValueError(f"an item is a {type(item).__name__}, not an object")
    forge_id = item.get("id")
    if type(forge_id) is not int:  # True is no id
        raise ValueError(f"the id of {_name(item)} is not a number")
    topics = item.get("topics")
    if topics is not None and not isinstance(topics, list):
        raise ValueError(f"the topics of {_name(item)} are not a list")
    mirror = item.get("mirror_url", _UNSAID)
    return Listed(
        full_name=item.get("full_name"),  # type: ignore[arg-type]  # Listed checks it
        clone_url=item.get("clone_url"),  # type: ignore[arg-type]
        forge_id=str(forge_id),
        default_branch=item.get("default_branch"),
        archived=item.get("archived"),
        fork=item.get("fork"),
        # GitHub says no "empty"; a size of 0 is a guess it may contradict: not said.
        empty=None,
        disabled=item.get("disabled"),
        mirror=None if mirror is _UNSAID else mirror is not None,
        size_kib=item.get("size"),
        language=item.get("language"),
        topics=tuple(topics or ()),
        stars=item.get("stargazers_count"),
        pushed_at=_time(item, item.get("pushed_at")),
        forge=Forge.GITHUB,
    )


_UNSAID = object()


def _time(item: dict[str, Any], value: object) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 40:
        raise ValueError(f"pushed_at of {_name(item)} is not a time")
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"pushed_at of {_name(item)} is not a time: {visible(value)}") from None


def _name(item: dict[str, Any]) -> str:
    name = item.get("full_name")
    shown = visible(repr(name)) if isinstance(name, str) else "an item"
    return shown if len(shown) <= 80 else shown[:80] + "…"

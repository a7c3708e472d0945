"""``StoreSettings``: where results are kept, each default written here once (ADR 0017)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from ..settings import setting

__all__ = ["DEFAULT_CACHE_LIMIT", "StoreSettings"]

DEFAULT_CACHE_LIMIT = 256 << 20


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """The settings of the SQLite result store (ADR 0016) that
    :func:`clonegate.open_analyzer` opens: ``path``, the file (created if missing), and
    ``cache_limit``, the bytes its per-file analysis cache may hold (least recently used
    evicted first); 0 for no analysis cache."""

    path: Path = dataclasses.field(metadata={"help": "The result store: an SQLite file."})
    cache_limit: int = setting(
        DEFAULT_CACHE_LIMIT,
        "Most the per-file analysis cache may hold (least recently used evicted first).",
    )

    def __post_init__(self) -> None:
        limit = self.cache_limit
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"cache_limit must be an int >= 0, got {limit!r}")

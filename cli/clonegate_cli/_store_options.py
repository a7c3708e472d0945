"""``--db`` and the options that go with it, for `analyze` and `worker` (ADR 0016)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from clonegate import with_incremental
from clonegate.store import StoreSettings

from ._setup import Setup, default_of, size_text

__all__ = ["CACHE_SIZE", "StoreFlags", "with_store"]

CACHE_SIZE = size_text(default_of(StoreSettings, "cache_limit"))  # --cache-size's


@dataclass(frozen=True)
class StoreFlags:
    """``--db`` and what goes with it."""

    store: StoreSettings
    incremental: bool
    force: bool

    @classmethod
    def of(
        cls, db: Path | None, incremental: bool, force: bool, cache_size: str
    ) -> StoreFlags | None:
        """The settings the options ask for; None without ``--db``. Raises
        ``ValueError`` with the message for the user if they do not go together."""
        if db is None:
            if incremental or force:
                flag = "--incremental" if incremental else "--force"
                raise ValueError(f"{flag} needs a result store: --db PATH or CLONEGATE_DB")
            return None
        # Imported here: _clone_options reaches this module through _input and _run.
        from ._clone_options import parse_size_option

        limit = parse_size_option("--cache-size", cache_size) if cache_size.strip() != "0" else 0
        return cls(StoreSettings(db, limit), incremental and not force, force)


def with_store(flags: StoreFlags | None, setup: Setup) -> Setup:
    """``setup`` with the store of ``flags`` (results, cache, reuse), which the
    composition opens for the run."""
    if flags is None:
        return setup
    setup = dataclasses.replace(setup, store=flags.store)
    if flags.force:  # the cache is written, never read
        refreshing = dataclasses.replace(setup.analysis, refresh_cache=True)
        setup = dataclasses.replace(setup, analysis=refreshing)
    return setup.adding(with_incremental()) if flags.incremental else setup

"""``--db`` and the options that go with it, for `analyze` and `worker` (ADR 0016)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

import clonegate  # open_store through its lazy attribute: SQLite only with --db
from clonegate import with_incremental, with_result_store

from ._setup import Setup

__all__ = [
    "CacheSizeOption",
    "DbOption",
    "ForceOption",
    "IncrementalOption",
    "StoreSettings",
    "store_options",
]

DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        envvar="CLONEGATE_DB",
        show_default=False,
        help="The result store: an SQLite file (or CLONEGATE_DB); a run creates it if "
        "missing, the reading commands only read it.",
        metavar="PATH",
    ),
]
IncrementalOption = Annotated[
    bool,
    typer.Option(
        help="With --db: report a repository from the store, without cloning it, when "
        "its remote HEAD is at the commit of its last result by this analyzer.",
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option(help="With --db: clone and parse everything again (no reuse, no cached files)."),
]
CacheSizeOption = Annotated[
    str,
    typer.Option(
        help="With --db: most the per-file analysis cache may hold (least recently "
        "used evicted first).",
        metavar="SIZE",
    ),
]


@dataclass(frozen=True)
class StoreSettings:
    """``--db`` and what goes with it."""

    path: Path
    cache_limit: int  # bytes; 0: no analysis cache
    incremental: bool
    force: bool

    @classmethod
    def of(
        cls, db: Path | None, incremental: bool, force: bool, cache_size: str
    ) -> StoreSettings | None:
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
        return cls(db, limit, incremental and not force, force)


@asynccontextmanager
async def store_options(settings: StoreSettings | None, setup: Setup) -> AsyncIterator[Setup]:
    """``setup`` with the store of ``settings`` in it (results, cache, reuse), the store
    open while it is used."""
    if settings is None:
        yield setup
        return
    async with clonegate.open_store(settings.path, cache_limit=max(settings.cache_limit, 1)) as db:
        setup = setup.adding(with_result_store(db))
        if settings.cache_limit:
            cached = dataclasses.replace(setup.analysis, cache=db, refresh_cache=settings.force)
            setup = dataclasses.replace(setup, analysis=cached)
        if settings.incremental:
            setup = setup.adding(with_incremental())
        yield setup

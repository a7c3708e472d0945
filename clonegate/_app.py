"""The composition root: every collaborator of the default use case, built in one place
(ADR 0017).

The only module that knows both the use case and the adapters. :func:`open_analyzer`
declares the zygote's preloads, opens the worker pool and the result store, builds the
VCS and the analyzer with that pool passed to them, the memory sensor, and the use case
with those ports.
Nothing here runs at import: no class attribute is set, no list grows.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from ._adapters.analysis.analyzer import TestInventoryAnalyzer
from ._adapters.analysis.settings import AnalysisSettings
from ._adapters.git.dulwich_vcs import DulwichVCS
from ._adapters.git.settings import CloneSettings
from ._adapters.memory import SystemMemorySensor
from ._adapters.preloads import ZYGOTE_PRELOAD
from ._adapters.workers import WorkerPool, open_worker_pool
from ._domain.filters import Filters
from ._domain.forge_tokens import ForgeTokens
from ._domain.listing import Lister, ListingError, WaitNote
from ._domain.memory import MemorySensor
from ._domain.sources import Forge, Source
from ._usecase.analyze import AnalyzeUseCase
from ._usecase.listing_feed import LISTINGS_AT_ONCE, ListingFeed, ListingHooks
from ._usecase.options import Option, UseCaseConfig, with_result_store

if TYPE_CHECKING:  # SQLite is loaded only for a program that keeps results
    import urllib3

    from ._adapters.forges.http import HttpLister
    from ._adapters.store import SQLiteStore, StoreSettings

__all__ = ["compose", "listing_feed", "open_analyzer"]


@asynccontextmanager
async def open_analyzer(
    *options: Option,
    clone: CloneSettings | None = None,
    analysis: AnalysisSettings | None = None,
    store: StoreSettings | None = None,
    memory_sensor: MemorySensor | None = None,
) -> AsyncIterator[AnalyzeUseCase]:
    """A use case that clones with dulwich and analyzes with tree-sitter, its worker
    processes alive until the block ends::

        shallow = CloneSettings(depth=1)
        async with open_analyzer(with_max_concurrent_clones(4), clone=shallow) as uc:
            report = await uc.execute("https://github.com/pallets/flask.git")

    ``options``: the use case's own (``with_*``). ``clone``, ``analysis``: the
    adapters' settings (defaults when None). With :func:`with_keep_clones` the clones
    also get their working tree. ``store``: a result store opened for the block, where
    every report is kept (:func:`with_result_store`) and, unless its ``cache_limit`` is
    0, the analyzer's per-file cache. ``memory_sensor``: what a memory budget reads
    (the system's cgroup and ``/proc`` by default). On leaving, every worker process is
    killed and waited for, and the store closed.
    """
    async with (
        open_worker_pool(preload=ZYGOTE_PRELOAD) as pool,
        _opened(store) as kept,
    ):
        if kept is not None and store is not None:
            options = (*options, with_result_store(kept))
            if store.cache_limit:
                analysis = dataclasses.replace(analysis or AnalysisSettings(), cache=kept)
        yield compose(
            *options, pool=pool, clone=clone, analysis=analysis, memory_sensor=memory_sensor
        )


@asynccontextmanager
async def _opened(settings: StoreSettings | None) -> AsyncIterator[SQLiteStore | None]:
    """The store of ``settings``, open for the block; None without settings."""
    if settings is None:
        yield None
        return
    from ._adapters.store import open_store

    async with open_store(settings.path, cache_limit=max(settings.cache_limit, 1)) as store:
        yield store


def compose(
    *options: Option,
    pool: WorkerPool | None,
    clone: CloneSettings | None = None,
    analysis: AnalysisSettings | None = None,
    memory_sensor: MemorySensor | None = None,
) -> AnalyzeUseCase:
    """The use case :func:`open_analyzer` yields, its adapters' jobs in ``pool`` (None:
    the ``trio.run``'s own pool, for a caller outside any block: tests, benchmarks)."""
    config = UseCaseConfig.of(options)
    clone = clone if clone is not None else CloneSettings()
    if config.keep_clones:  # a kept clone is for the user to open: with its files
        clone = dataclasses.replace(clone, checkout=True)
    vcs = DulwichVCS(clone, pool=pool)
    analyzer = TestInventoryAnalyzer(analysis, pool=pool)
    sensor = memory_sensor if memory_sensor is not None else SystemMemorySensor()
    return AnalyzeUseCase(*options, vcs=vcs, analyzer=analyzer, memory_sensor=sensor)


def listing_feed(
    entries: Iterable[str | Source],
    *,
    filters: Filters | None = None,
    tokens: ForgeTokens | None = None,
    listings: int = LISTINGS_AT_ONCE,
    hooks: ListingHooks | None = None,
    deadline: float = math.inf,
) -> ListingFeed:
    """The entries of a run (URLs, and :class:`Source`s to list) as one stream of
    ``str | Listed``, each source listed by its forge's adapter with ``tokens``
    (``forge_tokens(os.environ)``; none: anonymous), its records kept by ``filters``,
    whose patterns run on RE2 (ADR 0023)::

        feed = listing_feed([entry_of("github:org/pallets")], filters=Filters(limit=10))
        async with feed.open() as stream, uc.analyze_many(stream) as batch:
            ...

    Raises ValueError, naming the option, for a pattern RE2 cannot run."""
    from ._adapters.analysis.patterns import compile_regex

    chosen = filters if filters is not None else Filters()
    chosen.selection(compile_regex)  # a pattern RE2 refuses is refused now, not per source
    bound = tokens if tokens is not None else ForgeTokens()
    pool: list[urllib3.PoolManager] = []  # one for every listing of the feed, made on first use

    def lister_for(source: Source, note: WaitNote) -> Lister:
        import urllib3

        lister = _lister_classes().get(source.forge)
        if lister is None:
            raise ListingError(f"{source}: no {source.forge.value} listing in this version")
        if not pool:
            pool.append(urllib3.PoolManager())
        # One lister per source, gone when its listing ends: no page is held for a
        # re-list that cannot come (64 MiB a listing, else: ADR 0023).
        return lister(bound, on_wait=note, pool=pool[0], etag_bytes=0)

    return ListingFeed(
        entries,
        lister_for=lister_for,
        selection_for=lambda: chosen.selection(compile_regex),
        listings=listings,
        hooks=hooks,
        deadline=deadline,
    )


def _lister_classes() -> dict[Forge, type[HttpLister]]:
    """The registry: each forge's listing adapter (loaded when a source is listed: urllib3
    is no cost to a run of URLs)."""
    from ._adapters.forges.registry import LISTERS

    return dict(LISTERS)

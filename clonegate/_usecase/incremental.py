"""Reusing stored results: a repository whose remote HEAD has not moved since its last
successful analysis by this analyzer version is reported again, not cloned (ADR 0016);
a memory budget starts from what its clones used before (ADR 0014)."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable

import trio

from .._domain.credentials import Credential
from .._domain.errors import CloneError
from .._domain.inventory import Analyzer
from .._domain.reports import RepositoryReport, RepositoryStatus, Timings
from .._domain.repository import Repository
from .._domain.sources import Forge
from .._domain.store import DamagedRowError, ReportStore, StoreError
from .._domain.vcs import VCS, RemoteHead
from .options import UseCaseConfig
from .retry_step import Retrying
from .run_log import RunLog

__all__ = ["PUSH_TIMES", "Recorder", "Reuse", "first_store_error", "stored_peaks"]

logger = logging.getLogger("clonegate")

# The forges whose listing's ``pushed_at`` moves on every push, to any branch: GitHub's
# (its staff's word). GitLab's last_activity_at moves at most once an hour, and Gitea's
# and Bitbucket's times are not documented to move on each push: their records are
# checked by the remote's HEAD, as a URL is (ADR 0023).
PUSH_TIMES = frozenset({Forge.GITHUB})


class Reuse:
    """Finds the stored report an incremental run can give instead of cloning."""

    def __init__(self, store: ReportStore, vcs: VCS, analyzer: Analyzer, limit: int) -> None:
        if analyzer.version is None:
            raise ValueError("an incremental run needs an analyzer that states its version")
        self._store = store
        self._heads = vcs  # its remote_head, which a VCS that cannot list refuses
        self._analyzer = analyzer  # its version read when asked: it may change (a reload)
        # Listings take no clone slot (no pack, little memory), but a thousand at once
        # would still hammer the forges and the worker pool: a small limit of their own.
        self._limiter = trio.CapacityLimiter(limit)

    async def early_report(
        self,
        repository: Repository,
        credential: Credential | None,
        retrying: Retrying | None = None,
    ) -> RepositoryReport | None:
        """The stored report of ``repository`` (by its key) if the remote's HEAD is
        still at its commit and it was made by the current analyzer version; None if
        the repository must run. A listed repository whose listing says what it said
        when its stored result was last current (the same forge id and ``pushed_at``,
        its default branch that result's branch) gives that result without the remote
        being asked at all (ADR 0023); otherwise its HEAD is asked, as for a URL.

        ``retrying`` is the repository's retry loop (its clones' policy and host
        breaker, issue 43): a listing the server pushed back, or whose connection
        failed, is tried again as a clone would be, without the listings' limit while
        it waits. A listing that fails for good gives the repository's failed report
        (phase ``clone``, the listing's error kind): a remote that cannot be listed
        could not be cloned either, and trying would only wait for the same error twice.
        """
        started = trio.current_time()
        shown, index = repository.shown, repository.index
        if repository.listed is not None:  # the listing may say it has not moved
            unchanged = await self._stored_listed(repository)
            if unchanged is not None:
                return self._reused(unchanged, repository, started)

        async def listing() -> RemoteHead:
            async with self._limiter:
                return await self._heads.remote_head(repository.url, credential=credential)

        try:
            head = await (listing() if retrying is None else retrying(listing))
        except CloneError as exc:
            status = RepositoryStatus.of_error(exc.kind)
            timings = Timings(clone=trio.current_time() - started)
            return RepositoryReport.failure(
                shown, index, "clone", exc.kind, str(exc), status, timings
            )
        try:
            report = await self._stored(repository.key, head.commit)
        except DamagedRowError as exc:
            # That repository's problem, not the run's: no result to reuse, so it runs
            # again, and its new result is the one the next run finds (ADR 0016).
            logger.warning(
                "the stored result of %s is damaged (%s): analyzing it again", shown, exc
            )
            return None
        if report is None or report.ref is None or report.ref.commit != head.commit:
            return None  # pruned meanwhile, or not the commit asked for: run it
        return self._reused(report, repository, started)

    def _reused(
        self, report: RepositoryReport, repository: Repository, started: float
    ) -> RepositoryReport:
        return dataclasses.replace(
            report,
            url=repository.shown,
            index=repository.index,
            reused=True,
            timings=Timings(clone=trio.current_time() - started),
            path=None,
            duplicate_of=None,
            clone_memory=None,  # no clone in this run
        )

    async def _stored_listed(self, repository: Repository) -> RepositoryReport | None:
        """The stored report the listing says is still current (ADR 0023), or None: then
        the remote's refs are asked, as for a line given as a URL: so for a forge whose
        time is not a push time (:data:`PUSH_TIMES`), or one the record does not name.
        A damaged row is no answer (the refs are asked; a damaged result is logged)."""
        version, listed = self._analyzer.version, repository.listed
        if version is None or listed is None or listed.forge not in PUSH_TIMES:
            await trio.lowlevel.checkpoint()
            return None
        try:
            report = await self._store.reusable_listed(repository.key, listed, version)
        except DamagedRowError:
            return None
        if report is None or report.ref is None:
            return None
        return report

    async def _stored(self, key: str, commit: str) -> RepositoryReport | None:
        version = self._analyzer.version
        if version is None:  # it stopped stating one: nothing is known to be its result
            return None
        return await self._store.reusable(key, commit, version)


class Recorder:
    """Keeps a use case's reports in its store, in runs (ADR 0016).

    A batch or a session is one run; an :meth:`~AnalyzeUseCase.execute` outside them is
    a run of its own. A run is finished (its summary written) when it ends, however it
    ends, within a bound; a run whose process died keeps ``finished_at`` empty.
    """

    # Finishing a run is one small write; more than this means the store is stuck.
    FINISH_SECONDS = 10.0

    def __init__(
        self,
        store: ReportStore,
        config: UseCaseConfig,
        vcs: VCS,
        analyzer: Analyzer,
        events: RunLog | None = None,
    ) -> None:
        self._store = store
        self._events = events  # the run's limit changes, written with its reports
        # What shapes the results, recorded with each run.
        self._options = {
            "clone_depth": vcs.depth,
            "incremental": config.incremental,
            "max_concurrent_clones": config.max_concurrent_clones,
            "memory_budget": config.memory_budget,
            "analyzer_version": analyzer.version,
            # The limits a drawing of the run shows beside its events (ADR 0020).
            "retries": config.retries,
            "repository_timeout": config.repository_timeout,
            "clone_timeout": config.clone_timeout,
        }

    async def begin(self, first: list[tuple[str, int, str]] | None = None) -> int:
        """Begin a run; ``first``: its limits' first values, for its events."""
        run_id = await self._store.begin_run(self._options)
        if self._events is not None:
            self._events.open(run_id, first or [])
        return run_id

    async def save(self, run_id: int, key: str, report: RepositoryReport) -> None:
        if self._events is not None:
            await self._events.flush(run_id)
        await self._store.save(run_id, key, report)

    async def save_one(self, run_id: int | None, key: str, report: RepositoryReport) -> None:
        """Save ``report`` in run ``run_id``, or in a run of its own if None."""
        if run_id is not None:
            await self.save(run_id, key, report)
            return
        run_id = await self.begin()
        try:
            await self.save(run_id, key, report)
        finally:
            await self.finish(run_id)

    async def finish(self, run_id: int) -> None:
        """Record the run's end; never raises: it runs in ``finally`` blocks, where an
        error of its own would hide the one (or the cancellation) in flight."""
        with trio.move_on_after(self.FINISH_SECONDS, shield=True):
            await self._last_events(run_id)
            try:
                await self._store.finish_run(run_id)
            except StoreError as exc:
                logger.warning("could not record the end of run %d: %s", run_id, exc)

    async def _last_events(self, run_id: int) -> None:
        """Write what is left of the run's events; a failure is a warning (as finishing)."""
        if self._events is None:
            return
        try:
            await self._events.flush(run_id)
        except StoreError as exc:
            logger.warning("could not record the limits of run %d: %s", run_id, exc)
        finally:
            self._events.close(run_id)


def stored_peaks(
    store: ReportStore | None, depth: int | None
) -> Callable[[str], Awaitable[int | None]] | None:
    """Bytes the last clone of a repository (by key) at ``depth`` used, from ``store``;
    None without a store."""
    if store is None:
        return None
    return lambda key: store.clone_memory(key, depth)


def first_store_error(group: BaseExceptionGroup[StoreError]) -> StoreError:
    """The first :class:`StoreError` of ``group``, however deeply nested."""
    first = group.exceptions[0]
    return first if isinstance(first, StoreError) else first_store_error(first)

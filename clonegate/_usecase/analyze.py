"""``AnalyzeUseCase``: clone under the gate, then analyze outside it (seed 004, ADR 0006)."""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import final

import trio

from .._domain.adaptive import AdaptiveLimitStatistics
from .._domain.credentials import Credential, credential_for
from .._domain.errors import CloneError, ErrorKind
from .._domain.events import Event, EventKind
from .._domain.inventory import Analyzer
from .._domain.limits import LimitError
from .._domain.memory import MemorySensor
from .._domain.reports import AnalysisTotals, RefInfo, RepositoryReport, RepositoryStatus
from .._domain.repository import Repository
from .._domain.retries import FailedAttempt
from .._domain.store import StoreError
from .._domain.timeline import RunClock, RunEventKind
from .._domain.vcs import VCS, ClonedSource
from .._domain.work_clock import WorkClock
from .analysis_step import analysis_failure, analyze_timed
from .batch import Batch, BatchState, Pipeline
from .breakers import Breakers, guard_for
from .clone_step import CloneHooks, clone_timed, discard
from .entries import Entry, EntrySource
from .estimates import MemoryEstimates
from .gate import CloneGate, CloneGateStatistics, GateEntry
from .host_limits import HostLimits
from .idle_workers import reserve_idle
from .incremental import Recorder, Reuse, first_store_error, stored_peaks
from .options import Option, UseCaseConfig
from .pressure import BudgetDecision, PressureController
from .retry_step import Tried, clone_failure, expired_report, retry_loop
from .run_log import RunLog, first_limits
from .stopwatch import Stopwatch
from .thrash import PROGRESS, ThrashLog, ThrashWatch, watch_memory

__all__ = ["AnalyzeUseCase"]

logger = logging.getLogger("clonegate")
_OUT_OF_MEMORY = frozenset({ErrorKind.TOO_LARGE, ErrorKind.OUT_OF_MEMORY})


@final
class AnalyzeUseCase:
    """Clone repositories under a hard, fair limit and take each one's test inventory.

    The limit is a :class:`WeightedSemaphore` owned here, in the use case, and it
    guards the clone only: a repository waits for a slot in FIFO order, clones, gives
    the slot back, and only then is analyzed, outside the limit (the analyzer bounds
    its own processes). Configure it with its own options, and give it its ports::

        uc = AnalyzeUseCase(with_max_concurrent_clones(1), vcs=fake_vcs, analyzer=fake)

    It builds no collaborator: :func:`clonegate.open_analyzer` composes the default
    adapters (ADR 0017); how they clone and analyze is their settings, not options
    here. ``memory_sensor`` is what a memory budget reads (required with one).
    """

    def __init__(
        self,
        *options: Option,
        vcs: VCS,
        analyzer: Analyzer,
        memory_sensor: MemorySensor | None = None,
    ) -> None:
        self.config = config = UseCaseConfig.of(options)
        self._vcs, self._analyzer = vcs, analyzer
        self._sensor, self._moved = memory_sensor, 0  # _moved: PROGRESS events (thrash.py)
        if config.memory_budget is not None and memory_sensor is None:
            raise ValueError("a memory budget needs a memory_sensor= (open_analyzer gives one)")
        self._processes = analyzer.processes or os.cpu_count() or 1  # analysis processes
        sizes = vcs.max_memory, vcs.opening_memory, self._processes
        estimates = MemoryEstimates.for_budget(config, memory_sensor, *sizes)
        keep_workers = reserve_idle(estimates, config.max_concurrent_clones, vcs.idle_memory)
        store = config.result_store
        self._clock = RunClock(trio.current_time)  # every instant on one clock (ADR 0020)
        self._events = RunLog(store, self._clock)  # notes nothing without a store
        self._thrash = ThrashLog(self._events)  # counted, and noted in the runs in flight
        self._hosts = HostLimits(
            config,
            lambda host, change: self._events.note(RunEventKind.HOST_LIMIT, change.size, host),
        )
        self._gate = CloneGate(
            config.max_concurrent_clones,
            estimates,
            host_limiter=self._hosts.limiter_for,
            global_limiter=config.global_limiter,
            history=stored_peaks(store, vcs.depth) if estimates is not None else None,
            host_rate=self._hosts.bucket_for,
        )
        self._gate.keeps_workers = keep_workers
        self._controller = PressureController.of_budget(
            self._gate.memory, memory_sensor, self._gate.heaviest, self._budget_changed
        )
        self._recorder = (
            Recorder(store, config, vcs, analyzer, self._events) if store is not None else None
        )
        self._reuse: Reuse | None = None
        if config.incremental:
            if store is None:
                raise ValueError("an incremental run needs a result store (with_result_store)")
            self._reuse = Reuse(store, vcs, analyzer, config.remote_head_limit)
        self._session_run: int | None = None  # the run of the open session() block
        # One breaker per host for the use case's life (ADR 0019), if configured.
        self._breakers = Breakers.of(config.breaker_threshold, config.breaker_cool_down)

    def clone_gate_statistics(self) -> CloneGateStatistics:
        """Who waits for a clone slot and who holds one, since when; counters. Not a checkpoint."""
        return self._gate.statistics()

    def host_statistics(self) -> dict[str, AdaptiveLimitStatistics]:
        """Each host's adaptive clone limit by host (ADR 0019). Not a checkpoint."""
        return self._hosts.statistics()

    @property
    def memory_thrash(self) -> int:
        """Stretches of memory thrash (ADR 0014) in this use case's runs and sessions."""
        return self._thrash.count

    async def execute(
        self, url: Entry, *, index: int = 0, raise_limit_errors: bool = False
    ) -> RepositoryReport:
        """Clone and analyze one repository, like Go's ``Execute``; never raises a CloneError.

        Failures are in the report, whose ``index`` is ``index`` (``listed``: ``url``, if
        a :class:`Listed`). Cancellation of the caller propagates, after the clone (if
        any) is stopped and removed. Concurrent calls share the clone limit; inside
        :meth:`session` also worker processes, stuck-clone warnings and the budget.

        A shared limit that fails (:exc:`LimitError`: its server unreachable, the lease
        lost) says nothing about the repository: with ``raise_limit_errors`` it is raised
        (after the clone is stopped and removed), no report made, for a caller that can
        try again later (``ClusterWorker``); else it is reported as a failure of its kind.
        """
        repository = Repository.of(url, index)
        report = await self._run_one(repository, raise_limit_errors=raise_limit_errors)
        if self._recorder is not None:
            await self._recorder.save_one(self._session_run, repository.key, report)
        self._done(report)
        return report

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        """What a batch has, for the :meth:`execute` calls inside: the stuck-clone
        watchdog (STUCK events) and the memory budget's controller (BUDGET events), until
        the block ends. With a result store, the block is one run (a nested session joins
        it). An exception of the block comes out as itself, not in an ExceptionGroup."""
        async with self._run(session=True):
            yield

    @asynccontextmanager
    async def analyze_many(self, urls: EntrySource) -> AsyncIterator[Batch]:
        """Analyze every line of ``urls``; yields a :class:`Batch` of reports as they finish.

        A line is a URL or a :class:`Listed` (its ``clone_url`` cloned, its report
        carrying it), from an iterable or an async one (a listing still fetching), read
        lazily: a line only when a repository can start, at most 2 x (clone limit +
        analysis processes) in flight, 1,024 at most (:class:`Pipeline`). An exception
        ``urls`` raises ends the reading: the ones in flight finish and are reported,
        then it comes out of the batch's iteration, as itself. A failure of one never
        stops the others; leaving early or cancelling stops all. A store: one run.
        """
        send, receive = trio.open_memory_channel[RepositoryReport](0)
        budget = self._controller.budget if self._controller is not None else None
        state = BatchState(started=trio.current_time(), memory_budget=budget)
        async with self._run(session=False, state=state) as (run_id, nursery):
            nursery.start_soon(self._feed, urls, send, state, run_id)
            async with receive:
                yield Batch(receive, state)
            state.raise_source_error()  # if the block ended before its iteration did

    @asynccontextmanager
    async def _run(
        self, *, session: bool, state: BatchState | None = None
    ) -> AsyncIterator[tuple[int | None, trio.Nursery]]:
        """The one path of a batch and a session: a run begun and finished in the store,
        the stuck-clone watchdog and the memory readings (the budget's controller, the
        thrash watch, counted in ``state``) in a nursery beside the block (yielded, with
        the run), and the block's own exception re-raised as itself, outside the nursery:
        the caller's error (a broken pipe, a bug in its loop) is not an ExceptionGroup."""
        joined = session and self._session_run is not None
        recorder = None if joined else self._recorder
        run_id, raised = self._session_run if joined else None, None
        try:
            async with trio.open_nursery() as nursery:
                if recorder is not None:
                    run_id = await recorder.begin(first_limits(self._gate))
                    if session:  # execute() calls inside save in this run
                        self._session_run = run_id
                threshold = self.config.stuck_threshold
                nursery.start_soon(self._gate.watch_for_stuck, threshold, self._stuck)
                if self._sensor is not None:
                    moved = lambda: self._moved  # noqa: E731
                    watch = ThrashWatch.of_run(self._gate, self._controller, moved, self._thrash)
                    if state is not None:
                        state.thrash = watch
                    nursery.start_soon(watch_memory, self._sensor, watch, self._controller)
                try:
                    yield run_id, nursery
                except BaseException as exc:
                    raised = exc
                finally:
                    if session and not joined:
                        self._session_run = None
                    nursery.cancel_scope.cancel()
        except BaseExceptionGroup as group:
            # The store failed: that, plainly, not a group of the batch's internals.
            failed, _ = group.split(StoreError)
            if failed is None:
                raise
            raise first_store_error(failed) from None
        finally:
            if recorder is not None and run_id is not None:
                await recorder.finish(run_id)
        if raised is not None:
            raise raised

    async def _feed(
        self,
        urls: EntrySource,
        send: trio.MemorySendChannel[RepositoryReport],
        state: BatchState,
        run_id: int | None,
    ) -> None:
        in_flight = min(1024, 2 * (self.config.max_concurrent_clones + self._processes))
        recorder, save = self._recorder, None
        if recorder is not None and run_id is not None:
            save = partial(recorder.save, run_id)
        pipeline = Pipeline(self._run_one, self._done, in_flight, send, state, save)
        await pipeline.feed(urls)

    async def _run_one(
        self, repository: Repository, *, raise_limit_errors: bool = False
    ) -> RepositoryReport:
        tried, watch = Tried(), Stopwatch(trio.current_time())
        report = await self._run_tried(repository, tried, watch, raise_limit_errors)
        phases = watch.phases(trio.current_time(), self._clock)
        attempts, listed = tuple(tried.failed), repository.listed
        return dataclasses.replace(report, attempts=attempts, phases=phases, listed=listed)

    async def _run_tried(
        self, repository: Repository, tried: Tried, watch: Stopwatch, raise_limit_errors: bool
    ) -> RepositoryReport:
        # A checkpoint on every path, the early failures below included.
        await trio.lowlevel.checkpoint()
        url, index, shown = repository.url, repository.index, repository.shown
        parsed = repository.parsed
        if parsed is None:
            return repository.refused()
        # The VCS applies its own policy later; this finds the credential, if any.
        credential = credential_for(parsed, self.config.credentials)
        try:
            weight = self._gate.weight_of(self.config.clone_weight, url)
        except ValueError as exc:
            return RepositoryReport.failure(
                shown, index, "clone", "invalid_weight", f"{shown}: {exc}"
            )
        # The repository's deadline stops while it only waits for an analysis process.
        clock = WorkClock()
        with clock.current(), clock.limit(self.config.repository_timeout) as deadline:
            guard = guard_for(self._breakers, repository, self._vcs, credential)
            on_retry = partial(self._retrying, shown, index)
            retrying = retry_loop(self.config, guard, deadline, tried, on_retry)
            if self._reuse is not None:  # reused, or failed listing the remote's HEAD
                watch.listing_at = trio.current_time()
                early = await self._reuse.early_report(repository, credential, retrying)
                if early is not None:
                    return early
            try:
                attempt = partial(self._clone_in_slot, repository, credential, weight, watch, tried)
                source = await retrying(watch.timed(attempt))  # each attempt's phases (ADR 0020)
            except Exception as exc:
                kind, status, message = clone_failure(exc, shown)
                # Cloned, then the bookkeeping failed (a shared limit's lease lost on
                # release): a private clone goes; a kept one is the user's and stays.
                if tried.source is not None and not self.config.keep_clones:
                    await discard(tried.source, shown)
                if isinstance(exc, LimitError) and raise_limit_errors:
                    raise
                timings = watch.timings(trio.current_time())
                return RepositoryReport.failure(
                    shown, index, "clone", kind, message, status, timings, tried.peak
                )
            try:
                return await self._analyze(source, index, shown, watch, clock)
            except Exception as exc:  # what the analysis met: this repository only
                timings = watch.timings(trio.current_time())
                return analysis_failure(exc, shown, index, timings, tried.peak)
            finally:
                if not self.config.keep_clones:
                    await discard(source, shown)
        # The repository's deadline passed: the clone or analysis was stopped and cleaned up.
        limit = self.config.repository_timeout
        return expired_report(tried, watch, repository, limit, trio.current_time())

    async def _clone_in_slot(
        self,
        repository: Repository,
        credential: Credential | None,
        weight: int,
        watch: Stopwatch,
        tried: Tried,
    ) -> ClonedSource:
        """One clone attempt: wait for a slot (FIFO), clone, give the slot back."""
        url, index, shown = repository.url, repository.index, repository.shown
        parsed = repository.parsed
        assert parsed is not None  # refused before any attempt
        watch.slot_at = watch.ready_at = None  # this attempt's, not an earlier one's
        self._emit(EventKind.QUEUED, shown, index)
        async with self._gate.slot(index, shown, weight, parsed.host, parsed.key) as lease:
            watch.slot_at = trio.current_time()
            self._emit(EventKind.CLONING, shown, index, watch.slot_at - watch.started)
            try:
                timeout = self.config.clone_timeout
                emit = partial(self._emit, url=shown, index=index)
                hooks = CloneHooks.of(self._gate, self._vcs, lease, emit)
                source = await clone_timed(self._vcs, url, shown, watch, credential, timeout, hooks)
            except CloneError as exc:
                memory = exc.kind in _OUT_OF_MEMORY
                self._gate.learn(parsed.host, exc.peak_memory, exceeded=memory, lease=lease)
                # What a failed clone used is what it needs only if it ran out.
                tried.peak = exc.peak_memory if memory else None
                raise
            # Kept before the slot is given back: a release that fails (a shared
            # limit's lease lost) must still find the clone to remove.
            tried.source, tried.peak = source, source.peak_memory
            self._gate.learn(parsed.host, tried.peak, lease=lease)
            watch.cloned_at = cloned_at = trio.current_time()
        self._emit(EventKind.CLONED, shown, index, cloned_at - watch.slot_at)
        return source

    def _retrying(self, shown: str, index: int, failed: FailedAttempt, host_down: bool) -> None:
        when = "when its host is back" if host_down else f"in {failed.waited:.1f} s"
        logger.info("%s: %s; attempt again %s", shown, failed.message, when)
        detail = f"{failed.message}; next attempt {when}"
        self._emit(EventKind.RETRY, shown, index, failed.waited, failed.kind, detail)

    def _budget_changed(self, decision: BudgetDecision) -> None:
        self._gate.changed()  # a clone waiting for memory may fit now
        detail = f"{decision.previous} -> {decision.size} MiB: {decision.reason}"
        logger.info("memory budget: %s %s", decision.action, detail)
        self._events.note(RunEventKind.MEMORY_BUDGET, decision.size, f"{decision.action} {detail}")
        self._emit(EventKind.BUDGET, "", -1, status=decision.action, detail=detail)

    def _stuck(self, entry: GateEntry) -> None:
        logger.warning(
            "clone of %s has run for more than %g s", entry.url, self.config.stuck_threshold
        )
        self._emit(EventKind.STUCK, entry.url, entry.index, entry.seconds)

    async def _analyze(
        self, source: ClonedSource, index: int, shown: str, watch: Stopwatch, clock: WorkClock
    ) -> RepositoryReport:
        watch.analysis_at = trio.current_time()
        self._emit(EventKind.ANALYZING, shown, index)
        limit = self.config.analysis_time_limit
        report = await analyze_timed(self._analyzer, source, clock, limit, self._gate.analyses)
        return RepositoryReport(
            url=shown,
            index=index,
            status=RepositoryStatus.OK,
            ref=RefInfo(source.branch, source.commit, source.committed_at),
            timings=watch.timings(trio.current_time()),
            analysis=AnalysisTotals.of(report),
            inventory=report.inventory,
            path=source.path if self.config.keep_clones else None,
            redirected_to=source.redirected_to,
            clone_memory=source.peak_memory,
        )

    def _done(self, report: RepositoryReport) -> RepositoryReport:
        self._emit(EventKind.DONE, report.url, report.index, status=report.status)
        return report

    def _emit(
        self,
        kind: EventKind,
        url: str,
        index: int,
        elapsed: float = 0.0,
        status: str = "",
        detail: str = "",
        received: int = 0,
    ) -> None:
        self._moved += kind in PROGRESS
        if self.config.event_hook is not None:
            try:
                self.config.event_hook(Event(kind, url, index, elapsed, status, detail, received))
            except Exception:  # a broken progress display must not break a clone
                logger.exception("the event hook failed on %s %s", kind, url)

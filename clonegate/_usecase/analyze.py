"""``AnalyzeUseCase``: clone under the gate, then analyze outside it (seed 004, ADR 0006)."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from typing import ClassVar, Protocol, final

import trio

from .._domain.credentials import Credential, credential_for
from .._domain.errors import CloneError, CloneTimeoutError, ErrorKind, InvalidURLError
from .._domain.events import Event, EventKind
from .._domain.inventory import Analyzer
from .._domain.limits import LimitError
from .._domain.memory import MemorySensor
from .._domain.reports import (
    AnalysisTotals,
    RefInfo,
    RepositoryReport,
    RepositoryStatus,
    Timings,
)
from .._domain.urls import parse_repo_url, redact, shown_url
from .._domain.vcs import VCS, ClonedSource
from .batch import Batch, BatchState, Pipeline
from .estimates import MemoryEstimates
from .gate import CloneGate, CloneGateStatistics, GateEntry
from .options import Option, UseCaseConfig
from .pressure import BudgetDecision, PressureController

__all__ = ["AnalyzeUseCase", "Wiring"]

logger = logging.getLogger("clonegate")

_STATUS_OF_KIND = {
    ErrorKind.TIMEOUT: RepositoryStatus.TIMEOUT,
    ErrorKind.CANCELLED: RepositoryStatus.CANCELLED,
}


@dataclass
class _Stopwatch:
    """When a repository reached each step; its Timings at any moment, finished or not."""

    started: float
    slot_at: float | None = None
    ready_at: float | None = None  # the VCS's set-up done, the clone itself begins
    cloned_at: float | None = None
    analysis_at: float | None = None

    def phase(self) -> str:
        if self.cloned_at is not None:
            return "analyzing"
        if self.slot_at is None:
            return "waiting for a clone slot"
        return "cloning" if self.ready_at is not None else "starting the clone"

    def timings(self, now: float) -> Timings:
        slot = self.slot_at if self.slot_at is not None else now
        cloned = self.cloned_at if self.cloned_at is not None else now
        if self.ready_at is not None:
            ready = self.ready_at
        else:  # unfinished: still setting up; finished by a VCS that never said: all clone
            ready = slot if self.cloned_at is not None else cloned
        return Timings(
            waited=slot - self.started,
            setup=ready - slot,
            clone=cloned - ready,
            analysis=now - self.analysis_at if self.analysis_at is not None else 0.0,
        )


class Wiring(Protocol):
    """What a use case built without adapters runs; provided by the composition root."""

    def vcs(self, config: UseCaseConfig) -> VCS:
        """The VCS for ``config`` (its depth, work directory, whether clones are kept)."""
        ...

    def analyzer(self, config: UseCaseConfig) -> Analyzer:
        """The analyzer for ``config``."""
        ...

    def batch_scope(self) -> AbstractAsyncContextManager[object]:
        """Entered around a whole batch: the adapters' shared resources (worker processes)."""
        ...

    def memory_sensor(self) -> MemorySensor:
        """What the memory budget reads (its cgroup, ``/proc``)."""
        ...


@final
class AnalyzeUseCase:
    """Clone repositories under a hard, fair limit and take each one's test inventory.

    The limit is a :class:`WeightedSemaphore` owned here, in the use case, and it
    guards the clone only: a repository waits for a slot in FIFO order, clones, gives
    the slot back, and only then is analyzed, outside the limit (the analyzer bounds
    its own processes). Configure it with options::

        uc = AnalyzeUseCase(with_max_concurrent_clones(4), with_analysis_timeout(15 * 60))
        uc = AnalyzeUseCase(with_max_concurrent_clones(1), vcs=fake_vcs, analyzer=fake)

    ``vcs`` and ``analyzer`` default to :class:`DulwichVCS` and
    :class:`TestInventoryAnalyzer`, built from the options by the composition root
    (:attr:`wiring`): the use case itself knows only the ports. Options that only
    configure those defaults (``with_clone_depth``, ``with_work_dir``,
    ``with_read_timeout``, ``with_max_concurrent_analyses``, ...) raise
    :exc:`ValueError` next to a ``vcs=`` or ``analyzer=`` of your own, which would
    silently ignore them.
    """

    # Set once by clonegate._app when clonegate is imported: the layers point inward,
    # so the use case names no adapter and the composition root hands them in.
    wiring: ClassVar[Wiring | None] = None

    def __init__(
        self,
        *options: Option,
        vcs: VCS | None = None,
        analyzer: Analyzer | None = None,
        memory_sensor: MemorySensor | None = None,
    ) -> None:
        config = UseCaseConfig()
        for option in options:
            config = option(config)
        self.config = config
        for given, own, name in (
            (config.vcs_options, vcs, "vcs"),
            (config.analyzer_options, analyzer, "analyzer"),
        ):
            if given and own is not None:
                raise ValueError(
                    f"{', '.join(sorted(given))} configure the default {name}, and {name}= "
                    f"replaces it: configure your {name} itself instead"
                )
        if vcs is None or analyzer is None:
            wiring = type(self).wiring
            if wiring is None:
                raise TypeError("no vcs= or analyzer= given, and no default adapters are wired")
            vcs = vcs if vcs is not None else wiring.vcs(config)
            analyzer = analyzer if analyzer is not None else wiring.analyzer(config)
        self._vcs: VCS = vcs
        self._analyzer: Analyzer = analyzer
        self._sensor = memory_sensor
        if config.memory_budget is not None and self._sensor is None:
            wiring = type(self).wiring
            if wiring is None:
                raise TypeError("a memory budget needs a memory_sensor= or the default wiring")
            self._sensor = wiring.memory_sensor()
        estimates = MemoryEstimates.for_budget(config, self._sensor)
        self._gate = CloneGate(
            config.max_concurrent_clones,
            estimates,
            host_limiter=config.host_limiter,
            global_limiter=config.global_limiter,
        )

    def clone_gate_statistics(self) -> CloneGateStatistics:
        """Who waits for a clone slot and who holds one, since when; counters. Not a checkpoint."""
        return self._gate.statistics()

    async def execute(self, url: str, *, index: int = 0) -> RepositoryReport:
        """Clone and analyze one repository, like Go's ``Execute``; never raises a CloneError.

        Failures are in the report, whose ``index`` is ``index``. Cancellation of the
        caller propagates, after the clone (if any) is stopped and removed. Stuck-clone
        warnings come from batches (:meth:`analyze_many`) only. Concurrent calls share
        the clone limit; inside :meth:`session` they also share worker processes.
        """
        report = await self._run_one(index, url)
        self._done(report)
        return report

    @asynccontextmanager
    async def session(self) -> AsyncIterator[None]:
        """Share the default adapters' resources (worker processes) among the
        :meth:`execute` calls made inside; they end with the block."""
        wiring = type(self).wiring
        async with wiring.batch_scope() if wiring is not None else nullcontext():
            yield

    @asynccontextmanager
    async def analyze_many(self, urls: Iterable[str]) -> AsyncIterator[Batch]:
        """Analyze every URL of ``urls``; yields a :class:`Batch` of reports as they finish.

        ``urls`` is read lazily and only a bounded number of repositories is in flight,
        so memory does not grow with the number of URLs (beyond one small entry per
        distinct repository, kept to report duplicates). One repository's failure never
        stops the others. Leaving the block early, or cancelling it, stops everything:
        clones are killed and removed, worker processes end with the block.
        """
        send, receive = trio.open_memory_channel[RepositoryReport](0)
        state = BatchState(started=trio.current_time())
        wiring = type(self).wiring
        workers = wiring.batch_scope() if wiring is not None else nullcontext()
        raised: BaseException | None = None
        async with workers, trio.open_nursery() as nursery:
            nursery.start_soon(self._run_batch, urls, send, state)
            try:
                async with receive:
                    yield Batch(receive, state)
            except BaseException as exc:
                # Re-raised below, outside the nursery: the caller's own exception
                # (a broken pipe, a bug in its loop) must not come back as an
                # ExceptionGroup of ours.
                raised = exc
            finally:
                nursery.cancel_scope.cancel()
        if raised is not None:
            raise raised

    async def _run_batch(
        self,
        urls: Iterable[str],
        send: trio.MemorySendChannel[RepositoryReport],
        state: BatchState,
    ) -> None:
        config = self.config
        analyses = config.max_concurrent_analyses or os.cpu_count() or 1
        in_flight = min(1024, 2 * (config.max_concurrent_clones + analyses))
        pipeline = Pipeline(self._run_one, self._done, in_flight, send, state)
        async with trio.open_nursery() as watchdog:
            watchdog.start_soon(self._gate.watch_for_stuck, config.stuck_threshold, self._stuck)
            if self._gate.memory is not None and self._sensor is not None:
                controller = PressureController(
                    self._gate.memory,
                    self._gate.memory.size,
                    self._sensor,
                    self._gate.heaviest,
                    on_decision=self._budget_changed,
                )
                watchdog.start_soon(controller.run)
            await pipeline.feed(urls)
            watchdog.cancel_scope.cancel()

    async def _run_one(self, index: int, url: str) -> RepositoryReport:
        # A checkpoint on every path, the early failures below included.
        await trio.lowlevel.checkpoint()
        shown = shown_url(url)
        watch = _Stopwatch(trio.current_time())
        try:
            # The VCS applies its own policy later; this finds the credential, if any.
            parsed = parse_repo_url(url, allow_local=True)
            credential = credential_for(parsed, self.config.credentials)
        except InvalidURLError as exc:
            return RepositoryReport.failure(shown, index, "clone", exc.kind, str(exc))
        try:
            weight = self._weight(url)
        except ValueError as exc:
            return RepositoryReport.failure(
                shown, index, "clone", "invalid_weight", f"{shown}: {exc}"
            )
        source: ClonedSource | None = None
        with trio.move_on_after(self.config.analysis_timeout):
            try:
                self._emit(EventKind.QUEUED, shown, index)
                async with self._gate.slot(index, shown, weight, parsed.host):
                    watch.slot_at = trio.current_time()
                    self._emit(EventKind.CLONING, shown, index, watch.slot_at - watch.started)
                    try:
                        source = await self._clone(url, shown, watch, credential)
                    except CloneError as exc:
                        memory = exc.kind in (ErrorKind.TOO_LARGE, ErrorKind.OUT_OF_MEMORY)
                        self._gate.learn(parsed.host, exc.peak_memory, exceeded=memory)
                        raise
                    self._gate.learn(parsed.host, source.peak_memory)
                    watch.cloned_at = trio.current_time()
                self._emit(EventKind.CLONED, shown, index, watch.cloned_at - watch.slot_at)
            except Exception as exc:
                if isinstance(exc, CloneError):
                    kind: str = exc.kind
                    status = _STATUS_OF_KIND.get(exc.kind, RepositoryStatus.FAILED)
                    message = str(exc)
                elif isinstance(exc, LimitError):  # a shared limit failed this clone
                    kind, status = exc.kind, RepositoryStatus.FAILED
                    message = f"{shown}: {redact(str(exc))}"
                else:  # a VCS of the user's that broke its contract: this repository only
                    logger.exception("clone of %s failed", shown)
                    kind, status, message = (
                        "clone_error",
                        RepositoryStatus.FAILED,
                        _message(shown, exc),
                    )
                if source is not None:  # cloned, then a hook or the bookkeeping failed
                    await self._discard(source, shown)
                timings = watch.timings(trio.current_time())
                return RepositoryReport.failure(
                    shown, index, "clone", kind, message, status, timings
                )
            try:
                return await self._analyze(source, index, shown, watch)
            except Exception as exc:  # an analyzer bug or a dead worker: this repository only
                logger.exception("analysis of %s failed", shown)
                timings = watch.timings(trio.current_time())
                message = _message(shown, exc)
                return RepositoryReport.failure(
                    shown, index, "analyze", "analysis_error", message, timings=timings
                )
            finally:
                if not self.config.keep_clones:
                    await self._discard(source, shown)
        # The repository's deadline passed: the clone or analysis was stopped and cleaned up.
        return RepositoryReport.failure(
            shown,
            index,
            "analyze" if watch.cloned_at is not None else "clone",
            ErrorKind.TIMEOUT,
            f"{shown}: no result within the {self.config.analysis_timeout:g} s "
            f"repository timeout (while {watch.phase()})",
            RepositoryStatus.TIMEOUT,
            watch.timings(trio.current_time()),
        )

    async def _discard(self, source: ClonedSource, shown: str) -> None:
        try:
            await source.aclose()
        except OSError as exc:
            logger.warning("could not remove the clone of %s at %s: %s", shown, source.path, exc)

    async def _clone(
        self, url: str, shown: str, watch: _Stopwatch, credential: Credential | None
    ) -> ClonedSource:
        timeout = self.config.clone_timeout
        # The clone timeout runs from the VCS's on_ready: its set-up (starting a worker
        # process, which takes seconds on a busy machine) is not the clone.
        with trio.CancelScope() as clone_scope:

            def ready() -> None:
                if watch.ready_at is not None:
                    return  # once: a second call must not push the deadline back
                watch.ready_at = trio.current_time()
                if timeout is not None:
                    clone_scope.deadline = watch.ready_at + timeout

            return await self._vcs.clone(url, credential=credential, on_ready=ready)
        assert timeout is not None
        raise CloneTimeoutError(shown, f"the clone took longer than {timeout:g} s")

    def _budget_changed(self, decision: BudgetDecision) -> None:
        self._gate.changed()  # a clone waiting for memory may fit now
        detail = f"{decision.previous} -> {decision.size} MiB: {decision.reason}"
        logger.info("memory budget: %s %s", decision.action, detail)
        self._emit(EventKind.BUDGET, "", -1, status=decision.action, detail=detail)

    def _stuck(self, entry: GateEntry) -> None:
        logger.warning(
            "clone of %s has run for more than %g s", entry.url, self.config.stuck_threshold
        )
        self._emit(EventKind.STUCK, entry.url, entry.index, entry.seconds)

    async def _analyze(
        self, source: ClonedSource, index: int, shown: str, watch: _Stopwatch
    ) -> RepositoryReport:
        watch.analysis_at = trio.current_time()
        self._emit(EventKind.ANALYZING, shown, index)
        report = await self._analyzer.analyze(source)
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
        )

    def _weight(self, url: str) -> int:
        try:
            weight = self.config.clone_weight(url)
        except Exception as exc:
            raise ValueError(f"the clone weight function failed: {redact(repr(exc))}") from None
        if isinstance(weight, bool) or not isinstance(weight, int) or weight < 0:
            raise ValueError(f"clone weight must be an int >= 0, got {weight!r}")
        if weight > self._gate.size:
            # Go would let it wait until its deadline: nothing can ever make it fit.
            raise ValueError(f"clone weight {weight} exceeds the clone limit {self._gate.size}")
        return weight

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
    ) -> None:
        if self.config.event_hook is not None:
            try:
                self.config.event_hook(Event(kind, url, index, elapsed, status, detail))
            except Exception:  # a broken progress display must not break a clone
                logger.exception("the event hook failed on %s %s", kind, url)


def _message(shown: str, exc: BaseException) -> str:
    return f"{shown}: {redact(f'{type(exc).__name__}: {exc}')}"

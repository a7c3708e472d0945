"""A batch: many URLs through the use case, a bounded number in flight (ADR 0006)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import final

import trio

from .._domain.reports import BatchSummary, RepositoryReport, RepositoryStatus
from .._domain.urls import shown_url
from .duplicates import DuplicateIndex, Outcome, outcome_of, repository_key

__all__ = ["Batch", "BatchState", "Pipeline"]


@dataclass
class BatchState:
    """The running totals of a batch: what its summary is made of."""

    started: float
    finished: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    duplicates: int = 0
    reused: int = 0
    test_files: int = 0
    tests: int = 0
    unread_files: int = 0

    def count(self, report: RepositoryReport) -> None:
        self.counts[report.status] = self.counts.get(report.status, 0) + 1
        if report.duplicate_of is not None:
            self.duplicates += 1
        if report.reused:
            self.reused += 1
        if report.analysis is not None:
            self.test_files += report.analysis.test_files
            self.tests += report.analysis.tests
            self.unread_files += report.analysis.unread_files


@final
class Batch:
    """The reports of :meth:`AnalyzeUseCase.analyze_many`, in the order repositories finish.

    Iterate it with ``async for``; once iteration has ended, :attr:`summary` is final.
    """

    def __init__(self, receive: trio.MemoryReceiveChannel[RepositoryReport], state: BatchState):
        self._receive = receive
        self._state = state

    def __aiter__(self) -> AsyncIterator[RepositoryReport]:
        return self._receive.__aiter__()

    @property
    def summary(self) -> BatchSummary:
        state = self._state
        end = state.finished if state.finished is not None else trio.current_time()
        return BatchSummary(
            repositories=sum(state.counts.values()),
            ok=state.counts.get(RepositoryStatus.OK, 0),
            failed=state.counts.get(RepositoryStatus.FAILED, 0),
            timeout=state.counts.get(RepositoryStatus.TIMEOUT, 0),
            cancelled=state.counts.get(RepositoryStatus.CANCELLED, 0),
            duplicates=state.duplicates,
            reused=state.reused,
            test_files=state.test_files,
            tests=state.tests,
            elapsed=end - state.started,
            unread_files=state.unread_files,
        )


class Pipeline:
    """Reads URLs lazily and runs each distinct repository as one task, at most
    ``in_flight`` at a time; later lines naming a repository seen before are reported
    after it, with its status and ``duplicate_of``, without being cloned again.

    Reports go into ``send`` (closed when every URL is reported) as they finish,
    each after ``save`` (given the line's URL) has returned, when there is one.
    """

    def __init__(
        self,
        run_one: Callable[[int, str], Awaitable[RepositoryReport]],
        on_done: Callable[[RepositoryReport], object],
        in_flight: int,
        send: trio.MemorySendChannel[RepositoryReport],
        state: BatchState,
        save: Callable[[str, RepositoryReport], Awaitable[None]] | None = None,
    ) -> None:
        self._run_one = run_one
        self._save = save
        self._on_done = on_done
        self._in_flight = trio.Semaphore(in_flight)
        self._send = send
        self._state = state
        self._seen = DuplicateIndex()

    async def feed(self, urls: Iterable[str]) -> None:
        async with self._send, trio.open_nursery() as nursery:
            for index, url in enumerate(urls):
                key = repository_key(url)
                first = self._seen.first_of(key)
                if first is None:
                    self._seen.start(key, index)
                    await self._in_flight.acquire()
                    nursery.start_soon(self._one, index, url, key)
                elif first[1] is None:  # the first line is still in flight
                    self._seen.wait_for(first[0], index, shown_url(url))
                else:
                    await self._send_duplicate(index, shown_url(url), first[0], first[1])
        self._state.finished = trio.current_time()

    async def _one(self, index: int, url: str, key: bytes) -> None:
        try:
            report = await self._run_one(index, url)
            outcome = outcome_of(report.status, report.error)
            waiting = self._seen.finish(key, index, outcome)
            await self._deliver(report, url)
            for duplicate, shown in waiting:
                await self._send_duplicate(duplicate, shown, index, outcome)
        finally:
            self._in_flight.release()

    async def _send_duplicate(self, index: int, shown: str, first: int, outcome: Outcome) -> None:
        await self._deliver(RepositoryReport.duplicate(shown, index, first, *outcome), shown)

    async def _deliver(self, report: RepositoryReport, url: str) -> None:
        # Stored first (with a store): a report its caller has is a report kept.
        if self._save is not None:
            await self._save(url, report)
        # The channel holds nothing: once send returns, the caller has the report. Only
        # then is it counted and announced, with no checkpoint in between, so that a
        # batch stopped at any moment sums, and says "done" for, exactly the reports
        # its caller received.
        await self._send.send(report)
        self._state.count(report)
        self._on_done(report)

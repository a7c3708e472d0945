"""A batch: many URLs through the use case, a bounded number in flight (ADR 0006)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import final

import trio

from .._domain.reports import BatchSummary, RepositoryReport, RepositoryStatus
from .._domain.repository import Repository
from .duplicates import DuplicateIndex, Outcome, outcome_of

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
    retried: int = 0
    retry_wait: float = 0.0
    memory_budget: int | None = None  # MiB, when the batch began (ADR 0020)

    def count(self, report: RepositoryReport) -> None:
        self.counts[report.status] = self.counts.get(report.status, 0) + 1
        if report.duplicate_of is not None:
            self.duplicates += 1
        if report.reused:
            self.reused += 1
        if report.attempts:
            self.retried += 1
            self.retry_wait += sum(attempt.waited for attempt in report.attempts)
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
            retried=state.retried,
            retry_wait=state.retry_wait,
            memory_budget=state.memory_budget,
        )


class Pipeline:
    """Reads URLs lazily and runs each distinct repository as one task, at most
    ``in_flight`` at a time; later lines naming a repository seen before are reported
    after it, with its status and ``duplicate_of``, without being cloned again.

    Each line is parsed once, here, into a :class:`Repository` that the task, the
    duplicate index and ``save`` read; it lives only while its line is in flight.
    Reports go into ``send`` (closed when every URL is reported) as they finish,
    each after ``save`` (given the repository's store key) has returned, when there
    is one.
    """

    def __init__(
        self,
        run_one: Callable[[Repository], Awaitable[RepositoryReport]],
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
                repository = Repository.of(url, index)
                digest = repository.digest
                first = self._seen.first_of(digest)
                if first is None:
                    self._seen.start(digest, index)
                    await self._in_flight.acquire()
                    nursery.start_soon(self._one, repository, digest)
                elif first[1] is None:  # the first line is still in flight
                    self._seen.wait_for(first[0], index, repository.shown)
                else:
                    shown, key = repository.shown, repository.key
                    await self._send_duplicate(index, shown, key, first[0], first[1])
        self._state.finished = trio.current_time()

    async def _one(self, repository: Repository, digest: bytes) -> None:
        try:
            report = await self._run_one(repository)
            outcome = outcome_of(report.status, report.error)
            waiting = self._seen.finish(digest, repository.index, outcome)
            await self._deliver(report, repository.key)
            for duplicate, shown in waiting:  # their key is their first line's
                await self._send_duplicate(
                    duplicate, shown, repository.key, repository.index, outcome
                )
        finally:
            self._in_flight.release()

    async def _send_duplicate(
        self, index: int, shown: str, key: str, first: int, outcome: Outcome
    ) -> None:
        await self._deliver(RepositoryReport.duplicate(shown, index, first, *outcome), key)

    async def _deliver(self, report: RepositoryReport, key: str) -> None:
        # Stored first (with a store): a report its caller has is a report kept.
        if self._save is not None:
            await self._save(key, report)
        # The channel holds nothing: once send returns, the caller has the report. Only
        # then is it counted and announced, with no checkpoint in between, so that a
        # batch stopped at any moment sums, and says "done" for, exactly the reports
        # its caller received.
        await self._send.send(report)
        self._state.count(report)
        self._on_done(report)

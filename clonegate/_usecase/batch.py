"""A batch: many URLs through the use case, a bounded number in flight (ADR 0006)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import final

import trio

from .._domain.reports import BatchSummary, RepositoryReport, RepositoryStatus
from .._domain.repository import Repository
from .duplicates import DuplicateIndex, Outcome, outcome_of
from .entries import End, Entries, EntrySource
from .thrash import ThrashWatch

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
    thrash: ThrashWatch | None = None  # its memory pressure without progress (issue 46)
    # What the batch's source raised, which stopped the feeding; out of the batch once.
    source_error: Exception | None = None

    def raise_source_error(self) -> None:
        """Raise the source's exception, the first time only: it comes out once."""
        error, self.source_error = self.source_error, None
        if error is not None:
            raise error

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
    If the batch's source raised, the exception comes out of the iteration, after
    every report of the repositories read before it.
    """

    def __init__(self, receive: trio.MemoryReceiveChannel[RepositoryReport], state: BatchState):
        self._receive = receive
        self._state = state

    def __aiter__(self) -> Batch:
        return self

    async def __anext__(self) -> RepositoryReport:
        try:
            return await self._receive.receive()
        except trio.EndOfChannel:
            pass
        self._state.raise_source_error()  # outside the except: not "during" the end
        raise StopAsyncIteration

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
            memory_thrash=state.thrash.episodes if state.thrash is not None else 0,
        )


class Pipeline:
    """Reads lines lazily and runs each distinct repository as one task, at most
    ``in_flight`` at a time; later lines naming a repository seen before are reported
    after it, with its status and ``duplicate_of``, without being cloned again.

    A line is asked of the source only when there is room for one more repository in
    flight: an async source (a listing) is never read more than ``in_flight`` lines
    ahead of the reports delivered, besides later lines that repeat a repository
    still in flight (each kept as its index, its URL and its listing until then).

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

    async def feed(self, source: EntrySource) -> None:
        """Run every line of ``source``, then close ``send``. An exception the source
        raises ends the reading: the repositories in flight finish and are reported,
        then the exception is kept in the state, for the batch to raise."""
        entries = Entries(source)
        try:
            async with self._send, trio.open_nursery() as nursery:
                await self._read(entries, nursery)
        finally:
            await entries.aclose()
        self._state.finished = trio.current_time()

    async def _read(self, entries: Entries, nursery: trio.Nursery) -> None:
        index = 0
        while True:
            # Room first, then the line: the source waits while the pipeline is full.
            await self._in_flight.acquire()
            try:
                entry = await entries.next()
            except Exception as exc:  # the source's, whatever it is: the batch raises it
                self._in_flight.release()
                self._state.source_error = exc
                return
            except BaseException:
                self._in_flight.release()
                raise
            if isinstance(entry, End):
                self._in_flight.release()
                return
            repository = Repository.of(entry, index)
            index += 1
            digest = repository.digest
            first = self._seen.first_of(digest)
            if first is None:
                self._seen.start(digest, repository.index)
                nursery.start_soon(self._one, repository, digest)  # it releases the room
                continue
            self._in_flight.release()  # a duplicate is never run
            if first[1] is None:  # the first line is still in flight
                self._seen.wait_for(first[0], repository.index, repository.shown, repository.listed)
            else:
                await self._send_duplicate(repository, first[0], first[1])

    async def _one(self, repository: Repository, digest: bytes) -> None:
        try:
            report = await self._run_one(repository)
            outcome = outcome_of(report.status, report.error)
            waiting = self._seen.finish(digest, repository.index, outcome)
            await self._deliver(report, repository.key)
            for line, shown, listed in waiting:  # their key is their first line's
                duplicate = RepositoryReport.duplicate(
                    shown, line, repository.index, *outcome, listed
                )
                await self._deliver(duplicate, repository.key)
        finally:
            self._in_flight.release()

    async def _send_duplicate(self, repository: Repository, first: int, outcome: Outcome) -> None:
        shown, index, listed = repository.shown, repository.index, repository.listed
        report = RepositoryReport.duplicate(shown, index, first, *outcome, listed)
        await self._deliver(report, repository.key)

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

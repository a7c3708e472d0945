"""Fakes of the use case's ports for unit tests: a VCS and an analyzer that count what
runs and can block on events, and a memory sensor that returns what the test says."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import trio

from clonegate import (
    ANALYZER_VERSION,
    AnalysisReport,
    AnalyzeUseCase,
    ClonedSource,
    Credential,
    Inventory,
    MemoryReading,
    RemoteHead,
    RepositoryFacts,
    RepositoryReport,
    TestCase,
    TestFile,
)
from clonegate._adapters.clones import discard

WHEN = datetime(2024, 1, 1, tzinfo=UTC)


def url(i: int) -> str:
    return f"https://git.example/org/repo{i}.git"


class FakeVCS:
    """Counts clones in flight; each clone waits for its URL's event if ``blocking``."""

    # The VCS port's figures (ADR 0017): a shallow clone, the default cap, no forecasts.
    depth: int | None = 1
    max_memory = 1 << 30
    opening_memory: int | None = None
    reports_progress = True  # the bytes in ``received``, told before a clone waits
    idle_memory = 0  # keeps no worker between clones

    def __init__(
        self,
        tmp: Path,
        *,
        blocking: bool = False,
        delay: float = 0.0,
        setup: float = 0.0,
        readies: int = 1,
    ) -> None:
        self.tmp = tmp
        self.blocking = blocking
        self.delay = delay
        self.setup = setup  # seconds of set-up before on_ready, like starting a worker
        self.readies = readies  # calls of on_ready; a repeated one comes `delay` later
        self.release: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self.failures: dict[str, Exception] = {}
        # Raised by the next clones of a URL, one each, before its clones succeed.
        self.flaky: defaultdict[str, list[Exception]] = defaultdict(list)
        self.calls: list[str] = []
        self.credentials: list[Credential | None] = []
        self.in_flight = 0
        self.peak = 0
        self.made = 0
        self.started: dict[str, float] = {}  # when each clone began (after its set-up)
        self.received: dict[str, list[int]] = {}  # told to on_progress, per URL, in order

    async def clone(
        self,
        url: str,
        destination: Path | None = None,
        *,
        credential: Credential | None = None,
        on_ready: Callable[[], object] | None = None,
        on_memory: Callable[[int], Awaitable[object]] | None = None,
        on_progress: Callable[[int], object] | None = None,
        keep_worker: bool = False,
    ) -> ClonedSource:
        self.calls.append(url)
        self.credentials.append(credential)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await trio.sleep(self.setup)
            for repeat in range(self.readies):
                if repeat:
                    await trio.sleep(self.delay)
                self.started.setdefault(url, trio.current_time())
                if on_ready is not None:
                    on_ready()
            for received in self.received.get(url, []):
                if on_progress is not None:
                    on_progress(received)
            if self.blocking:
                await self.release[url].wait()
            else:
                await trio.sleep(self.delay)
            if url in self.failures:
                raise self.failures[url]
            if self.flaky[url]:
                raise self.flaky[url].pop(0)
            self.made += 1
            path = self.tmp / f"clone{self.made}"
            path.mkdir()
            return ClonedSource(url, path, "main", "a" * 40, WHEN, 10, False, path, remove=discard)
        finally:
            self.in_flight -= 1

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        raise NotImplementedError(f"{type(self).__name__} lists no remote HEAD")


class FakeAnalyzer:
    version: str | None = None  # states none: an incremental run refuses it
    processes: int | None = None

    def __init__(self, *, blocking: bool = False) -> None:
        self.blocking = blocking
        self.release: defaultdict[str, trio.Event] = defaultdict(trio.Event)
        self.in_flight = 0
        self.peak = 0
        self.seen: list[str] = []

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        self.seen.append(source.url)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            if self.blocking:
                await self.release[source.url].wait()
            else:
                await trio.lowlevel.checkpoint()
        finally:
            self.in_flight -= 1
        tests = (TestCase("test_a", 1), TestCase("test_b", 2))
        inventory = Inventory((TestFile("test_x.py", "pytest", "python", (), tests),))
        facts = RepositoryFacts(source.branch, source.commit, WHEN, 3, 10, 5)
        return AnalysisReport(facts, inventory, ANALYZER_VERSION)


async def collect(uc: AnalyzeUseCase, urls: list[str]) -> list[RepositoryReport]:
    async with uc.analyze_many(urls) as batch:
        return [report async for report in batch]


class Readings:
    """A sensor that returns what the test says, and counts how often it was read."""

    def __init__(self, reading: MemoryReading) -> None:
        self.reading = reading
        self.reads = 0

    def read(self) -> MemoryReading:
        self.reads += 1
        return self.reading

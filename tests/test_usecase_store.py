"""The use case with a result store, on fakes: what is saved and when, reuse rules, and
what a failing store does to a batch (the real store and servers: test_incremental)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import (
    ANALYZER_VERSION,
    AnalyzeUseCase,
    RemoteHead,
    RepositoryReport,
    RepositoryStatus,
    TestInventoryAnalyzer,
    open_analyzer,
    with_incremental,
    with_keep_clones,
    with_result_store,
)
from clonegate._domain.credentials import Credential
from clonegate._domain.listed import Listed
from clonegate.store import (
    RunEvent,
    SQLiteStore,
    StoreError,
    StoreSettings,
    open_store,
    open_store_reader,
)

from .support.fakes import FakeAnalyzer, FakeVCS, url


class ListingVCS(FakeVCS):
    """A FakeVCS that also answers remote_head: every remote's HEAD is ``a`` * 40."""

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.listed: list[str] = []

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        await trio.lowlevel.checkpoint()
        self.listed.append(url)
        return RemoteHead("main", "a" * 40)


class VersionedAnalyzer(FakeAnalyzer):
    version = ANALYZER_VERSION  # what FakeAnalyzer's reports carry


class BrokenStore:
    """A ReportStore whose saves fail after ``good`` of them; it records finish_run."""

    def __init__(self, good: int, *, finish_fails: bool = False) -> None:
        self.good = good
        self.saved: list[int] = []
        self.finished: list[int] = []
        self.finish_fails = finish_fails

    async def begin_run(self, options: Mapping[str, object]) -> int:
        await trio.lowlevel.checkpoint()
        return 7

    async def save(self, run_id: int, key: str, report: RepositoryReport) -> None:
        await trio.lowlevel.checkpoint()
        if len(self.saved) >= self.good:
            raise StoreError("the result store x.db: database or disk is full")
        self.saved.append(report.index)

    async def save_events(self, run_id: int, events: Sequence[RunEvent]) -> None:
        await trio.lowlevel.checkpoint()

    async def finish_run(self, run_id: int) -> None:
        await trio.lowlevel.checkpoint()
        self.finished.append(run_id)
        if self.finish_fails:
            raise StoreError("the result store x.db: database or disk is full")

    async def reusable(
        self, key: str, commit: str, analyzer_version: str
    ) -> RepositoryReport | None:
        await trio.lowlevel.checkpoint()
        return None

    async def reusable_listed(
        self, key: str, listed: Listed, analyzer_version: str
    ) -> RepositoryReport | None:
        await trio.lowlevel.checkpoint()
        return None

    async def clone_memory(self, key: str, depth: int | None) -> int | None:
        await trio.lowlevel.checkpoint()
        return None


async def test_a_failing_store_ends_the_batch_with_a_plain_store_error(tmp_path: Path) -> None:
    store = BrokenStore(good=3, finish_fails=True)
    uc = AnalyzeUseCase(with_result_store(store), vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())
    received: list[int] = []

    async def consume() -> None:
        async with uc.analyze_many([url(i) for i in range(10)]) as batch:
            async for report in batch:
                received.append(report.index)

    with pytest.raises(StoreError, match="disk is full"):  # not an ExceptionGroup
        await consume()
    # Every report the caller received had been saved first; the run was finished
    # (its own failure logged, not raised over the first one).
    assert set(received) <= set(store.saved)
    assert len(store.saved) == 3
    assert store.finished == [7]


async def test_a_failing_finish_never_hides_a_cancellation(
    tmp_path: Path, autojump_clock: trio.testing.MockClock
) -> None:
    store = BrokenStore(good=100, finish_fails=True)
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(with_result_store(store), vcs=vcs, analyzer=FakeAnalyzer())
    with trio.move_on_after(5) as scope:
        async with uc.analyze_many([url(0)]) as batch:
            async for _ in batch:
                pass
    assert scope.cancelled_caught
    assert store.finished == [7]


async def test_execute_outside_a_session_is_a_run_of_its_own(tmp_path: Path) -> None:
    async with open_store(tmp_path / "s.db") as store:
        uc = AnalyzeUseCase(
            with_result_store(store), vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer()
        )
        await uc.execute(url(1))
        async with uc.session():
            await uc.execute(url(2), index=0)
            await uc.execute(url(3), index=1)
        runs = await store.runs()
    assert [r.summary["repositories"] if r.summary else None for r in runs] == [2, 1]


async def test_incremental_reuses_only_a_result_of_the_same_commit_and_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vcs = ListingVCS(tmp_path)
    analyzer = VersionedAnalyzer()
    async with open_store(tmp_path / "s.db") as store:
        uc = AnalyzeUseCase(
            with_result_store(store), with_incremental(), with_keep_clones(),
            vcs=vcs, analyzer=analyzer,
        )  # fmt: skip
        first = await uc.execute(url(0))
        second = await uc.execute(url(0))
        assert (first.reused, second.reused) == (False, True)
        assert second.inventory == first.inventory
        assert len(vcs.calls) == 1  # cloned once
        monkeypatch.setattr(VersionedAnalyzer, "version", "clonegate-analyzer/bumped")
        third = await uc.execute(url(0))
        assert not third.reused  # another analyzer version: run again
    assert third.status is RepositoryStatus.OK
    assert len(vcs.calls) == 2
    assert vcs.listed == [url(0)] * 3


def test_incremental_needs_a_store_and_a_versioned_analyzer(
    tmp_path: Path,
) -> None:
    with pytest.raises(ValueError, match="needs a result store"):
        AnalyzeUseCase(with_incremental(), vcs=ListingVCS(tmp_path), analyzer=VersionedAnalyzer())
    store = BrokenStore(good=0)
    with pytest.raises(ValueError, match="states its version"):
        AnalyzeUseCase(
            with_result_store(store), with_incremental(),
            vcs=ListingVCS(tmp_path), analyzer=FakeAnalyzer(),
        )  # fmt: skip


async def test_a_vcs_that_cannot_list_fails_an_incremental_run_plainly(tmp_path: Path) -> None:
    # The capability is part of the VCS port (ADR 0017): a VCS without it says so when
    # asked, and that programming error is not turned into a repository's report.
    uc = AnalyzeUseCase(
        with_result_store(BrokenStore(good=1)), with_incremental(),
        vcs=FakeVCS(tmp_path), analyzer=VersionedAnalyzer(),
    )  # fmt: skip
    with pytest.raises(NotImplementedError, match="FakeVCS lists no remote HEAD"):
        await uc.execute(url(0))


async def test_open_analyzer_opens_the_store_and_gives_it_to_the_use_case_and_analyzer(
    tmp_path: Path,
) -> None:
    settings = StoreSettings(tmp_path / "results.db", cache_limit=1 << 20)
    async with open_analyzer(store=settings) as uc:
        store = uc.config.result_store
        assert isinstance(store, SQLiteStore)  # every report is kept there
        analyzer = uc._analyzer
        assert isinstance(analyzer, TestInventoryAnalyzer)
        assert analyzer.settings.cache is store  # and the per-file cache too
        run = await store.begin_run({})
        await store.finish_run(run)
    async with open_store_reader(settings.path) as reader:
        assert [info.id for info in await reader.runs()] == [run]
    async with open_analyzer(store=StoreSettings(tmp_path / "plain.db", cache_limit=0)) as uc:
        assert isinstance(uc._analyzer, TestInventoryAnalyzer)
        assert uc._analyzer.settings.cache is None  # 0: no analysis cache

"""Served workers under a memory budget (issue 46, ADR 0014): a clone's worker waits for
the next clone when the budget counts what idle workers keep as reserved (its ceiling
lowered by them) and that is at most an eighth of it; else it ends with its clone."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import trio

from clonegate import (
    AnalyzeUseCase,
    ClonedSource,
    CloneSettings,
    MemoryReading,
    with_max_concurrent_clones,
    with_memory_budget,
)
from clonegate._adapters.git.dulwich_vcs import DulwichVCS
from clonegate._adapters.workers import open_worker_pool
from clonegate._domain.credentials import Credential
from clonegate._usecase.estimates import MemoryEstimates
from clonegate._usecase.idle_workers import reserve_idle

from .support.fakes import FakeAnalyzer, FakeVCS, Readings, url
from .support.repos import make_repo
from .support.servers import git_daemon

MiB = 1 << 20
CALM = MemoryReading(limit=24 << 30, available=20 << 30, pressure=0.0)


def test_a_large_budget_reserves_the_idle_workers_and_keeps_them() -> None:
    estimates = MemoryEstimates(1024, 16_000, opening=8, origin="auto: 75% of 21333 MiB")
    assert reserve_idle(estimates, 2, 32 * MiB)
    assert estimates.ceiling == 16_000 - 64  # each slot's idle worker, counted
    assert estimates.origin == "auto: 75% of 21333 MiB; 64 MiB kept for 2 idle workers"
    assert (estimates.initial, estimates.opening) == (1024, 8)


def test_a_small_budget_keeps_no_idle_worker_and_stays_whole() -> None:
    # A cgroup of 1.3x one delta-heavy clone: four idle workers would take 128 of 130.
    estimates = MemoryEstimates(1024, 130, opening=8)
    assert not reserve_idle(estimates, 4, 32 * MiB)
    assert estimates.ceiling == 130
    assert estimates.origin == ""
    # At the bound: 8 x 16 MiB is exactly an eighth of 1024.
    assert reserve_idle(MemoryEstimates(1024, 1024), 8, 16 * MiB)
    assert not reserve_idle(MemoryEstimates(1024, 1023), 8, 16 * MiB)


def test_no_budget_or_no_idle_memory() -> None:
    assert reserve_idle(None, 4, 32 * MiB)  # nothing reserved: the VCS keeps workers
    assert not reserve_idle(MemoryEstimates(1024, 16_000), 4, 0)  # a VCS that keeps none


class KeepingVCS(FakeVCS):
    """Forecasts its memory, keeps idle workers of 32 MiB; records ``keep_worker``."""

    opening_memory = 8 * MiB
    idle_memory = 32 * MiB

    def __init__(self, tmp: Path) -> None:
        super().__init__(tmp)
        self.kept: list[bool] = []

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
        self.kept.append(keep_worker)
        return await super().clone(url, destination, credential=credential, on_ready=on_ready)


async def test_the_use_case_keeps_workers_only_where_the_budget_counts_them(
    tmp_path: Path,
) -> None:
    summaries = {}
    for budget in ("2G", "200M"):
        vcs = KeepingVCS(tmp_path / budget)
        (tmp_path / budget).mkdir()
        uc = AnalyzeUseCase(
            with_max_concurrent_clones(2),
            with_memory_budget(budget),
            vcs=vcs,
            analyzer=FakeAnalyzer(),
            memory_sensor=Readings(CALM),
        )
        async with uc.analyze_many([url(i) for i in range(3)]) as batch:
            assert [r.status async for r in batch] == ["ok"] * 3
        summaries[budget] = (vcs.kept, batch.summary.memory_budget)
    # 2 GiB: 64 MiB of idle workers is 1/32 of it, counted; 200 MiB: 64 would be 1/3.
    assert summaries == {"2G": ([True] * 3, 2048 - 64), "200M": ([False] * 3, 200)}


async def test_a_kept_worker_serves_the_next_clone_under_a_budget(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "small")

    async def on_memory(nbytes: int, reclaimable: int = 0, /, *, refusable: bool = False) -> bool:
        await trio.lowlevel.checkpoint()
        return True

    with git_daemon(served) as daemon:
        async with open_worker_pool() as pool:
            vcs = DulwichVCS(CloneSettings(depth=None, work_dir=tmp_path), pool=pool)
            alone = await vcs.clone(daemon.url("small"), on_memory=on_memory)
            await alone.aclose()
            assert pool._idle.count() == 0  # not reserved: it ended with its clone
            for _ in range(2):
                source = await vcs.clone(daemon.url("small"), on_memory=on_memory, keep_worker=True)
                await source.aclose()
                assert pool._idle.count() == 1
            assert pool.statistics().workers_started == 2  # one fork for the two kept

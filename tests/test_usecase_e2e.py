"""AnalyzeUseCase with its real adapters against a loopback git daemon."""

from __future__ import annotations

from pathlib import Path

import trio

from clonegate import (
    CloneSettings,
    RepositoryStatus,
    open_analyzer,
    with_max_concurrent_clones,
)

from .support.inventory_fixture import FIXTURE
from .support.processes import descendant_pids
from .support.repos import FixtureRepo, commit_tree
from .support.servers import GitDaemon, git_daemon


async def test_batch_against_a_loopback_git_daemon(
    daemon: GitDaemon, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    served = tmp_path / "served"
    served.mkdir()
    inventory_head = commit_tree(FIXTURE, served, "inventory")
    idle_before = descendant_pids()
    with git_daemon(served) as second:
        urls = [
            daemon.url("basic"),
            second.url("inventory"),
            daemon.url("trunk"),
            daemon.url("no-such-repo"),
            f"GIT://127.0.0.1:{daemon.port}/basic/",  # the same repository, written differently
            daemon.url("empty"),
            "not a url",
        ]
        clone = CloneSettings(work_dir=work)
        async with (
            open_analyzer(with_max_concurrent_clones(2), clone=clone) as uc,
            uc.analyze_many(urls) as batch,
        ):
            reports = {r.index: r async for r in batch}
            summary = batch.summary
    assert reports[0].status is RepositoryStatus.OK
    assert reports[0].ref is not None
    assert reports[0].ref.commit == repos["basic"].head
    inventory = reports[1]
    assert inventory.status is RepositoryStatus.OK
    assert inventory.ref is not None
    assert inventory.ref.commit == inventory_head
    assert inventory.analysis is not None
    assert (inventory.analysis.test_files, inventory.analysis.tests) == (11, 58)
    assert inventory.timings.setup > 0  # DulwichVCS said when its worker was ready
    assert inventory.timings.clone > 0
    assert inventory.timings.analysis > 0
    assert reports[2].ref is not None
    assert reports[2].ref.branch == "trunk"
    missing = reports[3]
    assert missing.status is RepositoryStatus.FAILED
    assert missing.error is not None
    assert (missing.error.phase, missing.error.kind) == ("clone", "not_found")
    assert reports[4].duplicate_of == 0
    empty = reports[5].error
    assert empty is not None
    assert empty.kind == "empty_repository"
    invalid = reports[6].error
    assert invalid is not None
    assert invalid.kind == "invalid_url"
    assert (summary.repositories, summary.ok, summary.failed, summary.duplicates) == (7, 4, 3, 1)
    # Nothing left behind: no clone directory, and the composition's worker processes
    # are gone with its block.
    assert list(work.iterdir()) == []
    await trio.lowlevel.checkpoint()
    assert descendant_pids() <= idle_before  # the zygote and every worker are gone
    stats = uc.clone_gate_statistics()
    assert stats.acquired == stats.released == 5  # the invalid URL and the duplicate took none

"""One analysis split across worker processes: same report, every CPU, nothing left running."""

from __future__ import annotations

import pickle
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import ClonedSource, CloneSettings, DulwichVCS, TestInventoryAnalyzer
from clonegate._adapters.analysis.analyzer import _all, split
from clonegate._adapters.analysis.results import MIN_FILES_PER_PART, PartResult, ScanResult
from clonegate._adapters.analysis.scan import list_commit, list_or_scan, scan_commit, scan_part
from clonegate._adapters.workers import default_worker_limiter, open_worker_pool

from .support.inventory_fixture import FIXTURE, add_hazards
from .support.processes import pid_alive
from .support.repos import commit_tree, make_test_suite_repo
from .support.servers import GitDaemon, git_daemon
from .support.worker_gate import WorkerGate


@pytest.fixture(scope="module")
def fixture_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("inventory")
    head = commit_tree(FIXTURE, root, "inventory", extra=add_hazards)
    return str(root / "inventory.git"), head


@pytest.fixture(scope="module")
def suite_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitDaemon]:
    # Large enough that each of two parts parses for a good fraction of a second.
    root = tmp_path_factory.mktemp("suite")
    make_test_suite_repo(root, "suite", test_files=4000, other_files=10)
    with git_daemon(root) as daemon:
        yield daemon


def test_split_deals_files_out_in_turn() -> None:
    candidates = tuple((f"f{i:03}", b"%03d" % i) for i in range(450))
    halves = split(candidates, 2)
    assert [len(p) for p in halves] == [225, 225]
    assert halves[0][:2] == (candidates[0], candidates[2])
    assert halves[1][:2] == (candidates[1], candidates[3])
    assert sorted(halves[0] + halves[1]) == list(candidates)
    assert len(split(candidates, 8)) == 4  # at least 100 files a part
    assert split(candidates[:150], 8) == [candidates[:150]]
    assert split(candidates, 1) == [candidates]
    assert split((), 4) == [()]


@pytest.mark.parametrize("parts", [1, 2, 3, 7])
def test_the_report_does_not_depend_on_the_split(fixture_repo: tuple[str, str], parts: int) -> None:
    path, head = fixture_repo
    listing = list_commit(path, head)
    results = [
        scan_part(path, part, listing.scopes)
        for part in reversed(split(listing.candidates, parts, min_files=1))
    ]
    assert len(results) == parts
    assert ScanResult.merge(listing, results) == scan_commit(path, head)


def test_inventories_survive_pickling(fixture_repo: tuple[str, str]) -> None:
    # Reports cross a process boundary; TestCase, TestSuite and TestFile pickle
    # themselves positionally, which must keep every field and type.
    inventory = scan_commit(*fixture_repo).inventory
    copy = pickle.loads(pickle.dumps(inventory, protocol=pickle.HIGHEST_PROTOCOL))
    assert copy == inventory
    assert copy.by_status() == inventory.by_status()
    assert [type(t.status) for f in copy.files for t in f.all_tests()] == [
        type(t.status) for f in inventory.files for t in f.all_tests()
    ]


def test_list_or_scan_scans_what_makes_one_part_and_lists_the_rest(
    fixture_repo: tuple[str, str], tmp_path: Path
) -> None:
    path, head = fixture_repo
    listing = list_commit(path, head)
    assert 0 < len(listing.candidates) < 2 * MIN_FILES_PER_PART
    # One part whatever the CPUs: the scan itself, as one process would make it.
    for processes in (1, 2, 8):
        assert list_or_scan(path, head, processes) == scan_commit(path, head)


async def test_a_small_repository_is_one_job_and_a_large_one_is_split(
    suite_daemon: GitDaemon, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import clonegate._adapters.analysis.analyzer as analyzer_module

    jobs: list[str] = []
    real = analyzer_module.run_in_worker  # type: ignore[attr-defined]

    async def counted(
        pool: object, function: Callable[..., object], *args: object, **options: str
    ) -> object:
        jobs.append(function.__name__)
        return await real(pool, function, *args, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(analyzer_module, "run_in_worker", counted)
    cpus = default_worker_limiter()
    cpus.total_tokens = 2
    source = await _clone(suite_daemon, tmp_path)
    try:
        async with open_worker_pool() as pool:
            large = await TestInventoryAnalyzer(pool=pool).analyze(source)
            assert jobs == ["list_or_scan", "scan_part", "scan_part"]
            jobs.clear()
            cpus.total_tokens = 1  # one part: listed and scanned in one job
            single = await TestInventoryAnalyzer(pool=pool).analyze(source)
            assert jobs == ["list_or_scan"]
    finally:
        await source.aclose()
    assert large == single
    assert large.inventory.test_files == 4000


async def _clone(daemon: GitDaemon, work: Path) -> ClonedSource:
    return await DulwichVCS(CloneSettings(work_dir=work)).clone(daemon.url("suite"))


async def test_one_analysis_uses_every_cpu_and_gives_the_single_process_report(
    suite_daemon: GitDaemon, tmp_path: Path
) -> None:
    cpus = default_worker_limiter()
    cpus.total_tokens = 2  # as on the two-core machines CI runs on, whatever this one has
    source = await _clone(suite_daemon, tmp_path)
    gate = WorkerGate()
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(gate.serve)
            async with open_worker_pool(init=gate.init) as pool, trio.open_nursery() as inner:
                reports = []

                async def analyze() -> None:
                    reports.append(await TestInventoryAnalyzer(pool=pool).analyze(source))

                inner.start_soon(analyze)
                # Both parts are inside workers at the same time, in two processes.
                pids = await gate.wait_checked_in(2)
                assert len(set(pids)) == 2
                await gate.open()
            nursery.cancel_scope.cancel()
        cpus.total_tokens = 1  # one part, in the default (ungated) workers
        single_report = await TestInventoryAnalyzer().analyze(source)
    finally:
        await source.aclose()
    (split_report,) = reports
    assert gate.checked_in == pids  # two parts, no more
    assert split_report == single_report
    assert split_report.inventory.test_files == 4000
    assert split_report.inventory.tests == 24000
    assert [f.path for f in split_report.inventory.files] == sorted(
        f.path for f in split_report.inventory.files
    )


async def test_analyses_at_once_share_the_cpus(suite_daemon: GitDaemon, tmp_path: Path) -> None:
    cpus = default_worker_limiter()
    cpus.total_tokens = 2
    source = await _clone(suite_daemon, tmp_path)
    reports = []
    gate = WorkerGate()
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(gate.serve)
            # A fresh pool: new workers are ours.
            async with open_worker_pool(init=gate.init) as pool, trio.open_nursery() as inner:

                async def analyze() -> None:
                    reports.append(await TestInventoryAnalyzer(pool=pool).analyze(source))

                for _ in range(3):
                    inner.start_soon(analyze)
                # Three listings and six parts want a process. Two parts hold both CPU
                # tokens, held in their workers; whatever else is left (parts, or the
                # listings that make them) waits for a token.
                await gate.wait_checked_in(2)
                await trio.testing.wait_all_tasks_blocked()
                stats = cpus.statistics()
                assert stats.borrowed_tokens == 2
                assert stats.tasks_waiting >= 1
                assert len(gate.checked_in) == 2
                await gate.open()
            nursery.cancel_scope.cancel()
    finally:
        await source.aclose()
    assert len(gate.checked_in) == 6
    # Six parts in at most two processes: a served worker takes part after part, and
    # never more run at once than the CPU tokens allow (ADR 0003).
    assert len(set(gate.checked_in)) <= 2
    assert len(reports) == 3
    assert reports[0] == reports[1] == reports[2]


async def test_cancelling_an_analysis_kills_every_part(
    suite_daemon: GitDaemon, tmp_path: Path
) -> None:
    cpus = default_worker_limiter()
    cpus.total_tokens = 2
    source = await _clone(suite_daemon, tmp_path)
    gate = WorkerGate()
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(gate.serve)
            async with open_worker_pool(init=gate.init) as pool, trio.open_nursery() as inner:
                with trio.CancelScope() as scope:

                    async def cancel_when_both_parts_run() -> None:
                        await gate.wait_checked_in(2)  # both parts are in their workers
                        scope.cancel()

                    inner.start_soon(cancel_when_both_parts_run)
                    await TestInventoryAnalyzer(pool=pool).analyze(source)
                # Checked inside the pool's scope: leaving it would stop its workers anyway.
                assert scope.cancelled_caught
                busy = set(gate.checked_in)
                assert len(busy) == 2
                assert not any(pid_alive(pid) for pid in busy)
            nursery.cancel_scope.cancel()
    finally:
        await source.aclose()


async def test_a_failing_part_stops_the_others_and_raises_its_own_error() -> None:
    stopped = trio.Event()

    async def fails() -> PartResult:
        await trio.testing.wait_all_tasks_blocked()
        raise ValueError("part 2 broke")

    async def runs_forever() -> PartResult:
        try:
            await trio.sleep_forever()
        finally:
            stopped.set()
        raise AssertionError("unreachable")

    with pytest.raises(ValueError, match="part 2 broke"):  # not an ExceptionGroup
        await _all([runs_forever, fails, runs_forever])
    assert stopped.is_set()


async def test_parts_come_back_in_their_own_order() -> None:
    finished = [trio.Event() for _ in range(6)]
    finished[5].set()

    def job(index: int) -> Callable[[], Awaitable[PartResult]]:
        async def part() -> PartResult:  # each waits for the next: they end last to first
            await finished[index + 1].wait()
            finished[index].set()
            return PartResult((), (), index)

        return part

    results = await _all([job(i) for i in range(5)])
    assert [r.bytes_read for r in results] == [0, 1, 2, 3, 4]

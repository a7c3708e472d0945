"""The worker pool: a zygote that forks a fresh worker per job (ADR 0003)."""

from __future__ import annotations

import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate._adapters.preloads import ZYGOTE_PRELOAD
from clonegate._adapters.workers import WorkerDied, open_worker_pool, run_in_worker, run_pool, spawn

from .support import worker_jobs
from .support.processes import pid_alive
from .support.servers import GitDaemon

MiB = 1 << 20


def defined_in_main() -> None:
    pass


async def test_each_job_gets_a_fresh_worker_that_ends_with_it() -> None:
    async with open_worker_pool() as pool:
        first = await run_in_worker(pool, worker_jobs.pid)
        second = await run_in_worker(pool, worker_jobs.pid)
        stats = pool.statistics()
    assert first != second
    assert first != os.getpid()
    assert stats.workers_started == 2
    assert stats.zygote_pid is not None
    assert not pid_alive(stats.zygote_pid)


async def test_a_jobs_exception_is_raised_in_the_caller() -> None:
    async with open_worker_pool() as pool:
        with pytest.raises(ValueError, match="no good"):
            await run_in_worker(pool, worker_jobs.fail, "no good")


async def test_a_worker_that_dies_is_reported_with_its_signal() -> None:
    async with open_worker_pool() as pool:
        with pytest.raises(WorkerDied, match="killed by signal 9") as caught:
            await run_in_worker(pool, worker_jobs.die)
    assert caught.value.signal == 9
    assert not caught.value.out_of_memory  # SIGKILL, but not from the OOM killer


async def test_workers_are_the_oom_killers_first_choice() -> None:
    """When memory runs out, a job goes, never the parent with every result (ADR 0014)."""
    async with open_worker_pool() as pool:
        assert await run_in_worker(pool, worker_jobs.oom_score_adj) == "1000"
    assert Path("/proc/self/oom_score_adj").read_text().strip() != "1000"


async def test_the_memory_allowance_is_a_hard_cap() -> None:
    async with open_worker_pool() as pool:
        with pytest.raises(MemoryError):
            await run_in_worker(pool, worker_jobs.allocate, 512 * MiB, memory_allowance=128 * MiB)
        assert await run_in_worker(pool, worker_jobs.allocate, 64 * MiB, memory_allowance=128 * MiB)


async def test_a_reply_cannot_make_the_parent_run_code() -> None:
    async with open_worker_pool() as pool:
        with pytest.raises(Exception, match=r"refused: posix\.system"):
            await run_in_worker(pool, worker_jobs.hostile_reply)


async def test_a_job_from_main_is_refused_with_a_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    # As in a script run directly: the function lives in __main__.
    monkeypatch.setattr(defined_in_main, "__module__", "__main__")
    monkeypatch.setattr(sys.modules["__main__"], "defined_in_main", defined_in_main, raising=False)
    async with open_worker_pool() as pool:
        with pytest.raises(RuntimeError, match="never import the program's __main__"):
            await run_in_worker(pool, defined_in_main)


async def test_cancelling_a_job_kills_its_worker_before_returning() -> None:
    async with open_worker_pool() as pool:
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run_in_worker, pool, worker_jobs.sleep_forever)
                while not pool.statistics().workers_running:
                    await trio.testing.wait_all_tasks_blocked()
                (busy,) = pool.statistics().workers_running
                scope.cancel()
        assert not pid_alive(busy)


async def test_without_a_scope_the_run_has_its_own_pool() -> None:
    assert await run_in_worker(run_pool(), worker_jobs.pid) != os.getpid()


async def test_the_zygote_never_imports_trio() -> None:
    """The zygote's imports are the jobs' (dulwich, grammars); trio is the parent's."""
    async with open_worker_pool(preload=ZYGOTE_PRELOAD) as pool:
        assert await run_in_worker(pool, worker_jobs.has_imported, "dulwich.client")
        assert not await run_in_worker(pool, worker_jobs.has_imported, "trio")


async def test_a_prestarted_zygote_serves_the_first_pool_it_covers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spawn, "_prestarted", [])
    spawn.prestart(["tests.support.worker_jobs", "json"], os.environ)
    (early,) = spawn._prestarted
    async with open_worker_pool(preload=["json"]) as first:
        assert await run_in_worker(first, worker_jobs.parent_pid) == early.process.pid
    async with open_worker_pool(preload=["json"]) as second:
        assert await run_in_worker(second, worker_jobs.parent_pid) != early.process.pid
    assert first.statistics().zygote_pid == early.process.pid
    assert second.statistics().zygote_pid not in (None, early.process.pid)
    assert early.process.returncode == 0  # stopped and reaped with its pool


def test_a_zygote_nobody_adopts_ends_with_its_parent() -> None:
    script = (
        "import sys; from clonegate._adapters.workers import spawn; "
        "spawn.prestart(['json'], None); print(spawn._prestarted[0].process.pid, flush=True); "
        "sys.stdin.read()"
    )
    with subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as parent:
        assert parent.stdout is not None
        assert parent.stdin is not None
        zygote = int(parent.stdout.readline())
        pidfd = os.pidfd_open(zygote)
        try:
            assert select.select([pidfd], [], [], 0)[0] == []  # alive while its parent is
            parent.stdin.close()  # the parent exits without ever using it
            assert parent.wait() == 0
            assert select.select([pidfd], [], [], 60)[0] == [pidfd]
        finally:
            os.close(pidfd)


async def test_a_clone_and_a_scan_import_nothing_the_zygote_has_not(
    daemon: GitDaemon, tmp_path: Path
) -> None:
    """A worker is a fork of the zygote: a module first imported inside a job would be
    imported (with PYTHONDONTWRITEBYTECODE, compiled) again by every job."""
    import clonegate._adapters.analysis.analyzer
    import clonegate._adapters.git.dulwich_vcs  # noqa: F401  (each adds its preload)

    async with open_worker_pool() as pool:
        imported = await run_in_worker(
            pool,
            worker_jobs.modules_a_clone_and_a_scan_import,
            daemon.url("basic"),
            str(tmp_path / "clone"),
        )
    assert imported == []


def test_the_oom_baseline_is_read_again_only_when_older_than_its_bound(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Reading /proc/vmstat before each job cost an incremental re-run 9% of its parent's
    # CPU; a baseline a tenth of a second old is as good.
    from clonegate._adapters.workers import oom

    readings, now = iter([5, 7, 8]), [1000.0]
    reads: list[int] = []

    def read() -> int:
        reads.append(1)
        return next(readings)

    monkeypatch.setattr(oom, "_read", read)
    monkeypatch.setattr(oom, "monotonic", lambda: now[0])
    monkeypatch.setattr(oom, "_baseline", (0.0, None))
    assert oom.baseline() == 5
    now[0] = 1000.0 + oom.BASELINE_SECONDS / 2
    assert (oom.baseline(), len(reads)) == (5, 1)
    now[0] = 1000.0 + oom.BASELINE_SECONDS
    assert (oom.baseline(), len(reads)) == (7, 2)
    # A reading taken when a worker died is the next job's baseline: that job must
    # not count the kill that ended the other one.
    assert oom.kills() == 8
    assert (oom.baseline(), len(reads)) == (8, 3)


def test_every_grammar_the_parsers_import_is_in_the_zygotes_preload() -> None:
    # A served analysis worker builds the parsers and queries of the languages it meets
    # (ADR 0003); the grammars' modules must come from the zygote, or every fresh worker
    # would import (and, without bytecode, compile) them again.
    import ast
    import inspect

    from clonegate._adapters.analysis import syntax
    from clonegate._adapters.preloads import SCAN_MODULES

    tree = ast.parse(inspect.getsource(syntax))
    grammars = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
        if alias.name.startswith("tree_sitter_")
    }
    assert len(grammars) >= 6  # javascript, typescript (and tsx), go, java, kotlin, rust
    assert grammars <= set(SCAN_MODULES)


async def test_a_reply_too_large_to_pickle_under_the_allowance_is_a_memory_error() -> None:
    # The value fits, its pickle (a second copy) does not: the job ran out of memory,
    # which its caller must be able to tell from any other failure (issue 38).
    async with open_worker_pool() as pool:
        with pytest.raises(MemoryError, match="MemoryError"):
            await run_in_worker(pool, worker_jobs.bytes_of, 80 * MiB, memory_allowance=128 * MiB)


@pytest.mark.parametrize(
    ("signal_number", "peak_mib", "used_up"),
    [(11, 120, True), (6, 116, True), (11, 100, False), (9, 128, False), (None, 128, False)],
)
def test_a_crash_with_the_allowance_resident_is_the_allowance_used_up(
    signal_number: int | None, peak_mib: int, used_up: bool
) -> None:
    # tree-sitter crashes (SIGSEGV) when an allocation fails under RLIMIT_AS: at 90%
    # of the allowance resident or more, that is the allowance, not a parser's bug.
    status = signal_number if signal_number is not None else 70 << 8  # exit 70
    died = WorkerDied(status, peak_mib * MiB, allowance=128 * MiB)
    assert died.allowance_used_up is used_up
    assert ("memory allowance used up" in str(died)) is used_up
    assert not WorkerDied(status, peak_mib * MiB).allowance_used_up  # no allowance

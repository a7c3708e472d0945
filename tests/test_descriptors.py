"""Out of file descriptors (issue 38): ``ulimit -n 32`` with ``-j 16``.

Before: 0 of 32 reports in 60 s, tracebacks, clone directories left that no later
run removed. Each test runs clonegate in a subprocess whose RLIMIT_NOFILE is 32 (soft
and hard, as ``ulimit -n 32`` sets them), against 32 repositories served by git
daemon on 127.0.0.1. The bounded waits only turn a hang into a failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from clonegate._adapters.git.debris import remove_dead_runs
from clonegate._adapters.workers import open_worker_pool, run_in_worker

from .support import worker_jobs
from .support.repos import FixtureRepo, git
from .support.servers import GitDaemon, git_daemon

REPOSITORIES = 32


@pytest.fixture(scope="module")
def many(
    tmp_path_factory: pytest.TempPathFactory, repo_root: Path, repos: dict[str, FixtureRepo]
) -> Iterator[GitDaemon]:
    base = tmp_path_factory.mktemp("many")
    for i in range(REPOSITORIES):
        git("clone", "-q", "--bare", str(repo_root / "basic.git"), str(base / f"r{i}.git"))
    with git_daemon(base) as running:
        yield running


def _open_files(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def _urls(daemon: GitDaemon) -> list[str]:
    return [daemon.url(f"r{i}") for i in range(REPOSITORIES)]


def test_jobs_are_capped_to_the_open_file_limit(many: GitDaemon, tmpdir_env: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "-j", "16", *_urls(many)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmpdir_env)},
        preexec_fn=lambda: _open_files(32),
        timeout=180,  # a safety net: before, the run hung
        check=False,
    )
    reports = [json.loads(line) for line in run.stdout.splitlines()]
    assert run.returncode == 0, run.stderr
    assert sorted(r["index"] for r in reports) == list(range(REPOSITORIES))
    assert {r["status"] for r in reports} == {"ok"}
    assert "Traceback" not in run.stderr
    assert "warning: -j 16 is more clones than the open-file limit allows" in run.stderr
    assert list(tmpdir_env.iterdir()) == []


# The library has no cap of its own: this is the pool and the clean-up meeting EMFILE.
_LIBRARY_RUN = """
import json, sys, trio
from clonegate import open_analyzer, with_max_concurrent_clones

async def main():
    async with (
        open_analyzer(with_max_concurrent_clones(16)) as uc,
        uc.analyze_many(sys.argv[1:]) as batch,
    ):
        async for r in batch:
            kind = r.error.kind if r.error else None
            print(json.dumps([r.index, str(r.status), kind]), flush=True)

trio.run(main)
"""


def test_out_of_descriptors_is_never_a_hang(many: GitDaemon, tmpdir_env: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", _LIBRARY_RUN, *_urls(many)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmpdir_env)},
        preexec_fn=lambda: _open_files(32),
        timeout=180,  # a safety net: before, the pool waited forever for a fork
        check=False,
    )
    assert run.returncode == 0, run.stderr
    reports = [json.loads(line) for line in run.stdout.splitlines()]
    # Every repository reported: a fork that met EMFILE waited for a job to end.
    assert sorted(index for index, _, _ in reports) == list(range(REPOSITORIES))
    assert {status for _, status, _ in reports} == {"ok"}
    assert "Traceback" not in run.stderr
    # Every clone is removed, one listing at a time when out of descriptors, within a
    # bounded retry; on a machine so loaded that forks take every freed descriptor for
    # longer than that, a directory may stay: named for its owner, the next run's
    # sweep removes it (no more "clonegate-PID.None-…" that none would).
    remove_dead_runs(tmpdir_env)
    assert list(tmpdir_env.iterdir()) == []


async def test_a_zygote_out_of_descriptors_fails_the_fork_and_goes_on() -> None:
    """EMFILE in the zygote (socketpair, pidfd_open) was read as "the parent is gone":
    the zygote exited and the pool waited forever for the fork."""
    async with open_worker_pool() as pool:
        first = await run_in_worker(pool, worker_jobs.pid)  # the zygote is up
        zygote = pool.statistics().zygote_pid
        assert zygote is not None
        limits = resource.prlimit(zygote, resource.RLIMIT_NOFILE)
        in_use = set(map(int, os.listdir(f"/proc/{zygote}/fd")))
        lowest_free = min(set(range(len(in_use) + 1)) - in_use)
        resource.prlimit(zygote, resource.RLIMIT_NOFILE, (lowest_free, limits[1]))
        try:
            with trio.fail_after(60), pytest.raises(OSError, match="Too many open files"):
                await run_in_worker(pool, worker_jobs.pid)  # no job runs: none to wait for
        finally:
            resource.prlimit(zygote, resource.RLIMIT_NOFILE, limits)
        second = await run_in_worker(pool, worker_jobs.pid)  # the same zygote forks again
        assert pool.statistics().zygote_pid == zygote
    assert first != second


async def test_a_parent_out_of_descriptors_fails_the_fork_and_goes_on() -> None:
    """With no descriptor free here, the kernel drops the two a fork's answer carries:
    the fork fails with EMFILE, never waits for them."""
    async with open_worker_pool() as pool:
        await run_in_worker(pool, worker_jobs.pid)
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        taken: list[int] = []
        try:
            with contextlib.suppress(OSError):
                while True:  # every descriptor left
                    taken.append(os.open(os.devnull, os.O_RDONLY))
            with trio.fail_after(60), pytest.raises(OSError, match="Too many open files"):
                await run_in_worker(pool, worker_jobs.pid)
        finally:
            for fd in taken:
                os.close(fd)
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        assert await run_in_worker(pool, worker_jobs.pid) != os.getpid()

"""End to end through the CLI, under load and faults: the limit holds and nothing is lost.

These run the real command in a subprocess against real loopback servers; some take
tens of seconds, so they are marked ``slow`` (``pytest -m "not slow"`` skips them).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from bench.proctree import PeakTreeRSS

from .support.load import EXPECTED, build_served_tree, load_scenario
from .support.processes import worker_pids
from .support.proxy import ThrottlingProxy
from .support.repos import make_large_repo
from .support.server_programs import unavailable
from .support.servers import GitDaemon, git_daemon

pytestmark = pytest.mark.slow


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "tmp"
    path.mkdir()
    return path


def cli_env(work: Path) -> dict[str, str]:
    return {**os.environ, "TMPDIR": str(work)}


def run_cli(args: list[str], work: Path) -> tuple[int, str, int, float]:
    """Run ``clonegate analyze``; return exit code, stdout, peak tree RSS and wall time."""
    start = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "clonegate", "analyze", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(work),
    )
    with PeakTreeRSS(process.pid) as peak:
        stdout, _ = process.communicate(timeout=600)
    return process.returncode, stdout, peak.bytes, time.perf_counter() - start


def test_a_thousand_urls_with_ten_percent_bad(tmp_path: Path, work: Path) -> None:
    # The silent servers must end as timeouts and every healthy clone (tens of
    # milliseconds of work) as ok: a 3 s clone timeout, which starts once the clone's
    # worker is running, leaves a busy machine a wide margin.
    with load_scenario(tmp_path / "served", 1000) as scenario:
        listing = tmp_path / "urls.txt"
        listing.write_text("\n".join(scenario.urls) + "\n")
        code, stdout, peak, wall = run_cli(
            [
                *("--from-file", str(listing), "-j", "2", "--clone-timeout", "3"),
                *("--format", "json", "--breaker-cool-down", "0.5"),
            ],
            work,
        )
    document = json.loads(stdout)
    reports = document["repositories"]
    assert [r["index"] for r in reports] == list(range(1000))
    for report, kind in zip(reports, scenario.kinds, strict=True):
        status, error_kinds = EXPECTED[kind]
        assert report["status"] == status, report
        assert (report["error"] or {}).get("kind") in error_kinds, report
    summary = dict(document["summary"])
    # Only the refused port's URLs are tried again (issue 43); how long they waited is
    # drawn at random (backoff with jitter).
    assert 1 <= summary.pop("retried") <= 25
    assert summary.pop("retry_wait") > 0
    assert summary.pop("memory_budget") > 0  # MiB: a budget by default (issue 46)
    assert summary | {"elapsed": 0} == {
        "repositories": 1000,
        "ok": 900,
        "failed": 75,
        "timeout": 25,
        "cancelled": 0,
        "duplicates": 0,
        "reused": 0,
        "test_files": 0,
        "tests": 0,
        "unread_files": 0,
        "elapsed": 0,
    }
    assert code == 1
    assert list(work.iterdir()) == []
    print(f"\n1,000 URLs: {wall:.1f} s wall, peak RSS of the tree {peak / 2**20:.0f} MiB")


async def _read_reports(process: trio.Process, on_report: Any = None) -> list[dict[str, Any]]:
    assert process.stdout is not None
    reports, buffer = [], b""
    async for chunk in process.stdout:
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            reports.append(json.loads(line))
            if on_report is not None:
                on_report(reports)
    return reports


@pytest.fixture(scope="module")
def mid_repo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mid")
    make_large_repo(root, "mid", files=300, commits=5)
    for n in range(12):
        os.symlink("mid.git", root / f"copy{n:02}.git")
    return root


@pytest.mark.parametrize("limit", [2, 3, 1])
async def test_the_limit_seen_from_the_server(limit: int, mid_repo_root: Path, work: Path) -> None:
    count = 12
    with git_daemon(mid_repo_root) as daemon:
        # The server's answers flow only while `limit` clones are connected (or once the
        # last one has connected): if clonegate left a slot idle while repositories were
        # queued, the run would stall and fail at the bound below.
        proxy = ThrottlingProxy(daemon.port, rate=64 * 2**20, hold=(limit, count))
        async with trio.open_nursery() as nursery:
            await nursery.start(proxy.serve)
            urls = [f"git://127.0.0.1:{proxy.port}/copy{n:02}.git" for n in range(count)]
            with trio.fail_after(300):
                result = await trio.run_process(
                    [sys.executable, "-m", "clonegate", "analyze", "-j", str(limit), *urls],
                    capture_stdout=True,
                    capture_stderr=True,
                    env=cli_env(work),
                )
            nursery.cancel_scope.cancel()
    assert result.returncode == 0, result.stderr
    assert proxy.connections == count
    assert proxy.max_active == limit  # reached, never passed
    # FIFO, seen from the server: a slot is given back only after its clone's
    # connection closed, so when repository j sends its request, at least j - limit + 1
    # of the repositories before it have closed theirs.
    position = {f"/copy{n:02}.git": n for n in range(count)}
    closed: set[int] = set()
    for what, path in proxy.log:
        j = position[path]
        if what == "closed":
            closed.add(j)
        else:
            assert len({i for i in closed if i < j}) >= j - limit + 1, (j, proxy.log)
    assert closed == set(range(count))


async def test_killing_a_server_mid_run_fails_only_its_repositories(
    tmp_path: Path, work: Path, daemon: GitDaemon
) -> None:
    doomed_root = tmp_path / "doomed"
    doomed_root.mkdir()
    build_served_tree(doomed_root, 10)
    with git_daemon(doomed_root) as doomed:
        urls = []
        for n in range(10):
            urls.append(doomed.url(f"repo{n:05}"))
            urls.append(daemon.url("trunk" if n % 2 else "basic"))
        process = await trio.lowlevel.open_process(
            # A short cool-down: the dead server's breaker gives it up in 1.5 s, not 75.
            [
                sys.executable,
                "-m",
                "clonegate",
                "analyze",
                "-j",
                "2",
                "--breaker-cool-down",
                "0.1",
                *urls,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=cli_env(work),
        )

        def kill_after_four(reports: list[dict[str, Any]]) -> None:
            if len(reports) == 4:
                doomed.kill()

        reports = await _read_reports(process, kill_after_four)
        code = await process.wait()
    assert code == 1
    assert len(reports) == 20
    healthy = [r for r in reports if f":{daemon.port}/" in r["url"]]
    assert len(healthy) == 10
    assert all(r["status"] == "ok" for r in healthy)
    broken = [r for r in reports if f":{doomed.port}/" in r["url"] and r["status"] != "ok"]
    kinds = [r["error"]["kind"] for r in broken]
    # Clones started after the kill are refused (and retried until the host's breaker
    # gives it up); one caught in flight sees its server stop mid-answer, wherever the
    # stream ended (tests/test_hangups.py), and is retried too.
    lost = {"unreachable", "connection_lost", "host_unavailable"}
    assert set(kinds) <= lost, [r["error"] for r in broken]
    assert list(work.iterdir()) == []


async def test_sigkill_of_a_clone_worker_fails_that_repository_only(
    daemon: GitDaemon, work: Path
) -> None:
    proxy = ThrottlingProxy(daemon.port, rate=128 * 1024)
    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        urls = [f"git://127.0.0.1:{proxy.port}/big.git", daemon.url("basic"), daemon.url("trunk")]
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", "analyze", "-j", "1", *urls],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=cli_env(work),
        )
        await proxy.wait_forwarded(128 * 1024)
        (worker,) = worker_pids(process.pid)  # the one clone in flight
        os.kill(worker, signal.SIGKILL)
        reports = {r["index"]: r for r in await _read_reports(process)}
        code = await process.wait()
        nursery.cancel_scope.cancel()
    assert code == 1
    killed = reports[0]
    assert killed["status"] == "cancelled"
    assert killed["error"]["kind"] == "cancelled"
    assert "worker process died" in killed["error"]["message"]
    assert reports[1]["status"] == reports[2]["status"] == "ok"  # the slot came back
    assert list(work.iterdir()) == []


@contextlib.contextmanager
def mounted(*args: str) -> Iterator[None]:
    target = args[-1]
    result = subprocess.run(["mount", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        message = f"cannot mount ({result.stderr.strip()}): needs root"
        unavailable(message)
    try:
        yield
    finally:
        subprocess.run(["umount", target], check=False)


def test_full_or_read_only_work_directory(daemon: GitDaemon, tmp_path: Path) -> None:
    full, read_only, source = tmp_path / "full", tmp_path / "ro", tmp_path / "src"
    for d in (full, read_only, source):
        d.mkdir()
    urls = [daemon.url("big"), daemon.url("basic")]
    with mounted("-t", "tmpfs", "-o", "size=256k", "tmpfs", str(full)):
        code, stdout, _, _ = run_cli(urls, full)
        reports = {r["index"]: r for r in map(json.loads, stdout.splitlines())}
        assert code == 1
        assert reports[0]["error"]["kind"] == "storage"
        assert "No space left on device" in reports[0]["error"]["message"]
        assert reports[1]["status"] == "ok"  # a small clone still fits
        assert list(full.iterdir()) == []
    with mounted("--bind", "-o", "ro", str(source), str(read_only)):
        # tempfile would quietly fall back to /tmp from a read-only TMPDIR; --keep does not.
        code, stdout, _, _ = run_cli(["--keep", str(read_only), *urls], tmp_path)
        reports = {r["index"]: r for r in map(json.loads, stdout.splitlines())}
        assert code == 1
        for report in reports.values():
            assert report["error"]["kind"] == "storage"
            assert "Read-only file system" in report["error"]["message"]

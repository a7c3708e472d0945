"""Incremental runs against a real git daemon behind a proxy that records which
connections fetched a pack and which only listed refs (ADR 0016)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

import clonegate._adapters.analysis.analyzer as analyzer_module
from clonegate import (
    RepositoryReport,
    RepositoryStatus,
    with_incremental,
    with_max_concurrent_clones,
    with_result_store,
)
from clonegate._app import compose
from clonegate.store import SQLiteStore, open_store

from .support.proxy import ThrottlingProxy
from .support.repos import git, make_repo
from .support.servers import GitDaemon, git_daemon

REPOSITORIES = 20
CHANGED = (3, 11, 17)
TEST_FILE = "tests/test_feature.py"
ROOT = Path(__file__).resolve().parents[1]


def _tests(i: int, extra: str = "") -> bytes:
    body = "".join(f"def test_{i}_{k}():\n    assert {k}\n\n\n" for k in range(3))
    return f"import pytest\n\n\n{body}{extra}".encode()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, GitDaemon]]:
    root = tmp_path / "served"
    root.mkdir()
    for i in range(REPOSITORIES):
        make_repo(root, f"r{i}", commits=1, other_branches=(), files={TEST_FILE: _tests(i)})
    with git_daemon(root) as daemon:
        yield root, daemon


def _change(root: Path, i: int) -> str:
    """A new commit on r<i>'s HEAD branch, with one more test."""
    work = root / f"r{i}.work"
    (work / TEST_FILE).write_bytes(_tests(i, "def test_added():\n    pass\n"))
    git("commit", "-q", "-am", "one more test", cwd=work)
    git("push", "-q", str(root / f"r{i}.git"), "main", cwd=work)
    return git("rev-parse", "HEAD", cwd=work)


async def _run(store: SQLiteStore, urls: list[str], *, incremental: bool) -> list[RepositoryReport]:
    options = [with_max_concurrent_clones(2), with_result_store(store)]
    if incremental:
        options.append(with_incremental())
    async with compose(*options, pool=None).analyze_many(urls) as batch:
        reports = [report async for report in batch]
    return sorted(reports, key=lambda r: r.index)


def _fetched(proxy: ThrottlingProxy) -> Counter[str]:
    return Counter(path for event, path in proxy.log if event == "want")


async def test_an_incremental_run_fetches_only_the_changed_repositories(
    tmp_path: Path, served: tuple[Path, GitDaemon], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, daemon = served
    proxy = ThrottlingProxy(daemon.port, rate=1 << 30)
    async with trio.open_nursery() as nursery, open_store(tmp_path / "runs.db") as store:
        await nursery.start(proxy.serve)
        urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(REPOSITORIES)]

        first = await _run(store, urls, incremental=True)  # nothing stored yet: all run
        assert [r.status for r in first] == [RepositoryStatus.OK] * REPOSITORIES
        assert not any(r.reused for r in first)
        assert sum(_fetched(proxy).values()) == REPOSITORIES

        heads = {i: _change(root, i) for i in CHANGED}
        proxy.log.clear()
        second = await _run(store, urls, incremental=True)
        # Exactly the 3 changed repositories transferred a pack; the 17 others were
        # asked for their HEAD only (one listing each, no want).
        assert _fetched(proxy) == Counter(f"/r{i}.git" for i in CHANGED)
        listed = Counter(path for event, path in proxy.log if event == "request")
        assert listed == Counter({f"/r{i}.git": 2 if i in CHANGED else 1 for i in range(20)})
        for i, (before, after) in enumerate(zip(first, second, strict=True)):
            assert after.status is RepositoryStatus.OK
            if i in CHANGED:
                assert not after.reused
                assert after.ref is not None
                assert after.ref.commit == heads[i]
                assert after.analysis is not None
                assert after.analysis.tests == 4
            else:  # from the store: the stored inventory, totals and commit
                assert after.reused
                assert (after.ref, after.analysis) == (before.ref, before.analysis)
                assert after.inventory == before.inventory
                assert after.inventory is not None
                assert after.inventory.tests == 3

        # A new analyzer version trusts no stored result: everything runs again.
        monkeypatch.setattr(analyzer_module, "ANALYZER_VERSION", "clonegate-analyzer/test-bump")
        proxy.log.clear()
        third = await _run(store, urls, incremental=True)
        assert sum(_fetched(proxy).values()) == REPOSITORIES
        assert not any(r.reused for r in third)
        assert {r.analysis.analyzer_version for r in third if r.analysis} == {
            "clonegate-analyzer/test-bump"
        }
        nursery.cancel_scope.cancel()


async def test_without_incremental_every_repository_runs_and_is_stored(
    tmp_path: Path, served: tuple[Path, GitDaemon]
) -> None:
    _, daemon = served
    urls = [daemon.url(f"r{i}") for i in range(3)] + [daemon.url("r0"), "not a url"]
    async with open_store(tmp_path / "runs.db") as store:
        await _run(store, urls[:3], incremental=False)
        again = await _run(store, urls, incremental=False)
        assert not any(r.reused for r in again)
        latest, _ = await store.runs()
        assert latest.summary is not None
        assert latest.summary["repositories"] == 5
        assert latest.summary["duplicates"] == 1
        assert latest.summary["failed"] == 1
        stored = await store.reports(latest.id)
    assert [(r.index, r.status, r.duplicate_of) for r in stored] == [
        (r.index, r.status, r.duplicate_of) for r in again
    ]


async def test_a_remote_that_cannot_be_listed_fails_without_a_clone(
    tmp_path: Path, served: tuple[Path, GitDaemon]
) -> None:
    _, daemon = served
    async with open_store(tmp_path / "runs.db") as store:
        (report,) = await _run(store, [daemon.url("missing")], incremental=True)
    assert report.status is RepositoryStatus.FAILED
    assert report.error is not None
    assert report.error.kind == "not_found"


async def test_a_run_killed_midway_keeps_what_it_printed_and_the_next_run_completes(
    tmp_path: Path, served: tuple[Path, GitDaemon], tmpdir_env: Path
) -> None:
    _, daemon = served
    db = tmp_path / "runs.db"
    env = {**os.environ, "CLONEGATE_DB": str(db), "TMPDIR": str(tmpdir_env)}
    proxy = ThrottlingProxy(daemon.port, rate=4 * 1024)  # slow: the run is under way
    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(REPOSITORIES)]
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", "analyze", "--format", "jsonl", "-q", *urls],
            stdout=subprocess.PIPE,
            env=env,
            cwd=ROOT,
        )
        assert process.stdout is not None
        printed: list[dict[str, object]] = []
        buffer = b""
        while len(printed) < 3:
            chunk = await process.stdout.receive_some()
            assert chunk, "clonegate ended before printing 3 reports"
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            printed += [json.loads(line) for line in lines]
        process.kill()  # SIGKILL: no clean-up of any kind
        await process.wait()
        await process.stdout.aclose()
        db_check = sqlite3.connect(db)
        assert db_check.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        db_check.close()
        async with open_store(db) as store:
            (killed,) = await store.runs()
            stored = await store.reports(killed.id)
        assert killed.finished_at is None  # it never ended
        # A report reaches stdout only once it is stored: every printed one is there.
        assert {r["index"] for r in printed} <= {r.index for r in stored}
        # The next run completes, reusing what the killed run had stored.
        proxy.rate = 1 << 30
        done = await trio.run_process(
            [sys.executable, "-m", "clonegate", "analyze", "--incremental", "--format",
             "jsonl", "-q", *urls],
            capture_stdout=True, env=env, cwd=ROOT,
        )  # fmt: skip
        nursery.cancel_scope.cancel()
    reports = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert done.returncode == 0
    assert len(reports) == REPOSITORIES
    assert sum(r["reused"] for r in reports) == sum(r.status == "ok" for r in stored)
    async with open_store(db) as store:
        latest = (await store.runs())[0]
    assert latest.finished_at is not None
    assert list(tmpdir_env.iterdir()) == []  # no clone directory left behind by either


async def test_a_damaged_stored_result_is_run_again_and_the_others_are_reused(
    tmp_path: Path, served: tuple[Path, GitDaemon], tmpdir_env: Path
) -> None:
    # One report's document not JSON made the whole incremental run print nothing
    # (exit 1, an ExceptionGroup of 152 lines): now only that repository runs again.
    _, daemon = served
    db = tmp_path / "runs.db"
    env = {**os.environ, "CLONEGATE_DB": str(db), "TMPDIR": str(tmpdir_env)}
    proxy = ThrottlingProxy(daemon.port, rate=1 << 30)
    count, damaged = 10, 4

    async def analyze(urls: list[str]) -> tuple[list[dict[str, object]], str]:
        done = await trio.run_process(
            [sys.executable, "-m", "clonegate", "analyze", "--incremental", "--format",
             "jsonl", *urls],
            capture_stdout=True, capture_stderr=True, env=env, cwd=ROOT, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr.decode()
        reports = [json.loads(line) for line in done.stdout.decode().splitlines()]
        return sorted(reports, key=lambda r: int(str(r["index"]))), done.stderr.decode()

    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(count)]
        await analyze(urls)
        connection = sqlite3.connect(db)
        with connection:
            connection.execute(
                "UPDATE reports SET document = '{\"url\":' WHERE url = ?", (urls[damaged],)
            )
        connection.close()
        proxy.log.clear()
        again, stderr = await analyze(urls)
        # Every report printed; the damaged one cloned again, the others reused.
        assert len(again) == count
        assert [r["status"] for r in again] == ["ok"] * count
        assert [i for i, r in enumerate(again) if not r["reused"]] == [damaged]
        assert _fetched(proxy) == Counter({f"/r{damaged}.git": 1})
        assert f"the stored result of {urls[damaged]} is damaged (reports row" in stderr
        # Its new result is the one the next run reuses: nothing is cloned.
        proxy.log.clear()
        third, stderr = await analyze(urls)
        assert all(r["reused"] for r in third)
        assert sum(_fetched(proxy).values()) == 0
        assert "damaged" not in stderr
        nursery.cancel_scope.cancel()
    assert list(tmpdir_env.iterdir()) == []

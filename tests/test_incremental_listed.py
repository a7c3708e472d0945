"""An incremental run fed by a listing (ADR 0023): a repository whose forge id,
``pushed_at`` and default branch are what they were when its stored result was last
current is reused without a connection to its server; any other answer falls back to
listing its HEAD (ADR 0016). Real git daemon, behind a proxy that records each
connection; a real SQLite store."""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
import trio

from clonegate import (
    RepositoryReport,
    RepositoryStatus,
    with_incremental,
    with_max_concurrent_clones,
    with_result_store,
)
from clonegate._app import compose
from clonegate._domain.listed import Listed
from clonegate._domain.sources import Forge
from clonegate.store import SQLiteStore, open_store

from .support.inventories import KEY, report
from .support.proxy import ThrottlingProxy
from .support.repos import git, make_repo
from .support.servers import GitDaemon, git_daemon

COUNT = 9
PUSHED = datetime(2026, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)
TEST_FILE = "tests/test_feature.py"
PLUS_2 = timezone(timedelta(hours=2))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, GitDaemon]]:
    root = tmp_path / "served"
    root.mkdir()
    for i in range(COUNT):
        body = f"def test_{i}():\n    assert True\n".encode()
        make_repo(root, f"r{i}", commits=1, other_branches=(), files={TEST_FILE: body})
    with git_daemon(root) as daemon:
        yield root, daemon


def _listed(port: int, i: int, **changed: object) -> Listed:
    fields: dict[str, object] = {
        "full_name": f"acme/r{i}",
        "clone_url": f"git://127.0.0.1:{port}/r{i}.git",
        "forge_id": str(500 + i),
        "default_branch": "main",
        "stars": 10 * i,
        "pushed_at": PUSHED,
        "forge": Forge.GITHUB,
    }
    return Listed(**(fields | changed))  # type: ignore[arg-type]


async def _run(store: SQLiteStore, lines: list[Listed]) -> list[RepositoryReport]:
    options = [with_max_concurrent_clones(2), with_result_store(store), with_incremental()]
    async with compose(*options, pool=None).analyze_many(lines) as batch:
        reports = [report async for report in batch]
    return sorted(reports, key=lambda r: r.index)


def _requests(proxy: ThrottlingProxy) -> Counter[str]:
    return Counter(path for event, path in proxy.log if event == "request")


def _push(root: Path, i: int) -> None:
    work = root / f"r{i}.work"
    (work / "more.txt").write_text("pushed\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "a push", cwd=work)
    git("push", "-q", str(root / f"r{i}.git"), "main", cwd=work)


async def test_an_unmoved_pushed_at_is_reused_without_a_connection(
    tmp_path: Path, served: tuple[Path, GitDaemon]
) -> None:
    root, daemon = served
    proxy = ThrottlingProxy(daemon.port, rate=1 << 30)
    later = PUSHED + timedelta(hours=1)
    async with trio.open_nursery() as nursery, open_store(tmp_path / "runs.db") as store:
        await nursery.start(proxy.serve)
        port = proxy.port
        first = await _run(store, [_listed(port, i) for i in range(COUNT)])
        assert [r.status for r in first] == [RepositoryStatus.OK] * COUNT
        # Nothing stored yet: each HEAD listed, then each repository cloned.
        assert _requests(proxy) == Counter({f"/r{i}.git": 2 for i in range(COUNT)})

        _push(root, 1)
        lines = [
            _listed(port, 0),  # unchanged: no connection at all
            _listed(port, 1, pushed_at=later),  # pushed: HEAD listed, then cloned
            _listed(port, 2, pushed_at=later),  # pushed_at moved, HEAD did not
            _listed(port, 3, pushed_at=PUSHED - timedelta(microseconds=1)),  # moved back
            _listed(port, 4, pushed_at=None),  # not said
            _listed(port, 5, forge_id="9999"),  # another repository at that URL
            _listed(port, 6, default_branch="trunk"),  # the default branch changed
            _listed(port, 7, pushed_at=PUSHED.astimezone(PLUS_2)),  # the same instant
            _listed(port, 8, forge=Forge.GITLAB),  # its time is no push time: HEAD listed
        ]
        proxy.log.clear()
        before = proxy.connections
        second = await _run(store, lines)
        asked = {1: 2, 2: 1, 3: 1, 4: 1, 5: 1, 6: 1, 8: 1}  # HEAD listed; r1 cloned too
        assert _requests(proxy) == Counter({f"/r{i}.git": n for i, n in asked.items()})
        assert proxy.connections - before == sum(asked.values())  # none for r0 and r7
        assert [r.status for r in second] == [RepositoryStatus.OK] * COUNT
        assert [r.reused for r in second] == [True, False, *[True] * 7]
        assert second[0].ref == first[0].ref
        assert second[0].inventory == first[0].inventory
        assert second[0].listed == lines[0]  # this run's listing, not the stored one
        assert second[1].ref is not None
        assert second[1].ref != first[1].ref

        # Each result is current as of what this run's listing said: the same lines
        # again ask no server anything (but the three whose listing cannot say).
        proxy.log.clear()
        third = await _run(store, lines)
        assert _requests(proxy) == Counter({"/r4.git": 1, "/r6.git": 1, "/r8.git": 1})
        assert all(r.reused for r in third)
        assert third[1].ref == second[1].ref
        nursery.cancel_scope.cancel()


async def test_the_listing_is_kept_per_repository_per_run(
    tmp_path: Path, served: tuple[Path, GitDaemon]
) -> None:
    _, daemon = served
    db = tmp_path / "runs.db"
    async with open_store(db) as store:
        lines = [_listed(0, 0, clone_url=daemon.url("r0"))]
        reports = await _run(store, lines[:1])
        history = await store.history(daemon.url("r0"))
        exported = await store.reports(1, inventory=False)
    assert reports[0].listed == lines[0]
    assert exported[0].listed == lines[0]
    assert (history[0].forge_id, history[0].stars, history[0].pushed_at) == (
        "500",
        0,
        PUSHED.isoformat(),
    )
    connection = sqlite3.connect(db)
    row = connection.execute("SELECT forge, forge_id, pushed_at, stars FROM reports").fetchone()
    connection.close()
    assert row == ("github", "500", int(PUSHED.timestamp()) * 1_000_000 + 123456, 0)


async def test_the_store_answers_by_the_newest_success_and_never_guesses(
    tmp_path: Path,
) -> None:
    said = _listed(0, 0, clone_url="git://example.org/team/repo.git")
    async with open_store(tmp_path / "runs.db") as store:
        unlisted = await store.begin_run({})
        await store.save(unlisted, KEY, report())  # a URL line: nothing said then
        assert await store.reusable_listed(KEY, said, "v-test") is None
        run = await store.begin_run({})
        await store.save(run, KEY, replace(report(), listed=said))
        found = await store.reusable_listed(KEY, said, "v-test")
        assert found is not None
        assert found.inventory == report().inventory
        assert await store.reusable_listed(KEY, said, "v-other") is None
        # A newer success at another commit, said the same: the newest is trusted.
        newer = await store.begin_run({})
        await store.save(newer, KEY, replace(report(commit="b" * 40), listed=said))
        found = await store.reusable_listed(KEY, said, "v-test")
        assert found is not None
        assert found.ref is not None
        assert found.ref.commit == "b" * 40
        # A failure since says nothing of the content: the last success still stands.
        failed = RepositoryReport.failure(said.clone_url, 0, "clone", "timeout", "slow")
        await store.save(await store.begin_run({}), KEY, replace(failed, listed=said))
        assert await store.reusable_listed(KEY, said, "v-test") is not None
    # An edited row (text where the time was) is no match, never an error.
    connection = sqlite3.connect(tmp_path / "runs.db")
    with connection:
        connection.execute("UPDATE reports SET pushed_at = 'soon' WHERE status = 'ok'")
    connection.close()
    async with open_store(tmp_path / "runs.db") as store:
        assert await store.reusable_listed(KEY, said, "v-test") is None

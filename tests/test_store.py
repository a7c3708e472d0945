"""The SQLite result store on real files: schema and migrations, concurrent saves, the
analysis cache's bound, and what a read-only or full disk does (ADR 0016)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import (
    Inventory,
    TestCase,
)
from clonegate._adapters.store.rows import insert_report
from clonegate._adapters.store.schema import MIGRATIONS, migrate
from clonegate.store import StoredResult, StoreError, open_store

from .support.disks import mount, small_disk
from .support.inventories import INVENTORY, KEY, report

__all__ = ["small_disk"]  # a fixture, used by name


async def test_a_new_store_has_the_whole_schema_in_wal_mode(tmp_path: Path) -> None:
    async with open_store(tmp_path / "s.db"):
        pass
    db = sqlite3.connect(tmp_path / "s.db")
    assert db.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {
        "runs",
        "reports",
        "files",
        "suites",
        "tests",
        "scan_errors",
        "analysis_cache",
    } <= tables


async def test_a_report_comes_back_equal_with_its_whole_inventory(tmp_path: Path) -> None:
    async with open_store(tmp_path / "s.db") as store:
        run = await store.begin_run({"clone_depth": 1})
        await store.save(run, KEY, report())
        await store.finish_run(run)
        assert await store.load(run, KEY) == report()
        assert (await store.last_result(KEY)) is not None
        (info,) = await store.runs()
    assert info.id == run
    assert info.options == {"clone_depth": 1}
    assert info.finished_at
    assert info.summary is not None
    assert (info.summary["ok"], info.summary["tests"]) == (1, 5)


async def test_the_reusable_report_is_the_last_results_in_one_read(tmp_path: Path) -> None:
    async with open_store(tmp_path / "s.db") as store:
        older = await store.begin_run({})
        await store.save(older, KEY, report(commit="b" * 40))
        newer = await store.begin_run({})
        await store.save(newer, KEY, report())
        # A reused report is not a result of its own: the last result stays newer's.
        await store.save(await store.begin_run({}), KEY, replace(report(), reused=True))
        assert await store.last_result(KEY) == StoredResult(newer, "a" * 40, "v-test")
        assert await store.reusable(KEY, "a" * 40, "v-test") == report()
        assert await store.reusable(KEY, "b" * 40, "v-test") is None  # not the last one
        assert await store.reusable(KEY, "a" * 40, "v-other") is None
        assert await store.reusable(KEY + "-other", "a" * 40, "v-test") is None


async def test_what_a_clone_used_is_found_by_repository_and_depth(tmp_path: Path) -> None:
    # ADR 0014: a memory budget starts from the last measured clone of the same
    # repository at the same depth; a reused report (no clone) does not hide it.
    measured = replace(report(), clone_memory=40 << 20)
    async with open_store(tmp_path / "s.db") as store:
        shallow, full = await store.begin_run({"clone_depth": 1}), await store.begin_run({})
        await store.save(shallow, KEY, measured)
        await store.save(full, KEY, replace(measured, clone_memory=90 << 20))
        await store.save(full, "git://example.org/other", replace(measured, index=1))
        assert await store.clone_memory(KEY, 1) == 40 << 20
        again = await store.begin_run({"clone_depth": 1})
        await store.save(again, KEY, replace(measured, clone_memory=50 << 20))
        assert await store.clone_memory(KEY, 1) == 50 << 20  # the newest
        # Later rows that are no clone of their own do not count, whatever they say.
        later = await store.begin_run({"clone_depth": 1})
        await store.save(later, KEY, replace(measured, reused=True, clone_memory=1))
        await store.save(later, KEY, replace(measured, index=1, duplicate_of=0, clone_memory=1))
        assert await store.load(shallow, KEY) == measured
        assert await store.clone_memory(KEY, 1) == 50 << 20
        assert await store.clone_memory(KEY, None) == 90 << 20  # {} has no depth: full
        assert await store.clone_memory(KEY, 5) is None
        assert await store.clone_memory("git://example.org/nothing", 1) is None


async def test_a_database_of_the_previous_schema_is_migrated_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = sqlite3.connect(path, isolation_level=None)
    migrate(old, upto=len(MIGRATIONS) - 1)  # what the previous clonegate made
    # The previous clonegate's rows: written by today's code into a scratch database,
    # then copied column by column into the tables the previous schema has.
    scratch = sqlite3.connect(tmp_path / "scratch.db", isolation_level=None)
    migrate(scratch)
    scratch.execute("INSERT INTO runs (started_at, options) VALUES ('2025-01-01T00:00:00', '{}')")
    insert_report(scratch, 1, KEY, report())
    scratch.close()
    old.execute("ATTACH ? AS scratch", (str(tmp_path / "scratch.db"),))
    old.execute("BEGIN")
    tables = old.execute("SELECT name FROM main.sqlite_master WHERE type = 'table'").fetchall()
    for (table,) in tables:
        columns = ", ".join(row[1] for row in old.execute(f"PRAGMA main.table_info({table})"))
        old.execute(f"INSERT INTO main.{table} ({columns}) SELECT {columns} FROM scratch.{table}")
    # The previous clonegate's documents had no clone_memory either.
    old.execute("UPDATE main.reports SET document = json_remove(document, '$.clone_memory')")
    old.execute("COMMIT")
    old.close()
    async with open_store(path) as store:
        assert await store.load(1, KEY) == report()  # kept through the migration
        assert await store.clone_memory(KEY, None) is None  # none measured before
        run = await store.begin_run({"clone_depth": None})  # the new column works
        await store.save(run, KEY, replace(report(), clone_memory=7))
        assert await store.clone_memory(KEY, None) == 7
        await store.keep({b"k" * 20: b"value"})  # and the cache
        assert await store.lookup([b"k" * 20]) == {b"k" * 20: b"value"}
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)


async def test_a_reused_report_shares_the_stored_inventory(tmp_path: Path) -> None:
    # ADR 0016: a re-run reports most repositories from the store; copying each one's
    # inventory into every run would make the store grow by a whole inventory per run.
    path = tmp_path / "s.db"
    reused = replace(report(), reused=True)
    async with open_store(path) as store:
        first = await store.begin_run({})
        await store.save(first, KEY, report())
        runs = [await store.begin_run({}) for _ in range(2)]
        for run in runs:
            await store.save(run, KEY, reused)
        for run in runs:
            assert await store.load(run, KEY) == reused
            assert await store.reports(run, inventory=True) == [replace(reused, index=0)]
        assert await store.diff(first, runs[1]) == []
        # The first run's report written again (a retried write) keeps the rows the
        # others share.
        await store.save(first, KEY, report())
        assert await store.load(runs[1], KEY) == reused
        # A reused report whose inventory is not the stored one's gets rows of its own.
        other = replace(reused, inventory=Inventory(files=INVENTORY.files[:1]))
        await store.save(runs[0], KEY, other)
        assert await store.load(runs[0], KEY) == other
    db = sqlite3.connect(path)
    (tests,) = db.execute("SELECT count(*) FROM tests").fetchone()
    # The first report's rows (kept for the runs that share them), its rewrite's, other's.
    assert tests == 5 + 5 + 4


async def test_a_database_from_a_newer_clonegate_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    sqlite3.connect(path).execute(f"PRAGMA user_version = {len(MIGRATIONS) + 1}")
    with pytest.raises(StoreError, match="newer than this clonegate"):
        async with open_store(path):
            pass


async def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not sqlite\n" * 100)
    with pytest.raises(StoreError, match=r"notes\.txt"):
        async with open_store(path):
            pass
    with pytest.raises(StoreError, match="no result store"):
        async with open_store(tmp_path / "missing.db", create=False):
            pass


async def test_concurrent_saves_from_a_batch_all_land_with_no_lock_error(tmp_path: Path) -> None:
    async with open_store(tmp_path / "s.db") as store:
        run = await store.begin_run({})
        async with trio.open_nursery() as nursery:
            for i in range(300):
                nursery.start_soon(store.save, run, f"{KEY}{i}", report(i))
        await store.finish_run(run)
        stored = await store.reports(run, inventory=True)
    assert [r.index for r in stored] == list(range(300))
    assert all(r.inventory == INVENTORY for r in stored)


@contextmanager
def _lock_held_elsewhere(path: Path) -> Iterator[Callable[[], None]]:
    """Another process holds ``path``'s write lock until the function yielded is called."""
    script = (
        "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "db.execute('BEGIN IMMEDIATE'); print('locked', flush=True); sys.stdin.readline(); "
        "db.execute('COMMIT')"
    )
    command = [sys.executable, "-c", script, str(path)]
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as p:
        assert p.stdout is not None
        assert p.stdin is not None
        assert p.stdout.readline() == "locked\n"

        def release() -> None:
            assert p.stdin is not None
            p.stdin.write("\n")
            p.stdin.flush()

        yield release
        assert p.wait() == 0


async def test_two_processes_writing_one_store_wait_for_each_other(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with open_store(path) as store:
        run = await store.begin_run({})
    # Another process holds the write lock for a while: saves wait, then land.
    with _lock_held_elsewhere(path) as release:
        async with open_store(path) as store, trio.open_nursery() as nursery:
            for i in range(20):
                nursery.start_soon(store.save, run, f"{KEY}{i}", report(i))
            await trio.testing.wait_all_tasks_blocked()
            release()
    async with open_store(path) as store:
        assert len(await store.reports(run)) == 20


async def test_the_cache_stays_within_its_bound_evicting_the_least_recently_used(
    tmp_path: Path,
) -> None:
    value = b"v" * 1000
    async with open_store(tmp_path / "s.db", cache_limit=10_000) as store:
        for i in range(8):
            await store.keep({bytes([i]) * 20: value})
        assert len(await store.lookup([bytes([0]) * 20])) == 1  # 0 is used again: recent
        for i in range(8, 12):
            await store.keep({bytes([i]) * 20: value})
        kept = await store.lookup([bytes([i]) * 20 for i in range(12)])
    size = sum(len(k) + len(v) for k, v in kept.items())
    assert size <= 10_000
    assert bytes([0]) * 20 in kept  # used recently: kept
    assert bytes([1]) * 20 not in kept  # the least recently used: gone first
    assert bytes([11]) * 20 in kept


async def test_a_full_disk_is_a_clear_error_and_loses_no_report_written(small_disk: Path) -> None:
    path = small_disk / "s.db"
    written = 0

    async def fill() -> int:
        nonlocal written
        async with open_store(path) as store:
            run = await store.begin_run({})
            while True:  # each report's inventory takes a few KiB: the disk fills
                await store.save(run, f"{KEY}{written}", report(written))
                written += 1

    with pytest.raises(StoreError, match="full"):
        await fill()
    run = 1
    assert written > 10
    # Every save that returned is there, whole, once the disk has room again.
    mount("-o", "remount,size=8m", str(small_disk))
    async with open_store(path) as store:
        stored = await store.reports(run, inventory=True)
    assert [r.index for r in stored] == list(range(written))
    assert all(r.inventory == INVENTORY for r in stored)
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)


async def test_a_read_only_store_is_a_clear_error_and_keeps_what_it_had(small_disk: Path) -> None:
    path = small_disk / "s.db"
    async with open_store(path) as store:
        run = await store.begin_run({})
        await store.save(run, KEY, report(0))
    mount("-o", "remount,ro", str(small_disk))
    try:
        with pytest.raises(StoreError, match=r"s\.db is on a read-only file system"):
            async with open_store(path):
                pass
    finally:
        mount("-o", "remount,rw", str(small_disk))
    async with open_store(path) as store:
        assert [r.index for r in await store.reports(run, inventory=True)] == [0]
        assert await store.load(run, KEY) == report(0)


async def test_diff_lists_changed_repositories_with_tests_added_and_removed(tmp_path: Path) -> None:
    changed = replace(
        INVENTORY,
        files=(
            replace(INVENTORY.files[0], tests=(TestCase("test_top", 1), TestCase("test_new", 30))),
            INVENTORY.files[1],
        ),
    )
    async with open_store(tmp_path / "s.db") as store:
        a = await store.begin_run({})
        await store.save(a, KEY, report(0))
        await store.save(a, KEY + "/same", replace(report(1), url="git://example.org/same"))
        b = await store.begin_run({})
        await store.save(b, KEY, report(0, commit="b" * 40, inventory=changed))
        await store.save(b, KEY + "/same", replace(report(1), url="git://example.org/same"))
        (change,) = await store.diff(a, b)
    assert change.key == KEY
    assert (change.commit_a, change.commit_b) == ("a" * 40, "b" * 40)
    assert change.added == {"tests/test_a.py": ["test_new"]}
    assert change.removed == {"tests/test_a.py": ["test_top"]}  # the xfail twin

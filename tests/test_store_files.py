"""Where the store's file is: a read-only mount, a device, a missing directory, a run
that is not there. Real files and real mounts (ADR 0016)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from clonegate._adapters.store.schema import MIGRATIONS, migrate
from clonegate.store import StoreError, open_store, open_store_reader
from clonegate_cli.app import app

from .support.disks import mount, small_disk
from .support.inventories import KEY
from .support.server_programs import unavailable
from .support.stored_runs import save_two_runs

__all__ = ["small_disk"]  # a fixture, used by name

READING = [
    ["runs"],
    ["history", KEY],
    ["diff", "1", "latest"],
    ["export", "latest", "--format", "csv", "--tests"],
    ["check"],
]


def test_every_reading_command_works_on_a_read_only_mount(small_disk: Path) -> None:
    db = small_disk / "s.db"
    save_two_runs(db)  # closed cleanly: no write-ahead log left
    runner = CliRunner()
    expected = {name: runner.invoke(app, [name, *args, "--db", str(db)]) for name, *args in READING}
    for empty in ("s.db-wal", "s.db-shm"):  # as a cleanly closed store leaves none
        (small_disk / empty).unlink()
    mount("-o", "remount,ro", str(small_disk))
    try:
        for name, *args in READING:
            result = runner.invoke(app, [name, *args, "--db", str(db)])
            assert result.exit_code == expected[name].exit_code == 0, (name, result.output)
            assert result.stdout == expected[name].stdout, name
    finally:
        mount("-o", "remount,rw", str(small_disk))
    assert sorted(p.name for p in small_disk.iterdir()) == ["s.db"]


def _crash_mid_run(db: Path) -> None:
    """A third run, begun by a process that dies before the store is closed: it is in
    the write-ahead log only, never merged into the file."""
    script = (
        "import os, sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
        "db.execute(\"INSERT INTO runs (started_at, options) VALUES ('then', '{}')\"); "
        "os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", script, str(db)], check=True)
    assert (db.parent / "s.db-wal").stat().st_size > 0


def test_a_read_only_mount_with_an_unmerged_log_reads_the_log_or_says_why_not(
    small_disk: Path,
) -> None:
    db = small_disk / "s.db"
    save_two_runs(db)
    _crash_mid_run(db)
    runner = CliRunner()
    mount("-o", "remount,ro", str(small_disk))
    try:
        # The log and its index are there: SQLite reads both, run 3 included
        # (opening the file immutable would have missed it).
        runs = runner.invoke(app, ["runs", "--db", str(db)])
        assert runs.exit_code == 0, runs.output
        assert [line.split()[0] for line in runs.stdout.splitlines()[3:6]] == ["3", "2", "1"]
    finally:
        mount("-o", "remount,rw", str(small_disk))
    (small_disk / "s.db-shm").unlink()  # the log's index gone: SQLite cannot read it there
    mount("-o", "remount,ro", str(small_disk))
    try:
        runs = runner.invoke(app, ["runs", "--db", str(db)])
    finally:
        mount("-o", "remount,rw", str(small_disk))
    assert runs.exit_code == 4
    assert f"its write-ahead log {db}-wal was never merged" in runs.stderr


def test_an_older_schema_on_a_read_only_mount_is_a_clear_error(small_disk: Path) -> None:
    db = small_disk / "s.db"
    save_two_runs(db)
    connection = sqlite3.connect(db)
    connection.execute("PRAGMA user_version = 3")
    connection.close()
    mount("-o", "remount,ro", str(small_disk))
    try:
        result = CliRunner().invoke(app, ["runs", "--db", str(db)])
    finally:
        mount("-o", "remount,rw", str(small_disk))
    assert result.exit_code == 4
    assert f"has schema version 3, older than this clonegate's {len(MIGRATIONS)}" in result.stderr


@pytest.mark.parametrize("command", [["runs"], ["analyze", "git://127.0.0.1:9/x"]])
def test_a_device_is_not_a_store(command: list[str]) -> None:
    # SQLite said "cannot rollback - no transaction is active" for /dev/full.
    result = CliRunner().invoke(app, [*command, "--db", "/dev/full"])
    assert result.exit_code == 4
    assert result.stderr == (
        "clonegate: error: the result store /dev/full is not a regular file "
        "(a result store is an SQLite file)\n"
    )


def test_a_store_in_a_missing_directory_says_which(tmp_path: Path) -> None:
    # SQLite said "unable to open database file".
    db = tmp_path / "nowhere" / "s.db"
    result = CliRunner().invoke(app, ["analyze", "--db", str(db), "git://127.0.0.1:9/x"])
    assert result.exit_code == 4
    assert result.stderr == (
        f"clonegate: error: cannot create the result store {db}: the directory "
        f"{db.parent} does not exist\n"
    )
    reading = CliRunner().invoke(app, ["runs", "--db", str(db)])
    assert (reading.exit_code, reading.stderr) == (
        4,
        f"clonegate: error: no result store at {db}\n",
    )
    directory = CliRunner().invoke(app, ["runs", "--db", str(tmp_path)])
    assert "is a directory: give the path of a file" in directory.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["diff", "1", "99"], "there is no run 99 in the result store"),
        (["diff", "99", "1"], "there is no run 99 in the result store"),
        (["export", "42"], "there is no run 42 in the result store"),
        (["export", "seven"], "'seven' is not a run id (a number, or 'latest')"),
    ],
)
def test_a_run_that_is_not_there_is_a_usage_error_naming_it(
    tmp_path: Path, args: list[str], message: str
) -> None:
    # diff listed every test as removed and export wrote nothing, both with exit 0.
    db = tmp_path / "s.db"
    save_two_runs(db)
    result = CliRunner().invoke(app, [*args, "--db", str(db)])
    assert (result.exit_code, result.stdout) == (2, "")
    assert message in result.stderr


def test_latest_in_a_store_with_no_runs_is_a_usage_error(tmp_path: Path) -> None:
    db = tmp_path / "s.db"

    async def create() -> None:
        async with open_store(db):
            pass

    trio.run(create)
    result = CliRunner().invoke(app, ["export", "latest", "--db", str(db)])
    assert result.exit_code == 2
    assert f"the result store {db} has no runs: 'latest' names none" in result.stderr


def test_reading_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    save_two_runs(db)
    before = db.read_bytes()
    for name, *args in READING:
        assert CliRunner().invoke(app, [name, *args, "--db", str(db)]).exit_code == 0
    assert db.read_bytes() == before
    # SQLite keeps its log's files beside a WAL database it reads; nothing in them.
    assert (tmp_path / "s.db-wal").stat().st_size == 0


def test_an_older_schema_where_it_can_be_written_is_brought_up_to_date(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    connection = sqlite3.connect(db, isolation_level=None)
    migrate(connection, upto=len(MIGRATIONS) - 1)
    connection.close()
    result = CliRunner().invoke(app, ["runs", "--db", str(db)])
    assert result.exit_code == 0, result.output
    connection = sqlite3.connect(db)
    assert connection.execute("PRAGMA user_version").fetchone() == (len(MIGRATIONS),)
    connection.close()


def test_a_database_that_is_no_store_is_not_made_one_by_reading_it(tmp_path: Path) -> None:
    db = tmp_path / "other.db"
    sqlite3.connect(db).execute("CREATE TABLE t (x)").connection.close()
    result = CliRunner().invoke(app, ["runs", "--db", str(db)])
    assert result.exit_code == 4
    assert f"{db} is not a clonegate result store" in result.stderr
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone() == (0,)


@pytest.fixture
def read_only_view(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """(a writable directory, a read-only bind mount of it): one file seen through a
    mount that cannot write it while another can (root and mount(8) needed)."""
    writable, view = tmp_path / "writable", tmp_path / "view"
    writable.mkdir()
    view.mkdir()
    done = subprocess.run(["mount", "--bind", str(writable), str(view)], capture_output=True)
    if done.returncode != 0:
        message = f"cannot bind-mount: {done.stderr.decode().strip()}"
        unavailable(message)
    try:
        mount("-o", "remount,bind,ro", str(view))
        yield writable, view
    finally:
        subprocess.run(["umount", "-l", str(view)], check=True)


def test_a_store_written_under_a_read_only_reader_is_an_error_not_a_mix(
    read_only_view: tuple[Path, Path],
) -> None:
    # Read through the read-only mount, the file is opened immutable (no locks, no
    # check for changes); a run writing it through the other mount then merges its
    # log into the file under the reader. Its reads must not go on as if nothing did.
    writable, view = read_only_view
    save_two_runs(writable / "s.db")
    for left in ("s.db-wal", "s.db-shm"):  # as a cleanly closed store leaves none
        (writable / left).unlink(missing_ok=True)

    async def read_while_written() -> tuple[int, str]:
        async with open_store_reader(view / "s.db") as reader:
            before = len(await reader.runs())
            writer = sqlite3.connect(writable / "s.db", isolation_level=None)
            try:
                for _ in range(100):
                    writer.execute("INSERT INTO runs (started_at, options) VALUES ('x', '{}')")
                writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            finally:
                writer.close()
            with pytest.raises(StoreError) as raised:
                await reader.runs()
            return before, str(raised.value)

    before, message = trio.run(read_while_written)
    assert before == 2
    assert message == (
        f"the result store {view / 's.db'} changed while it was read: on a read-only "
        "mount it is read without locks, and something writes it through another mount "
        "(a run?); read it again once that is done"
    )

"""A store with one damaged row, damaged by hand in each table as anyone may: the
reading commands name the row and go on, `check` lists it, the library raises
DamagedRowError for it and nothing else (ADR 0016)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner, Result

from clonegate import RepositoryReport
from clonegate.store import DamagedRow, DamagedRowError, open_store, open_store_reader
from clonegate_cli.app import app

from .support.inventories import INVENTORY, KEY, report
from .support.stored_runs import HOSTILE, save_two_runs

NOT_UTF8 = "CAST(x'ff41' AS TEXT)"
# Run 1 holds reports 1 (KEY) and 2 (HOSTILE); run 2 reports 3 (KEY, a new commit,
# one test changed) and 4 (HOSTILE, failed). Damage is done to run 2.
#   (what, statement, the row named, the commands that read it)
CASES = [
    ("document not JSON", "UPDATE reports SET document = '{\"url\":' WHERE id = 3",
     "reports row 3", {"diff", "export", "export --tests"}),
    ("document not an object", "UPDATE reports SET document = '[1, 2]' WHERE id = 3",
     "reports row 3", {"diff", "export", "export --tests"}),
    ("document deeply nested", f"UPDATE reports SET document = '{'[' * 100_000}' WHERE id = 3",
     "reports row 3", {"diff", "export", "export --tests"}),
    ("document not UTF-8", f"UPDATE reports SET document = {NOT_UTF8} WHERE id = 3",
     "reports row 3", {"diff", "export", "export --tests"}),
    ("runs.options not JSON", "UPDATE runs SET options = '{' WHERE id = 2",
     "runs row 2", {"runs"}),
    ("runs.summary not an object", "UPDATE runs SET summary = '7' WHERE id = 2",
     "runs row 2", {"runs"}),
    ("runs.started_at not UTF-8", f"UPDATE runs SET started_at = {NOT_UTF8} WHERE id = 2",
     "runs row 2", {"runs", "history"}),
    ("a column not UTF-8", f"UPDATE reports SET commit_id = {NOT_UTF8} WHERE id = 3",
     "reports row 3", {"history", "diff"}),
    ("a test status no clonegate wrote", "UPDATE tests SET status = 'bogus' WHERE report_id = 3",
     "reports row 3", {"diff", "export --tests"}),
    ("a suite name not UTF-8", f"UPDATE suites SET name = {NOT_UTF8} WHERE report_id = 3",
     "reports row 3", {"diff", "export --tests"}),
    ("a file path not UTF-8", f"UPDATE files SET path = {NOT_UTF8} WHERE report_id = 3",
     "reports row 3", {"diff", "export --tests"}),
    ("a scan error not UTF-8", f"UPDATE scan_errors SET message = {NOT_UTF8} WHERE report_id = 3",
     "reports row 3", {"diff", "export --tests"}),
]  # fmt: skip

COMMANDS = {
    "runs": ["runs"],
    "history": ["history", KEY],
    "diff": ["diff", "1", "2"],
    "export": ["export", "2"],
    "export --tests": ["export", "2", "--tests", "--format", "csv"],
}


def _damaged(tmp_path: Path, statement: str) -> Path:
    path = tmp_path / "s.db"
    save_two_runs(path)
    db = sqlite3.connect(path)
    with db:
        assert db.execute(statement).rowcount >= 1
    db.close()
    return path


def _invoke(runner: CliRunner, args: list[str], db: Path) -> Result:
    result = runner.invoke(app, [*args, "--db", str(db)])
    # Never a traceback: an exit status, with what could be read written.
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


@pytest.mark.parametrize(("what", "statement", "row", "readers"), CASES, ids=[c[0] for c in CASES])
def test_a_damaged_row_is_named_and_the_rest_is_written(
    tmp_path: Path, what: str, statement: str, row: str, readers: set[str]
) -> None:
    runner = CliRunner()  # stdout and stderr apart
    db = _damaged(tmp_path, statement)
    for name, args in COMMANDS.items():
        result = _invoke(runner, args, db)
        if name in readers:
            assert result.exit_code == 1, (name, result.output)
            assert f"left out a damaged row of {db}: {row}" in result.stderr, name
        else:
            assert (result.exit_code, result.stderr) == (0, ""), (name, result.output)
    check = _invoke(runner, ["check"], db)
    assert check.exit_code == 1
    assert check.stdout.startswith(f"{row}: ")
    assert check.stderr == f"clonegate: 1 damaged row in {db}\n"


def test_what_is_left_of_a_run_with_a_damaged_report_is_written(tmp_path: Path) -> None:
    runner = CliRunner()
    db = _damaged(tmp_path, CASES[0][1])
    export = _invoke(runner, ["export", "2"], db)
    # The other repository's report, whole; the damaged one named on stderr.
    assert [json.loads(line)["url"] for line in export.stdout.splitlines()] == [HOSTILE]
    diff = _invoke(runner, ["diff", "1", "2"], db)
    # Its repository is left out of the comparison, not shown as removed.
    assert diff.stdout.startswith("git://example.org/team/repo\\x1b[31mred: ok -> failed")
    assert "team/repo.git" not in diff.stdout


def test_a_run_with_damaged_options_is_left_out_of_runs_only(tmp_path: Path) -> None:
    runner = CliRunner()
    db = _damaged(tmp_path, "UPDATE runs SET options = 'x' WHERE id = 2")
    runs = _invoke(runner, ["runs"], db)
    listed = [line.split()[0] for line in runs.stdout.splitlines() if line.strip()[:1].isdigit()]
    assert (runs.exit_code, listed) == (1, ["1"])
    # It is still a run: its reports are exported.
    assert _invoke(runner, ["export", "latest"], db).exit_code == 0


def test_a_clean_store_checks_clean(tmp_path: Path) -> None:
    runner = CliRunner()
    db = tmp_path / "s.db"
    save_two_runs(db)
    check = _invoke(runner, ["check"], db)
    assert (check.exit_code, check.stdout) == (0, "")
    assert check.stderr == f"clonegate: no damaged rows in {db}\n"


def test_check_finds_inventory_rows_that_went_missing(tmp_path: Path) -> None:
    runner = CliRunner()
    db = _damaged(tmp_path, "DELETE FROM tests WHERE report_id = 3 AND file_no = 0 AND test_no = 0")
    check = _invoke(runner, ["check"], db)
    assert check.exit_code == 1
    assert check.stdout.startswith("reports row 3: ValueError: its inventory rows hold (2, 3)")


def test_the_library_raises_damaged_row_error_or_collects_the_damage(tmp_path: Path) -> None:
    db = _damaged(tmp_path, CASES[0][1])

    async def read() -> None:
        async with open_store_reader(db) as reader:
            with pytest.raises(DamagedRowError, match="reports row 3: JSONDecodeError") as raised:
                await reader.reports(2)
            assert (raised.value.damage.table, raised.value.damage.row) == ("reports", 3)
            damaged: list[DamagedRow] = []
            assert [r.url for r in await reader.reports(2, damaged=damaged)] == [HOSTILE]
            assert [str(d).split(":")[0] for d in damaged] == ["reports row 3"]
        async with open_store(db) as store:  # the writing store reads the same way
            with pytest.raises(DamagedRowError):
                await store.load(2, KEY)

    trio.run(read)


def test_a_memory_budget_reads_past_damaged_run_options(tmp_path: Path) -> None:
    # clone_memory filters runs by their options' clone depth: SQLite's json_extract
    # raised "malformed JSON" for the whole query on one damaged row.
    db = _damaged(tmp_path, "UPDATE runs SET options = '{' WHERE id = 2")
    connection = sqlite3.connect(db)
    with connection:  # the damaged run's clone measured too: its row must be passed over
        connection.execute("UPDATE reports SET clone_memory = 5 WHERE id = 1")
        connection.execute("UPDATE reports SET clone_memory = 7 WHERE id = 3")
    connection.close()

    async def read() -> int | None:
        async with open_store(db) as store:
            return await store.clone_memory("git://example.org/team/repo", 1)

    assert trio.run(read) == 5


def test_reading_a_damaged_store_opens_it_read_only(tmp_path: Path) -> None:
    db = _damaged(tmp_path, CASES[0][1])
    before = db.read_bytes()
    _invoke(CliRunner(), ["check"], db)
    trio.run(_read_all, db)
    assert db.read_bytes() == before


async def _read_all(db: Path) -> None:
    async with open_store_reader(db) as reader:
        await reader.runs(damaged=[])


@pytest.mark.parametrize("value", ["'much'", NOT_UTF8])
def test_a_damaged_clone_memory_figure_is_no_hint_and_no_error(tmp_path: Path, value: str) -> None:
    db = _damaged(tmp_path, f"UPDATE reports SET clone_memory = {value} WHERE id = 3")
    connection = sqlite3.connect(db)
    with connection:
        connection.execute("UPDATE reports SET clone_memory = 5 WHERE id = 1")
    connection.close()

    async def read() -> int | None:
        async with open_store(db) as store:
            return await store.clone_memory("git://example.org/team/repo", 1)

    assert trio.run(read) == 5  # the run before's figure: the damaged one is passed over


def test_a_damaged_cache_value_comes_back_as_bytes_to_be_refused(tmp_path: Path) -> None:
    # The analyzer refuses a value that does not decode (a miss, parsed again); the
    # lookup must not fail for the whole batch of keys on a TEXT value.
    db = tmp_path / "s.db"

    async def lookup() -> dict[bytes, bytes]:
        async with open_store(db) as store:
            await store.keep({b"k" * 20: b"{}", b"j" * 20: b"{}"})
        connection = sqlite3.connect(db)
        with connection:
            connection.execute(
                f"UPDATE analysis_cache SET value = {NOT_UTF8} WHERE key = ?", (b"k" * 20,)
            )
        connection.close()
        async with open_store(db) as store:
            return await store.lookup([b"k" * 20, b"j" * 20])

    assert trio.run(lookup) == {b"k" * 20: b"\xffA", b"j" * 20: b"{}"}


@pytest.mark.parametrize("value", ["'x'", "x'00'"])
def test_a_damaged_cache_recency_leaves_the_cache_working(tmp_path: Path, value: str) -> None:
    # The cache's use counter starts from the largest stored; one cell edited to text
    # made it text, and every later lookup and keep failed (the cache off for good).
    db = tmp_path / "s.db"

    async def use() -> dict[bytes, bytes]:
        async with open_store(db) as store:
            await store.keep({b"k" * 20: b"{}"})
        connection = sqlite3.connect(db)
        with connection:
            connection.execute(f"UPDATE analysis_cache SET used = {value}")
        connection.close()
        async with open_store(db) as store:
            await store.keep({b"j" * 20: b"[]"})
            return await store.lookup([b"k" * 20, b"j" * 20])

    assert trio.run(use) == {b"k" * 20: b"{}", b"j" * 20: b"[]"}


def test_a_reused_report_is_saved_past_a_damaged_count(tmp_path: Path) -> None:
    # Saving a reused report looks for the stored rows it can share by their totals.
    db = _damaged(tmp_path, f"UPDATE reports SET tests = {NOT_UTF8} WHERE id = 3")

    async def save() -> RepositoryReport | None:
        async with open_store(db) as store:
            run = await store.begin_run({})
            again = replace(report(0, commit="b" * 40), reused=True)
            await store.save(run, KEY, again)
            return await store.load(run, KEY)

    saved = trio.run(save)
    assert saved is not None
    assert saved.inventory == INVENTORY  # rows of its own, the damaged row not shared

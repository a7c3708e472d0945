"""The store's commands: runs, history, diff, export; and analyze's --db options."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import trio
from typer.testing import CliRunner

from clonegate import RepositoryReport, RepositoryStatus
from clonegate.store import open_store
from clonegate_cli.app import app

from .support.inventories import INVENTORY, KEY
from .support.stored_runs import save_two_runs


def test_incremental_and_force_need_a_store(runner: CliRunner) -> None:
    for flag in ("--incremental", "--force"):
        result = runner.invoke(app, ["analyze", flag, "git://example.org/x"], env={})
        assert result.exit_code == 2
        assert f"{flag} needs a result store: --db PATH or CLONEGATE_DB" in result.output


def test_reading_a_store_that_does_not_exist_is_exit_4(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(app, ["runs", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 4
    assert "no result store at" in result.output
    assert not (tmp_path / "none.db").exists()  # reading never creates one


def test_runs_and_history(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    a, b = save_two_runs(db)
    runs = runner.invoke(app, ["runs"], env={"CLONEGATE_DB": str(db)})
    assert runs.exit_code == 0, runs.output
    assert [line.split()[0] for line in runs.output.splitlines()[3:5]] == [str(b), str(a)]
    history = runner.invoke(app, ["history", "--db", str(db), KEY + ".git", "--jsonl"])
    assert history.exit_code == 0, history.output
    entries = [json.loads(line) for line in history.output.splitlines()]
    assert [(e["run_id"], e["commit"], e["tests"]) for e in entries] == [
        (a, "a" * 40, 5),
        (b, "b" * 40, 4),
    ]


def test_diff_names_the_tests_added_and_removed(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    a, _ = save_two_runs(db)
    result = runner.invoke(app, ["diff", str(a), "latest", "--db", str(db)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "  - tests/test_a.py: test_top" in lines  # the xfail one at line 20
    assert f"{KEY}.git: ok -> ok, tests 5 -> 4" in lines
    # A server-chosen URL is shown escaped: no escape sequence reaches the terminal.
    assert "\x1b" not in result.output
    assert "git://example.org/team/repo\\x1b[31mred: ok -> failed, tests 5 -> -" in lines


def test_export_as_jsonl_csv_and_per_test(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    a, _ = save_two_runs(db)
    jsonl = runner.invoke(app, ["export", str(a), "--db", str(db)])
    assert jsonl.exit_code == 0, jsonl.output
    documents = [json.loads(line) for line in jsonl.output.splitlines()]
    assert [(d["index"], d["status"], d["tests"]) for d in documents] == [
        (0, "ok", 5),
        (1, "ok", 5),
    ]
    as_csv = runner.invoke(app, ["export", "latest", "--db", str(db), "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(as_csv.output)))
    assert [(r["status"], r["error_kind"]) for r in rows] == [("ok", ""), ("failed", "not_found")]
    tests = runner.invoke(app, ["export", str(a), "--db", str(db), "--tests"])
    records = [json.loads(line) for line in tests.output.splitlines()]
    assert len(records) == 2 * INVENTORY.tests
    assert {
        "url": "git://example.org/team/repo.git",
        "path": "tests/test_a.py",
        "framework": "pytest",
        "suite": "TestOuter > TestInner",
        "test": "test_deep",
        "line": 9,
        "status": "active",
    } in records
    bad = runner.invoke(app, ["export", "seven", "--db", str(db)])
    assert bad.exit_code == 2  # a usage error: the argument names no run
    assert "'seven' is not a run id" in bad.output


def test_a_report_status_survives_the_round_trip(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _, b = save_two_runs(db)

    async def read() -> list[RepositoryReport]:
        async with open_store(db) as store:
            return await store.reports(b)

    stored = trio.run(read)
    assert [r.status for r in stored] == [RepositoryStatus.OK, RepositoryStatus.FAILED]
    assert stored[1].error is not None
    assert stored[1].error.kind == "not_found"

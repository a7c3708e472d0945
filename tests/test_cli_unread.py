""" "Not understood" is never shown as "no tests" (issue 40, ADR 0004): repositories
served on loopback whose test files are in a language the analyzer does not read, through
the command line's table, JSON lines, the result store and ``export``."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import trio
from typer.testing import CliRunner

from clonegate import AnalysisTotals, to_json
from clonegate._adapters.store.schema import MIGRATIONS, migrate
from clonegate.store import open_store
from clonegate_cli.app import app

from .support.inventories import KEY, report
from .support.repos import make_repo
from .support.servers import GitDaemon, git_daemon

SPEC = b'defmodule UserTest do\n  use ExUnit.Case\n  test "works", do: assert(1 == 1)\nend\n'
# A file name from the repository: never shown, and nothing in it reaches the output.
HOSTILE_SPEC = "test/\x1b[31m=cmd|x_test.exs"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitDaemon]:
    root = tmp_path_factory.mktemp("unread")
    elixir = {f"test/models/m{i}_test.exs": SPEC for i in range(3)}
    elixir |= {
        HOSTILE_SPEC: SPEC,
        "test/test_helper.exs": b"",
        "lib/user.ex": b"defmodule User do\nend\n",
    }
    make_repo(root, "elixir", files=elixir)
    python = b"def test_one():\n    pass\n"
    make_repo(
        root, "mixed", files={"tests/test_a.py": python, "test/a_test.exs": b"ExUnit.start()\n"}
    )
    make_repo(root, "plain", files={"src/main.rb": b"puts 1\n", "README.md": b"# x\n"})
    with git_daemon(root) as daemon:
        yield daemon


def _urls(daemon: GitDaemon) -> list[str]:
    return [daemon.url("elixir"), daemon.url("mixed"), daemon.url("plain")]


def test_the_table_says_which_test_files_were_not_read(
    runner: CliRunner, served: GitDaemon, tmpdir_env: Path
) -> None:
    result = runner.invoke(
        app, ["analyze", "--format", "table", *_urls(served)], env={"COLUMNS": "200"}
    )
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "0 tests in 0 files · 4 test files in elixir not read" in out
    assert "1 test in 1 file, pytest 1 · 1 test file in elixir not read" in out
    plain = next(
        line for line in out.splitlines() if "0 tests in 0 files" in line and "elixir" not in line
    )
    assert "not read" not in plain  # no test-like file at all: a plain zero
    assert "1 test in 1 file; 5 test files not read;" in out  # the summary
    assert "\x1b" not in out
    assert "=cmd" not in out


def test_json_lines_carry_the_counts_and_the_conventions(
    runner: CliRunner, served: GitDaemon, tmpdir_env: Path
) -> None:
    result = runner.invoke(app, ["analyze", "--format", "jsonl", *_urls(served)])
    assert result.exit_code == 0, result.output
    analyses = _by_url(result.stdout, served)
    assert analyses["elixir"]["unread"] == {"elixir": 4}
    assert analyses["elixir"]["unread_conventions"] == {"test/**/*_test.exs": 4}
    assert analyses["elixir"]["tests"] == 0
    assert analyses["mixed"]["unread"] == {"elixir": 1}
    assert analyses["mixed"]["unread_conventions"] == {"test/**/*_test.exs": 1}
    assert analyses["plain"]["unread"] == {}
    assert analyses["plain"]["unread_conventions"] == {}


def test_the_store_and_export_keep_them(
    runner: CliRunner, served: GitDaemon, tmpdir_env: Path, tmp_path: Path
) -> None:
    db = tmp_path / "s.db"
    printed = runner.invoke(app, ["analyze", "--db", str(db), "--format", "jsonl", *_urls(served)])
    assert printed.exit_code == 0, printed.output
    rows = sqlite3.connect(db).execute("SELECT url, unread_files FROM reports ORDER BY line")
    assert [(url.rsplit("/", 1)[1], n) for url, n in rows] == [
        ("elixir.git", 4),
        ("mixed.git", 1),
        ("plain.git", 0),
    ]
    exported = runner.invoke(app, ["export", "latest", "--db", str(db)])
    assert exported.exit_code == 0, exported.output
    records = {r["url"].rsplit("/", 1)[1]: r for r in map(json.loads, exported.stdout.splitlines())}
    assert (records["elixir.git"]["unread_files"], records["elixir.git"]["unread"]) == (
        4,
        {"elixir": 4},
    )
    assert records["plain.git"]["unread"] == {}
    # The analysis as it was printed comes back from the store whole.
    assert _by_url(printed.stdout, served) == {
        name: document["analysis"] for name, document in _documents(db).items()
    }
    as_csv = runner.invoke(app, ["export", "latest", "--db", str(db), "--format", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    cells = {r["url"].rsplit("/", 1)[1]: r for r in csv.DictReader(io.StringIO(as_csv.stdout))}
    assert (cells["mixed.git"]["unread_files"], cells["mixed.git"]["unread"]) == ("1", "elixir 1")
    assert (cells["plain.git"]["unread_files"], cells["plain.git"]["unread"]) == ("0", "")
    history = runner.invoke(app, ["history", "--db", str(db), served.url("elixir"), "--jsonl"])
    assert [json.loads(line)["unread_files"] for line in history.stdout.splitlines()] == [4]
    runs = runner.invoke(app, ["runs", "--db", str(db)])
    assert runs.exit_code == 0, runs.output
    (summary,) = sqlite3.connect(db).execute("SELECT summary FROM runs")
    assert json.loads(summary[0])["unread_files"] == 5


def _by_url(jsonl: str, daemon: GitDaemon) -> dict[str, Any]:
    names = {daemon.url(name): name for name in ("elixir", "mixed", "plain")}
    return {names[r["url"]]: r["analysis"] for r in map(json.loads, jsonl.splitlines())}


def _documents(db: Path) -> dict[str, Any]:
    rows = sqlite3.connect(db).execute("SELECT url, document FROM reports")
    return {url.rsplit("/", 1)[1].removesuffix(".git"): json.loads(doc) for url, doc in rows}


def test_a_store_of_the_previous_schema_says_not_counted(tmp_path: Path) -> None:
    """Migration 5 (ADR 0016): rows stored before the count have NULL, shown as such by
    ``history`` and summed as nothing; rows stored after have theirs."""
    db = tmp_path / "old.db"
    old = sqlite3.connect(db, isolation_level=None)
    migrate(old, upto=len(MIGRATIONS) - 1)  # what the previous clonegate made
    old.execute("INSERT INTO runs (started_at, options) VALUES ('2025-01-01T00:00:00', '{}')")
    document = json.dumps(to_json(replace(report(), inventory=None)))
    old.execute(
        "INSERT INTO reports (run_id, line, key, url, status, test_files, tests, "
        "analyzer_version, document) VALUES (1, 0, ?, ?, 'ok', 2, 5, 'v-test', ?)",
        (KEY, KEY, document),
    )
    old.close()
    unread = {"elixir": 3, "\x1b[31m=x": 1}  # a stored document can say anything
    newer = replace(report(), analysis=replace(_totals(), unread=unread))

    async def save() -> None:
        async with open_store(db) as store:
            run = await store.begin_run({})
            await store.save(run, KEY, newer)
            await store.finish_run(run)

    trio.run(save)
    runner = CliRunner()
    history = runner.invoke(app, ["history", "--db", str(db), KEY, "--jsonl"])
    assert [json.loads(line)["unread_files"] for line in history.stdout.splitlines()] == [None, 4]
    table = runner.invoke(app, ["history", "--db", str(db), KEY], env={"COLUMNS": "200"})
    assert "\x1b" not in table.stdout
    as_csv = runner.invoke(app, ["export", "latest", "--db", str(db), "--format", "csv"])
    (record,) = csv.DictReader(io.StringIO(as_csv.stdout))
    assert record["unread"] == "elixir 3; \\x1b[31m=x 1"  # escaped, as every cell
    assert record["unread_files"] == "4"


def _totals() -> AnalysisTotals:
    totals = report().analysis
    assert totals is not None
    return totals

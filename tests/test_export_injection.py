"""Exports that cannot inject: test names, paths and server messages chosen to take
over a terminal (ESC, BEL, OSC 8 links) or to run in a spreadsheet (=, +, -, @), from
a repository served on loopback and from a store row (ADR 0012)."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import trio
from typer.testing import CliRunner

from clonegate import Inventory, RepositoryReport, TestCase, TestFile
from clonegate.store import open_store
from clonegate_cli.app import app

from .support.inventories import KEY, report
from .support.repos import make_repo
from .support.servers import git_daemon

LINK = "\x1b]8;;http://evil.example/\x07click me\x1b]8;;\x07"  # an OSC 8 hyperlink
FORMULAS = ['=HYPERLINK("http://evil.example/","x")', "+1+cmd|' /C calc'!A0", "@SUM(1,1)", "-2+3"]
JEST = "\n".join(
    [
        f'describe("{LINK}", () => {{',
        *(f"  it({json.dumps(name)}, () => {{}})" for name in FORMULAS),
        '  it("\tstarts with a tab", () => {})',
        '  it("\x1b[31mred\x07", () => {})',
        "})",
        "",
    ]
)


def _cells(output: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(output)))


def _assert_inert(output: str) -> None:
    """Nothing a terminal acts on: no control character but the line ends."""
    assert not [ch for ch in output if ch != "\n" and (ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0)]


def _assert_no_formula(rows: list[dict[str, str]]) -> None:
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "-", "@", "\t", "\r")), value


def test_hostile_test_names_from_a_served_repository_export_inert(
    tmp_path: Path, tmpdir_env: Path
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    files = {
        "package.json": b'{"devDependencies": {"jest": "^29"}}',
        "src/a.test.js": JEST.encode(),
        "@evil.test.js": b'it("top", () => {})\n',  # a path that starts a formula
    }
    make_repo(served, "hostile", commits=1, other_branches=(), files=files)
    db = tmp_path / "s.db"
    runner = CliRunner()
    with git_daemon(served) as daemon:
        url = daemon.url("hostile")
        run = runner.invoke(app, ["analyze", "--db", str(db), "-q", "--format", "jsonl", url])
    assert run.exit_code == 0, run.output
    exported = runner.invoke(
        app, ["export", "latest", "--db", str(db), "--format", "csv", "--tests"]
    )
    assert exported.exit_code == 0, exported.output
    _assert_inert(exported.stdout)
    rows = _cells(exported.stdout)
    _assert_no_formula(rows)
    names = [row["test"] for row in rows if row["path"] == "src/a.test.js"]
    # As written in the source (the analyzer keeps a literal's escapes), a ' before each.
    assert names == [
        *(f"'{json.dumps(name)[1:-1]}" for name in FORMULAS),
        "\\tstarts with a tab",
        "\\x1b[31mred\\x07",
    ]
    assert {row["suite"] for row in rows if row["path"] == "src/a.test.js"} == {
        "\\x1b]8;;http://evil.example/\\x07click me\\x1b]8;;\\x07"
    }
    assert "'@evil.test.js" in {row["path"] for row in rows}
    # JSON lines keep the data as it was: escaped by the JSON encoder, decoded back whole.
    as_jsonl = runner.invoke(app, ["export", "latest", "--db", str(db), "--tests"])
    _assert_inert(as_jsonl.stdout)
    records = [json.loads(line) for line in as_jsonl.stdout.splitlines()]
    assert [r["test"] for r in records if r["path"] == "src/a.test.js"][-1] == "\x1b[31mred\x07"
    assert {r["suite"] for r in records if r["path"] == "src/a.test.js"} == {LINK}


def test_hostile_cells_from_a_store_row_export_inert(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    message = "=cmd|' /C calc'!A0 \x1b]0;pwned\x07\x1b[2J"
    inventory = Inventory(
        files=(
            TestFile(
                "-x.py\x1b[2J",
                "pytest",
                "python",
                tests=(TestCase("\rtest_cr", 1), TestCase("@SUM(1,1)", 2)),
            ),
        )
    )

    async def build() -> None:
        async with open_store(db) as store:
            run = await store.begin_run({})
            ok = report(0, inventory=inventory)
            assert ok.analysis is not None
            await store.save(run, KEY, ok)
            failed = RepositoryReport.failure("+" + KEY, 1, "clone", "protocol", message)
            await store.save(run, KEY + "2", failed)
            await store.finish_run(run)

    trio.run(build)
    runner = CliRunner()
    per_repository = runner.invoke(app, ["export", "latest", "--db", str(db), "--format", "csv"])
    assert per_repository.exit_code == 0, per_repository.output
    _assert_inert(per_repository.stdout)
    rows = _cells(per_repository.stdout)
    _assert_no_formula(rows)
    assert rows[1]["error"] == "'=cmd|' /C calc'!A0 \\x1b]0;pwned\\x07\\x1b[2J"
    assert rows[1]["url"] == f"'+{KEY}"
    assert rows[0]["tests"] == "5"  # numbers stay numbers
    per_test = runner.invoke(app, ["export", "1", "--db", str(db), "--format", "csv", "--tests"])
    _assert_inert(per_test.stdout)
    tests = _cells(per_test.stdout)
    _assert_no_formula(tests)
    assert [(t["path"], t["test"]) for t in tests] == [
        ("'-x.py\\x1b[2J", "\\rtest_cr"),
        ("'-x.py\\x1b[2J", "'@SUM(1,1)"),
    ]


def test_the_human_outputs_escape_what_a_store_row_holds(tmp_path: Path) -> None:
    # A store is anyone's file: a status or a count column can hold anything.
    db = tmp_path / "s.db"

    async def build() -> None:
        async with open_store(db) as store:
            for commit in ("a" * 40, "b" * 40):
                run = await store.begin_run({})
                await store.save(run, KEY, report(0, commit=commit))
                await store.finish_run(run)

    trio.run(build)
    connection = sqlite3.connect(db)
    with connection:
        connection.execute("UPDATE reports SET status = 'ok\x1b[2J', tests = '\x07' WHERE id = 2")
        connection.execute("UPDATE runs SET started_at = '\x1b]0;t\x07' WHERE id = 2")
    connection.close()
    runner = CliRunner()
    for args in (["diff", "1", "2"], ["history", KEY], ["runs"]):
        result = runner.invoke(app, [*args, "--db", str(db)])
        assert result.exit_code == 0, result.output
        _assert_inert(result.stdout)
    diff = runner.invoke(app, ["diff", "1", "2", "--db", str(db)]).stdout
    assert f"{KEY}.git: ok -> ok\\x1b[2J, tests 5 -> \\x07" in diff.splitlines()

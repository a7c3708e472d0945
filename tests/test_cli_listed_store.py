"""What a listing said, read back from the store by `history` and `export` (ADR 0023):
the forge's fields beside each repository that came from one, empty for a URL line,
and a server's text kept as text (a spreadsheet formula stays a string)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import trio
from typer.testing import CliRunner

from clonegate._domain.listed import Listed
from clonegate._domain.sources import Forge
from clonegate.store import open_store
from clonegate_cli.app import app

from .support.inventories import KEY, report

PUSHED = datetime(2026, 11, 1, 12, 30, 5, tzinfo=UTC)
SAID = Listed(
    full_name="=HYPERLINK(evil)/repo",  # a server's text: never a spreadsheet formula
    clone_url="git://example.org/team/repo.git",
    forge_id="4242",
    default_branch="main",
    archived=False,
    fork=True,
    language="+Python",
    stars=17,
    pushed_at=PUSHED,
    forge=Forge.GITLAB,
)


def _save(db: Path) -> None:
    async def save() -> None:
        async with open_store(db) as store:
            run = await store.begin_run({})
            await store.save(run, KEY, replace(report(), listed=SAID))
            await store.save(run, "git://example.org/other", replace(report(1), url="x"))
            await store.finish_run(run)

    trio.run(save)


def test_export_has_what_the_listing_said(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _save(db)
    jsonl = runner.invoke(app, ["export", "latest", "--db", str(db)])
    assert jsonl.exit_code == 0, jsonl.output
    listed, plain = map(json.loads, jsonl.stdout.splitlines())
    fields = ("forge", "full_name", "forge_id", "stars", "language", "archived", "fork")
    assert [listed[name] for name in (*fields, "pushed_at")] == [
        "gitlab",
        "=HYPERLINK(evil)/repo",
        "4242",
        17,
        "+Python",
        False,
        True,
        "2026-11-01T12:30:05+00:00",
    ]
    assert [plain[name] for name in (*fields, "pushed_at")] == [""] * 8
    as_csv = runner.invoke(app, ["export", "latest", "--db", str(db), "--format", "csv"])
    first, second = csv.DictReader(io.StringIO(as_csv.stdout))
    assert (first["full_name"], first["language"]) == ("'=HYPERLINK(evil)/repo", "'+Python")
    assert (first["stars"], first["pushed_at"]) == ("17", "2026-11-01T12:30:05+00:00")
    assert second["forge"] == ""


def test_history_shows_when_the_forge_saw_the_last_push(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    _save(db)
    history = runner.invoke(app, ["history", "--db", str(db), KEY, "--jsonl"])
    (entry,) = map(json.loads, history.stdout.splitlines())
    assert (entry["forge"], entry["forge_id"], entry["stars"]) == ("gitlab", "4242", 17)
    assert entry["pushed_at"] == "2026-11-01T12:30:05+00:00"
    table = runner.invoke(app, ["history", "--db", str(db), KEY], env={"COLUMNS": "200"})
    assert "pushed (UTC)" in table.stdout
    assert "2026-11-01 12:30:05" in table.stdout
    # A repository no listing gave has no such column.
    plain = runner.invoke(app, ["history", "--db", str(db), "git://example.org/other"])
    assert plain.exit_code == 0, plain.output
    assert "pushed" not in plain.stdout

"""``clonegate report --format json`` and ``export`` on a real SQLite file (issue 44,
ADR 0020): a run whole, its phases as rows, what servers named kept as data, damaged
rows named and left out."""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trio
from typer.testing import CliRunner

from clonegate import RepositoryReport
from clonegate._domain.timeline import microseconds
from clonegate.store import Phase, RunEvent, open_store, open_store_reader
from clonegate_cli.app import app

from .support.hostile_servers import renaming_git_daemon
from .support.inventories import KEY, report
from .support.repos import FixtureRepo
from .support.timelines import phase_names

HOSTILE_URL = "git://example.org/</script><script>alert(1)</script>\x1b[2J\x1b]0;x\x07"
HOSTILE_TEST = "</script><!-- & \u2028 \x1b[31m"


def test_hostile_names_are_kept_and_reported_as_data(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    inventory = report().inventory
    assert inventory is not None
    first = inventory.files[0]
    hostile_file = dataclasses.replace(
        first, tests=(dataclasses.replace(first.tests[0], name=HOSTILE_TEST), *first.tests[1:])
    )
    hostile = dataclasses.replace(
        report(),
        url=HOSTILE_URL,
        inventory=dataclasses.replace(inventory, files=(hostile_file, *inventory.files[1:])),
        phases=(Phase("clone", when, when + timedelta(seconds=2), 1),),
    )

    async def save() -> None:
        async with open_store(db) as store:
            run_id = await store.begin_run({"note": HOSTILE_TEST})
            await store.save(run_id, KEY, hostile)
            await store.save_events(run_id, [RunEvent("host_limit", when, 4, HOSTILE_URL)])
            await store.finish_run(run_id)

    trio.run(save)
    result = runner.invoke(app, ["report", "latest", "--db", str(db), "--format", "json"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    # Nothing a server named reaches the output raw: no escape, no tag, no line break.
    assert not re.search(r"[\x00-\x1f\x7f<>&\u2028]", text.rstrip("\n")), text
    document = json.loads(text)
    (repository,) = document["repositories"]
    assert repository["url"] == HOSTILE_URL  # as data, whole
    assert repository["phases"] == [
        {
            "name": "clone",
            "started": when.isoformat(),
            "ended": (when + timedelta(seconds=2)).isoformat(),
            "attempt": 1,
        }
    ]
    assert document["events"][0]["detail"] == HOSTILE_URL
    assert document["run"]["options"]["note"] == HOSTILE_TEST
    assert sum(row["tests"] for row in document["tests"]) == inventory.tests


def test_export_gives_each_repository_its_instants(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    phases = (
        Phase("waiting", when, when + timedelta(seconds=1), 1),
        Phase("clone", when + timedelta(seconds=1), when + timedelta(seconds=3), 1),
        Phase("analysis", when + timedelta(seconds=3), when + timedelta(seconds=4)),
    )

    async def save() -> RepositoryReport | None:
        async with open_store(db) as store:
            run_id = await store.begin_run({})
            await store.save(run_id, KEY, dataclasses.replace(report(), phases=phases))
            await store.finish_run(run_id)
            return await store.load(run_id, KEY)

    loaded = trio.run(save)
    assert loaded is not None
    assert loaded.phases == phases
    rows = (
        sqlite3.connect(db)
        .execute("SELECT name, attempt, started, ended FROM phases ORDER BY phase_no")
        .fetchall()
    )
    assert rows == [
        (p.name, p.attempt, microseconds(p.started), microseconds(p.ended)) for p in phases
    ]
    jsonl = runner.invoke(app, ["export", "latest", "--db", str(db)])
    assert jsonl.exit_code == 0, jsonl.output
    (record,) = [json.loads(line) for line in jsonl.stdout.splitlines()]
    assert record["started_at"] == when.isoformat()
    assert record["finished_at"] == (when + timedelta(seconds=4)).isoformat()
    assert [p["name"] for p in record["phases"]] == ["waiting", "clone", "analysis"]
    csv = runner.invoke(app, ["export", "latest", "--db", str(db), "--format", "csv"])
    assert csv.exit_code == 0, csv.output
    assert f"clone#1 {phases[1].started.isoformat()}/{phases[1].ended.isoformat()}" in csv.stdout


def test_report_names_a_missing_run_and_a_bad_format(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"

    async def save() -> None:
        async with open_store(db) as store:
            run_id = await store.begin_run({})
            await store.finish_run(run_id)

    trio.run(save)
    missing = runner.invoke(app, ["report", "7", "--db", str(db)])
    assert missing.exit_code == 2
    assert "there is no run 7" in missing.output
    wrong = runner.invoke(app, ["report", "--db", str(db), "--format", "svg"])
    assert wrong.exit_code == 2
    assert "--format must be one of html, json" in wrong.output
    nowhere = runner.invoke(app, ["report", "--db", str(db), "-o", str(tmp_path / "no" / "r.json")])
    assert nowhere.exit_code == 4
    assert "cannot write" in nowhere.output


async def test_a_run_kept_without_phases_or_events_reads_as_none(tmp_path: Path) -> None:
    # As runs stored before they were kept: nothing to draw, and not an error.
    db = tmp_path / "old.db"
    async with open_store(db) as store:
        run_id = await store.begin_run({})
        await store.save(run_id, KEY, report())
        await store.finish_run(run_id)
    async with open_store_reader(db) as reader:
        found = await reader.run_report(run_id)
    assert found is not None
    assert found.events == ()
    (only,) = found.repositories
    assert only.phases == ()


def test_a_damaged_phase_or_event_is_named_and_left_out(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    phased = dataclasses.replace(report(), phases=(Phase("clone", when, when, 1),))

    async def save() -> None:
        async with open_store(db) as store:
            run_id = await store.begin_run({})
            await store.save(run_id, KEY, phased)
            await store.save(run_id, KEY + "2", dataclasses.replace(phased, index=1))
            await store.save_events(run_id, [RunEvent("clone_limit", when, 4)] * 2)
            await store.finish_run(run_id)

    trio.run(save)
    with sqlite3.connect(db) as edit:  # anyone may edit the file
        edit.execute("UPDATE phases SET started = 'soon' WHERE report_id = 1")
        edit.execute("UPDATE run_events SET at = 'then' WHERE event_no = 1")
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "json"])
    assert result.exit_code == 1
    document = json.loads(result.stdout)
    assert [r["index"] for r in document["repositories"]] == [1]
    assert len(document["events"]) == 1
    assert "reports row 1" in result.stderr
    assert "run_events (run 1) row 1" in result.stderr
    checked = runner.invoke(app, ["check", "--db", str(db)])
    assert checked.exit_code == 1
    assert "reports row 1" in checked.stdout
    assert "run_events (run 1) row 1" in checked.stdout


SCRIPT_BRANCH = "main</script><script>x()</script>\u202egnp"  # a valid git branch name


def test_a_real_servers_hostile_branch_is_reported_as_data(
    runner: CliRunner, repo_root: Path, repos: dict[str, FixtureRepo], tmpdir_env: Path
) -> None:
    db = tmpdir_env.parent / "runs.db"
    source = repo_root / "basic.git"
    with renaming_git_daemon(source, SCRIPT_BRANCH.encode()) as port:
        hostile = f"git://127.0.0.1:{port}/basic.git"
        analyzed = runner.invoke(app, ["analyze", "--db", str(db), hostile])
    assert analyzed.exit_code == 0, analyzed.output
    result = runner.invoke(app, ["report", "--db", str(db), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert not re.search(r"[\x00-\x1f\x7f<>&\u202e]", result.stdout.rstrip("\n"))
    (repository,) = json.loads(result.stdout)["repositories"]
    assert repository["ref"]["branch"] == SCRIPT_BRANCH
    assert phase_names(repository["phases"])[-1] == "analysis"

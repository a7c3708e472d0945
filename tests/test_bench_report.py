"""``bench/bench_report.py`` and the run it draws (issue 44): the generated run is one
that could have happened, and the benchmark still runs (not timed: the benchmark
measures time, the tests do not)."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest
import trio

from bench.generated_run import SLOTS, build
from clonegate.store import open_store_reader

from .support.browser import chromium

ROOT = Path(__file__).resolve().parents[1]
JSON_COMMAND = "clonegate report {run} --db {db} --format json -o {out}"


def test_the_generated_run_holds_at_most_its_slots_and_lies_within_its_run(
    tmp_path: Path,
) -> None:
    made = build(tmp_path / "runs.db", 120, history=1)

    async def read() -> None:
        async with open_store_reader(tmp_path / "runs.db") as reader:
            found = await reader.run_report(made.run_id)
        assert found is not None
        summary, finished_at = found.run.summary, found.run.finished_at
        assert summary is not None
        assert finished_at is not None
        assert len(found.repositories) == made.repositories == summary["repositories"]
        assert summary["failed"] == made.failed > 0
        started, finished = map(datetime.fromisoformat, (found.run.started_at, finished_at))
        held: list[tuple[datetime, int]] = []
        for report in found.repositories:
            names = [phase.name for phase in report.phases]
            assert names[0] == "waiting", names
            for before, after in zip(report.phases, report.phases[1:], strict=False):
                assert before.ended == after.started  # each phase ends where the next begins
            for phase in report.phases:
                assert started <= phase.started <= phase.ended <= finished
                if phase.name in ("setup", "clone"):
                    held += [(phase.started, 1), (phase.ended, -1)]
        assert any(report.attempts for report in found.repositories)  # some were retried
        # Slots: never more held than the limit, and all of them at some instant.
        at_once = peak = 0
        for _, change in sorted(held):  # at a tie, a slot given back (-1) comes first
            at_once += change
            peak = max(peak, at_once)
        assert peak == SLOTS
        assert {event.kind for event in found.events} == {
            "clone_limit",
            "memory_budget",
            "host_limit",
        }
        assert all(started <= event.at <= finished for event in found.events)

    trio.run(read)


@pytest.mark.slow  # builds a store and opens the report in chromium: seconds
def test_the_report_benchmark_runs_with_the_command_it_is_given() -> None:
    chromium()  # skipped without it, as the harness's own tests
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_report.py"),
            "--quick",
            "--command",
            JSON_COMMAND,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,  # a safety net only
    )
    assert done.returncode == 0, done.stderr
    assert "| measure (200 repositories," in done.stdout
    assert "| console errors | 0 | 0 |" in done.stdout
    assert "| requests outside the file | 0 | 0 |" in done.stdout

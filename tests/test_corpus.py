"""The analyzer on real repositories: each bundle of tests/fixtures/corpus against its truth.

The truth files come from each framework's own tools (bench/corpus/README.md), never from
the analyzer. The tolerance is issue 16's: every repository within 1% (recall and
precision of matched test definitions), 99.5% of all definitions matched, statuses exact
where the truth tool reports them. The CLI, cloning the bundles from a real git daemon,
must report the same counts as the analyzer does in-process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.corpus.accuracy import CORPUS, Match, Row, load_truth, measure, truth_names
from clonegate._adapters.analysis.frameworks import FRAMEWORKS

from .support.repos import git
from .support.servers import GitDaemon, git_daemon

NAMES = truth_names()
PER_REPOSITORY = 0.99
OVERALL = 0.995


@pytest.fixture(scope="module")
def measured() -> dict[str, tuple[Row, Match]]:
    return {name: measure(name) for name in NAMES}


def test_the_corpus_covers_every_framework() -> None:
    assert len(NAMES) >= 12
    covered: set[str] = set()
    for name in NAMES:
        data = json.loads((CORPUS / "truth" / f"{name}.json").read_text(encoding="utf-8"))
        covered.update(data["frameworks"])
        assert (CORPUS / f"{name}.bundle").stat().st_size < 4_000_000, name
    assert covered >= {f.name for f in FRAMEWORKS}


@pytest.mark.parametrize("name", NAMES)
def test_each_repository_within_tolerance(
    name: str, measured: dict[str, tuple[Row, Match]]
) -> None:
    row, match = measured[name]
    shown = [(e.file, e.line, e.name) for e in (match.missed + match.extra)[:10]]
    assert row.recall >= PER_REPOSITORY, shown
    assert row.precision >= PER_REPOSITORY, shown
    assert match.status_disagreements() == []


def test_overall_accuracy(measured: dict[str, tuple[Row, Match]]) -> None:
    truth = sum(row.truth for row, _ in measured.values())
    matched = sum(row.matched for row, _ in measured.values())
    assert matched / truth >= OVERALL


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitDaemon]:
    base = tmp_path_factory.mktemp("corpus")
    for name in NAMES:
        git("clone", "--quiet", "--bare", str(CORPUS / f"{name}.bundle"), str(base / f"{name}.git"))
    with git_daemon(base) as daemon:
        yield daemon


def test_the_cli_reports_what_the_analyzer_finds(
    served: GitDaemon, measured: dict[str, tuple[Row, Match]], tmp_path: Path
) -> None:
    urls = [served.url(name) for name in NAMES]
    done = subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "--format", "jsonl", "-j", "2", *urls],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    reports = {r["url"]: r for r in map(json.loads, done.stdout.splitlines())}
    for name in NAMES:
        report = reports[served.url(name)]
        row, _ = measured[name]
        assert report["status"] == "ok", report["error"]
        assert report["ref"]["commit"] == load_truth(name).commit
        analysis = report["analysis"]
        assert analysis["tests"] == row.reported + row.excluded
        assert analysis["test_files"] == row.inventory_files
        assert abs(row.reported - row.truth) <= (1 - PER_REPOSITORY) * row.truth, name
        assert analysis["by_status"] == row.by_status, name

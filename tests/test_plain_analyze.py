"""A plain ``analyze`` runs without Typer (``clonegate_cli._plain``, issue 47), exactly
as Typer's ``analyze`` runs it: the same use case options, settings and output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clonegate import UseCaseConfig
from clonegate_cli import _plain, _root
from clonegate_cli._early import plain_analyze

from .support.repos import make_repo
from .support.servers import GitDaemon, git_daemon

URL = "git://127.0.0.1:9/a.git"
OTHER = "https://example.test/o/b"
SCRIPT = Path(sys.executable).with_name("clonegate")

PLAIN = [
    ["analyze", URL],
    ["analyze", URL, OTHER, "--format", "json"],
    ["analyze", "-q", "--format=jsonl", "-j", "3", URL],
    ["analyze", URL, "--depth", "0", "-v"],
    ["analyze", "--depth=5", "--max-concurrent-clones=7", URL, "-j", "4"],  # the last -j
    ["analyze", "--format", "table", "--quiet", "--format", "json", URL, URL],
    ["analyze", "-j", "100000", URL],  # more than the open-file limit allows: warned
]


def what_runs(arguments: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[Any, ...]:
    """What each path hands run_batch for ``arguments``, the Typer path's first."""
    handed: dict[str, tuple[Any, ...]] = {}

    def recorder(path: str) -> Any:
        def run_batch(*args: Any) -> int:
            handed[path] = args
            return 0

        return run_batch

    monkeypatch.setattr(_root, "run_batch", recorder("typer"))
    monkeypatch.setattr(_plain, "run_batch", recorder("plain"))
    result = CliRunner().invoke(_root.app, arguments)
    assert result.exit_code == 0, result.output
    plain = plain_analyze(arguments, {})
    assert plain is not None
    assert _plain.run_plain(plain) == 0
    return handed["typer"], handed["plain"]


def comparable(args: tuple[Any, ...]) -> tuple[Any, ...]:
    lines, setup, *rest = args
    config = UseCaseConfig.of(setup.options)
    return (lines, config, setup.clone, setup.analysis, setup.store, *rest)


@pytest.mark.parametrize("arguments", PLAIN)
def test_a_plain_analyze_hands_run_batch_what_typer_does(
    arguments: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    typer_path, plain_path = what_runs(arguments, monkeypatch)
    assert len(typer_path) == len(plain_path) == 7
    assert comparable(plain_path) == comparable(typer_path)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[GitDaemon]:
    root = tmp_path / "served"
    root.mkdir()
    make_repo(root, "tiny", files={"test_a.py": b"def test_a():\n    pass\n"})
    with git_daemon(root) as served:
        yield served


def run(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Without CLONEGATE_* (CI sets some): with any, no command line is plain.
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLONEGATE_")}
    return subprocess.run(
        [str(SCRIPT), *arguments], capture_output=True, text=True, timeout=120, cwd=cwd, env=env
    )


def without_times(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k not in {"timings", "phases", "clone_memory"}}


def test_a_plain_run_writes_what_typer_s_run_writes(daemon: GitDaemon, tmp_path: Path) -> None:
    url, missing = daemon.url("tiny"), daemon.url("missing")
    plain = run("analyze", "--format", "json", url, missing, cwd=tmp_path)
    # --retries at its default: the same run, read by Typer.
    typer = run("analyze", "--retries", "2", "--format", "json", url, missing, cwd=tmp_path)
    assert plain.returncode == typer.returncode == 1  # one repository failed
    plain_reports, typer_reports = (
        [without_times(r) for r in json.loads(done.stdout)["repositories"]]
        for done in (plain, typer)
    )
    assert plain_reports == typer_reports
    assert [r["status"] for r in plain_reports] == ["ok", "failed"]


@pytest.mark.parametrize(
    "arguments",
    [
        ["analyze", "git://h"],  # a URL the list refuses: usage error, exit 2
        ["analyze", "-j", "0", "git://h/r"],  # left to Typer, which says why
        ["analyze", "-q", "-v", "git://h/r"],
    ],
)
def test_a_plain_run_refuses_what_typer_refuses(arguments: list[str], tmp_path: Path) -> None:
    plain = run(*arguments, cwd=tmp_path)
    typer = run(arguments[0], "--retries", "2", *arguments[1:], cwd=tmp_path)
    assert plain.returncode == typer.returncode == 2
    assert plain.stderr == typer.stderr
    assert plain.stderr.startswith("clonegate: error: ")
    assert plain.stdout == typer.stdout == ""

"""Results that cannot be written: a closed stdout (``>&-``) or a full device
(``> /dev/full``) is one error line and exit status 4, with every clone removed; real
subprocesses of the command line against a loopback git daemon."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .support.inventories import KEY
from .support.servers import GitDaemon
from .support.stored_runs import save_two_runs

EXIT_OUTPUT = 4
WAIT = 120  # seconds: a safety net on a loaded machine, never the assertion


def _clonegate(stdout: str, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit status and stderr of ``clonegate ARGS`` with stdout redirected by the
    shell as ``stdout`` says (``>&-``, ``>/dev/full``): as a user would run it."""
    command = ["sh", "-c", f'exec "$@" {stdout}', "sh", sys.executable, "-m", "clonegate"]
    process = subprocess.run(
        [*command, *args], stderr=subprocess.PIPE, text=True, env=env, timeout=WAIT
    )
    return process.returncode, process.stderr


def _one_error_line(stderr: str, says: str) -> None:
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if line.startswith("clonegate: error:")]
    assert len(errors) == 1, stderr
    assert says in errors[0]


def test_a_closed_stdout_is_refused_before_anything_is_cloned(
    daemon: GitDaemon, tmpdir_env: Path
) -> None:
    env = {**os.environ, "TMPDIR": str(tmpdir_env)}
    code, stderr = _clonegate(">&-", "analyze", daemon.url("basic"), env=env)
    assert code == EXIT_OUTPUT
    _one_error_line(stderr, "stdout is closed")
    assert list(tmpdir_env.iterdir()) == []


@pytest.mark.parametrize("fmt", ["jsonl", "table", "json"])
def test_a_full_stdout_stops_the_run_and_removes_every_clone(
    daemon: GitDaemon, tmpdir_env: Path, fmt: str
) -> None:
    env = {**os.environ, "TMPDIR": str(tmpdir_env)}
    urls = [daemon.url("basic"), daemon.url("trunk"), daemon.url("big")]
    code, stderr = _clonegate(">/dev/full", "analyze", "-j", "1", "--format", fmt, *urls, env=env)
    assert code == EXIT_OUTPUT
    _one_error_line(stderr, "cannot write the results to stdout: No space left on device")
    assert list(tmpdir_env.iterdir()) == []


def test_results_to_a_file_need_no_stdout(daemon: GitDaemon, tmpdir_env: Path) -> None:
    # The closed descriptor 1 is filled with /dev/null: no file the run opens takes it.
    env = {**os.environ, "TMPDIR": str(tmpdir_env)}
    results = tmpdir_env.parent / "results.jsonl"
    code, stderr = _clonegate(">&-", "analyze", "-o", str(results), daemon.url("basic"), env=env)
    assert code == 0, stderr
    assert '"status": "ok"' in results.read_text()


@pytest.mark.parametrize("command", [["runs"], ["export", "latest"], ["history", KEY]])
@pytest.mark.parametrize("stdout", [">&-", ">/dev/full"])
def test_the_store_commands_say_their_answer_cannot_be_written(
    tmp_path: Path, command: list[str], stdout: str
) -> None:
    db = tmp_path / "store.db"
    save_two_runs(db)
    code, stderr = _clonegate(stdout, *command, "--db", str(db))
    assert code == EXIT_OUTPUT
    _one_error_line(stderr, "stdout")


def test_a_closed_stderr_or_stdin_is_not_a_silent_failure(
    daemon: GitDaemon, tmpdir_env: Path
) -> None:
    # A closed stderr crashed every run before it began, silently: exit 1, no output.
    env = {**os.environ, "TMPDIR": str(tmpdir_env)}
    command = [sys.executable, "-m", "clonegate", "analyze", daemon.url("basic")]
    for closed in ("2>&-", "<&-"):
        run = subprocess.run(
            ["sh", "-c", f'exec "$@" {closed}', "sh", *command],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            timeout=WAIT,
        )
        assert run.returncode == 0, closed
        assert '"status": "ok"' in run.stdout
    assert list(tmpdir_env.iterdir()) == []


def test_cluster_results_refuse_a_closed_stdout() -> None:
    code, stderr = _clonegate(">&-", "results", "some-run", "--redis", "redis://127.0.0.1:1")
    assert code == EXIT_OUTPUT
    _one_error_line(stderr, "stdout is closed")


@pytest.mark.parametrize("args", [["--version"], ["--help"], ["analyze", "--help"]])
def test_help_and_version_on_a_full_device_say_so(args: list[str]) -> None:
    code, stderr = _clonegate(">/dev/full", *args)
    assert code == EXIT_OUTPUT
    _one_error_line(stderr, "cannot write: No space left on device")

"""The command line as people expect it: help, short flags, messages, tables, signals."""

from __future__ import annotations

import io
import os
import re
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clonegate import BatchSummary, RepositoryReport, RepositoryStatus
from clonegate_cli._clone_options import parse_size_option
from clonegate_cli._output import write_table
from clonegate_cli.app import _with_only, app

from .support.servers import GitDaemon, never_answer, raw_tcp_server
from .support.terminal import run_on_a_terminal


@pytest.mark.parametrize("command", [[], ["analyze"], ["demo"], ["worker"]])
def test_help_with_h_and_no_type_noise(runner: CliRunner, command: list[str]) -> None:
    short, long = (runner.invoke(app, [*command, flag]) for flag in ("-h", "--help"))
    assert short.exit_code == long.exit_code == 0
    assert short.stdout == long.stdout
    assert "Usage: clonegate" in short.stdout
    for noise in ("<bool>", "<list[str]>", "<int", "<float", "<str>"):
        assert noise not in short.stdout


@pytest.mark.parametrize("arguments", [["analyze", "-h"], ["history", "-h"], ["analyze"]])
def test_a_run_builds_only_the_command_it_names_and_behaves_alike(
    runner: CliRunner, arguments: list[str]
) -> None:
    # Typer builds every command it holds before parsing (~10 ms of each start).
    lean = _with_only(arguments[:1])
    assert [c.callback.__name__ for c in lean.registered_commands if c.callback] == [arguments[0]]
    assert len(app.registered_commands) > 10  # the application itself is untouched
    ran, full = runner.invoke(lean, arguments), runner.invoke(app, arguments)
    assert (ran.exit_code, ran.stdout, ran.stderr) == (full.exit_code, full.stdout, full.stderr)


@pytest.mark.parametrize("arguments", [[], ["-h"], ["--version"], ["analyse"], ["--", "analyze"]])
def test_anything_but_a_command_name_gets_the_whole_application(arguments: list[str]) -> None:
    assert _with_only(arguments[:1]) is app


def test_analyze_help_has_short_flags_and_every_exit_status(runner: CliRunner) -> None:
    text = " ".join(runner.invoke(app, ["analyze", "-h"]).stdout.split())
    for flags in ("-o, --output", "-q, --quiet", "-v, --verbose", "-j, --max-concurrent-clones"):
        assert flags in text
    for status in ("0 all", "1 some failed", "2 usage", "130 interrupted", "141", "143"):
        assert status in text


def test_every_demo_option_says_what_it_does(runner: CliRunner) -> None:
    text = runner.invoke(app, ["demo", "-h"]).stdout
    options = [line.split() for line in text.splitlines() if line.lstrip().startswith("-")]
    assert {line[0].rstrip(",") for line in options} == {
        "--repositories",
        "--rate",
        "--format",
        "-q",
        "-h",
    }
    for line in options:
        flags = [word for word in line if word.startswith("-") or word.isupper()]
        assert len(line) > len(flags) + 1, f"no help text: {' '.join(line)}"


def _flags(help_text: str) -> set[str]:
    """The option names in the first column of a command's help."""
    columns = (line.split("  ")[1] for line in help_text.splitlines() if line.startswith("  -"))
    return {flag for column in columns for flag in re.findall(r"(?<!\S)--?[\w-]+", column)}


def test_worker_takes_every_clone_option_of_analyze(runner: CliRunner) -> None:
    analyze, worker = (
        _flags(runner.invoke(app, [c, "--help"]).stdout) for c in ("analyze", "worker")
    )
    for flag in (
        "--memory-budget",
        "--ssh-command",
        "--ca-bundle",
        "--max-repo-size",
        "--clone-memory",
        "--low-speed-limit",
        "--low-speed-time",
        "--connect-timeout",
        "--max-concurrent-clones",
        "--netrc",
        "-q",
    ):
        assert flag in worker
    # All but the input and the output: jobs come from Redis, and their reports go back
    # there (a worker's --db is its own store, ADR 0016). The per-host flags are on both,
    # a worker's cluster-wide, in Redis (issue 43).
    # Nor what a list is made of: a worker clones the URLs submit listed (ADR 0023).
    assert analyze - worker == {"--from-file", "--format", "-o", "--output", "--keep"} | LISTING


# The listing options (ADR 0023): of analyze and submit, which read lists.
LISTING = {
    "--skip-forks",
    "--skip-archived",
    "--language",
    "--topic",
    "--match",
    "--exclude",
    "--min-stars",
    "--pushed-after",
    "--limit",
    "--listings",
    "--dry-run",
}


def test_submit_takes_every_listing_option_of_analyze(runner: CliRunner) -> None:
    analyze, submit = (
        _flags(runner.invoke(app, [c, "--help"]).stdout) for c in ("analyze", "submit")
    )
    assert analyze >= LISTING
    assert submit >= LISTING


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-j", "0"], "-j/--max-concurrent-clones must be at least 1, got 0"),
        (["--max-repo-size", "lots"], "--max-repo-size: "),
        (["--memory-budget", "lots"], "--memory-budget: "),
        (["--ca-bundle", "/no/such/file"], "--ca-bundle /no/such/file: no such file"),
        (["--token", "t0k3n"], "a token needs its host"),
        (["-v", "-q"], "--verbose and --quiet contradict each other"),
    ],
)
def test_worker_refuses_bad_clone_options_like_analyze(
    runner: CliRunner, args: list[str], message: str, tmpdir_env: Path
) -> None:
    analyze = runner.invoke(app, ["analyze", *args, "git://127.0.0.1/x.git"])
    # Refused before any connection: nothing listens on this Redis port.
    worker = runner.invoke(app, ["worker", "--redis", "redis://127.0.0.1:9/0", *args])
    for result in (analyze, worker):
        assert result.exit_code == 2, result.output
        assert message in result.output
    assert list(tmpdir_env.iterdir()) == []


def test_verbose_and_quiet_together_is_a_usage_error(runner: CliRunner) -> None:
    result = runner.invoke(app, ["analyze", "-v", "-q", "git://127.0.0.1/x.git"])
    assert result.exit_code == 2
    assert "--verbose and --quiet" in result.output


def test_verbose_logs_each_step_on_a_terminal_too(daemon: GitDaemon, tmp_path: Path) -> None:
    url = daemon.url("basic")
    code, text = run_on_a_terminal("analyze", "-v", url, env={"TMPDIR": str(tmp_path)})
    assert code == 0
    for step in ("queued", "cloning", "cloned", "analyzing", "done ok"):
        assert f" {step} {url}" in text


def test_piped_jsonl_ends_with_a_summary_on_stderr(daemon: GitDaemon, tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    args = [sys.executable, "-m", "clonegate", "analyze", daemon.url("basic")]
    piped = subprocess.run(args, capture_output=True, text=True, env=env, check=False)
    assert piped.returncode == 0
    assert "1 repository: 1 ok" in piped.stderr
    assert "repository:" not in piped.stdout  # results only on stdout
    quiet = subprocess.run([*args, "-q"], capture_output=True, text=True, env=env, check=False)
    assert quiet.stderr == ""


def test_ctrl_c_in_table_mode_still_shows_what_finished(daemon: GitDaemon, tmp_path: Path) -> None:
    finished = daemon.url("basic")
    with raw_tcp_server(never_answer) as port:
        silent = f"git://127.0.0.1:{port}/silent.git"
        args = ["analyze", "--format", "table", "-v", finished, silent]
        process = subprocess.Popen(
            [sys.executable, "-m", "clonegate", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "TMPDIR": str(tmp_path), "COLUMNS": "200"},
        )
        assert process.stderr is not None
        log = b""
        # -v on a pipe logs one line per step: wait for the first repository's end.
        while f"done ok {finished}".encode() not in log:
            ready, _, _ = select.select([process.stderr], [], [], 60)
            assert ready, log
            line = process.stderr.readline()
            assert line, log
            log += line
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    text = stdout.decode()
    assert finished in text
    assert "1 repository: 1 ok" in text
    assert silent not in text  # never finished, so no row
    assert b"interrupted" in stderr
    assert b"1 of 2 repositories not finished" in stderr
    assert b"Traceback" not in stderr
    assert list(tmp_path.iterdir()) == []


def test_the_table_reads_like_a_list_of_lines() -> None:
    url = "https://git.example.org/some-organisation/a-rather-long-repository-name.git"
    error = f"{url}: repository not found, or not yours to read"
    first = RepositoryReport.failure(url, 0, "clone", "not_found", error)
    assert first.error is not None
    reports = [first, RepositoryReport.duplicate(url, 1, 0, RepositoryStatus.FAILED, first.error)]
    summary = BatchSummary(repositories=2, failed=2, duplicates=1, elapsed=1.0)
    out = io.StringIO()
    write_table(out, reports, summary, width=100)
    text = out.getvalue()
    assert text.count(url) == 2  # whole, on one line, once per entry: not in the detail
    numbers = [line.split()[0] for line in text.splitlines() if line.split()[1:2] == ["failed"]]
    assert numbers == ["1", "2"]  # numbered like lines, from 1
    assert "same repository as #1 · repository not found, or not yours to read" in text
    assert "2 repositories: 0 ok, 2 failed" in text
    assert "1 duplicate;" in text
    assert "0 tests in 0 files" in text


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["--memory-budget", "10"], {}, "--memory-budget: a memory budget must be at least"),
        (["--memory-budget", "10"], {}, "did you mean 10G?"),
        (["--memory-budget", "0.5"], {}, "did you mean 0.5G?"),
        (["--memory-budget", "10K"], {}, "--memory-budget: a memory budget must be at least"),
        ([], {"CLONEGATE_MEMORY_BUDGET": "foo"}, "CLONEGATE_MEMORY_BUDGET: not a size: 'foo'"),
        ([], {"CLONEGATE_MEMORY_BUDGET": "12"}, "CLONEGATE_MEMORY_BUDGET: a memory budget"),
    ],
)
def test_a_bad_memory_budget_names_where_it_came_from_and_the_unit(
    runner: CliRunner, args: list[str], env: dict[str, str], message: str, tmpdir_env: Path
) -> None:
    result = runner.invoke(app, ["analyze", *args, "git://127.0.0.1/x.git"], env=env)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert list(tmpdir_env.iterdir()) == []


SIZE_OPTIONS = ["--max-repo-size", "--clone-memory", "--analysis-memory", "--cache-size"]


@pytest.mark.parametrize("option", SIZE_OPTIONS)
@pytest.mark.parametrize("value", ["10", "0.5", "1048575"])
def test_a_size_without_a_unit_below_1_mib_is_refused_with_the_unit_it_meant(
    runner: CliRunner, tmp_path: Path, tmpdir_env: Path, option: str, value: str
) -> None:
    store = ["--db", str(tmp_path / "store.db")] if option == "--cache-size" else []
    result = runner.invoke(app, ["analyze", option, value, *store, "git://127.0.0.1/x.git"])
    assert result.exit_code == 2, result.output
    assert f"{option}: a size without a unit must be at least 1 MiB" in result.output
    assert f"a number without a unit is bytes; did you mean {value}G?" in result.output
    assert list(tmpdir_env.iterdir()) == []
    assert not (tmp_path / "store.db").exists()


@pytest.mark.parametrize(
    ("text", "size"), [("10B", 10), ("10K", 10 << 10), ("1048576", 1 << 20), ("2G", 2 << 30)]
)
def test_a_size_with_a_unit_or_of_1_mib_is_taken_as_written(text: str, size: int) -> None:
    assert parse_size_option("--max-repo-size", text) == size

"""The command line: options, formats, exit codes, and signals, against loopback servers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import trio
from typer.testing import CliRunner

from clonegate_cli.app import app

from .support.processes import processes_with, zygote_pids
from .support.proxy import ThrottlingProxy
from .support.repos import BIG_BLOB_BYTES, FixtureRepo, git
from .support.servers import TOKEN, GitDaemon, HttpGitServer, never_answer, raw_tcp_server
from .support.terminal import run_on_a_terminal


def lines(output: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def clonegate(*args: str, **kwargs: Any) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "clonegate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kwargs,
    )


def test_jsonl_when_piped(
    runner: CliRunner, daemon: GitDaemon, repos: dict[str, FixtureRepo], tmpdir_env: Path
) -> None:
    result = runner.invoke(app, ["analyze", daemon.url("basic"), daemon.url("trunk")])
    assert result.exit_code == 0, result.output
    reports = sorted(lines(result.stdout), key=lambda r: r["index"])
    assert [r["status"] for r in reports] == ["ok", "ok"]
    basic = reports[0]
    assert basic["url"] == daemon.url("basic")
    assert basic["error"] is None
    assert basic["ref"]["branch"] == "main"
    assert basic["ref"]["commit"] == repos["basic"].head
    assert basic["ref"]["committed_at"] == "2023-11-15T00:13:22+02:00"
    assert set(basic["analysis"]) >= {"test_files", "tests", "by_framework", "by_status"}
    assert set(basic["timings"]) == {"waited", "setup", "clone", "analysis"}
    assert reports[1]["ref"]["branch"] == "trunk"
    assert list(tmpdir_env.iterdir()) == []


def test_json_document_and_table(runner: CliRunner, daemon: GitDaemon, tmpdir_env: Path) -> None:
    result = runner.invoke(app, ["analyze", "--format", "json", daemon.url("basic")])
    assert result.exit_code == 0
    document = json.loads(result.stdout)
    assert set(document) == {"repositories", "summary"}
    assert document["summary"]["ok"] == 1
    assert document["repositories"][0]["status"] == "ok"
    table = runner.invoke(app, ["analyze", "--format", "table", daemon.url("basic")])
    assert table.exit_code == 0
    assert "1 repository: 1 ok" in table.stdout


def test_from_file_and_stdin_skip_blanks_and_comments(
    runner: CliRunner, daemon: GitDaemon, tmp_path: Path, tmpdir_env: Path
) -> None:
    listing = f"# repositories\n\n{daemon.url('basic')}\n   \n  {daemon.url('trunk')}  \n"
    path = tmp_path / "urls.txt"
    path.write_text(listing)
    from_file = runner.invoke(app, ["analyze", "--from-file", str(path)])
    assert from_file.exit_code == 0
    assert len(lines(from_file.stdout)) == 2
    from_stdin = runner.invoke(app, ["analyze", "--from-file", "-"], input=listing)
    assert from_stdin.exit_code == 0
    assert len(lines(from_stdin.stdout)) == 2


def test_some_failed_exits_1_and_duplicates_are_reported(
    runner: CliRunner, daemon: GitDaemon, tmpdir_env: Path
) -> None:
    urls = [
        daemon.url("basic"),
        daemon.url("no-such-repo"),
        daemon.url("basic").upper()[:0] + f"GIT://127.0.0.1:{daemon.port}/basic/",
        daemon.url("no-such-repo"),
    ]
    result = runner.invoke(app, ["analyze", *urls])
    assert result.exit_code == 1
    reports = {r["index"]: r for r in lines(result.stdout)}
    assert reports[1]["status"] == "failed"
    assert reports[1]["error"] == {
        "phase": "clone",
        "kind": "not_found",
        "message": reports[1]["error"]["message"],
    }
    assert "repository not found" in reports[1]["error"]["message"]
    assert reports[2]["duplicate_of"] == 0
    assert reports[2]["status"] == "ok"
    # A duplicate of a failed repository says why, like its first line.
    assert reports[3]["duplicate_of"] == 1
    assert (reports[3]["status"], reports[3]["error"]) == ("failed", reports[1]["error"])


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        ([], None, "no repository URLs"),
        (["--from-file", "-"], "# only a comment\n\n", "no repository URLs"),
        (["ftp://example.com/x.git"], None, "unsupported scheme 'ftp'"),
        (["not a url"], None, "invalid repository URLs"),
        (["https://example.com"], None, "no repository path"),
        (["-j", "0", "git://127.0.0.1/x.git"], None, "-j/--max-concurrent-clones must be"),
        (["--depth", "-1", "git://127.0.0.1/x.git"], None, "Invalid value for '--depth'"),
        (["--format", "xml", "git://127.0.0.1/x.git"], None, "Invalid value for '--format'"),
        (["--from-file", "/no/such/file"], None, "cannot read /no/such/file"),
    ],
)
def test_usage_errors_exit_2_before_anything_is_cloned(
    runner: CliRunner, args: list[str], stdin: str | None, message: str, tmpdir_env: Path
) -> None:
    result = runner.invoke(app, ["analyze", *args], input=stdin)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert result.stdout == "" or "Usage" in result.stdout or message in result.stdout
    assert list(tmpdir_env.iterdir()) == []


def test_an_invalid_url_among_good_ones_stops_everything(
    runner: CliRunner, daemon: GitDaemon, tmpdir_env: Path
) -> None:
    result = runner.invoke(app, ["analyze", daemon.url("basic"), "svn://host/repo"])
    assert result.exit_code == 2
    assert "argument 2: svn://host/repo: unsupported scheme 'svn'" in result.output
    assert "nothing was cloned" in result.output


def test_environment_variables(
    runner: CliRunner,
    https_server: tuple[HttpGitServer, Path],
    daemon: GitDaemon,
    tmpdir_env: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bad = runner.invoke(
        app, ["analyze", daemon.url("basic")], env={"CLONEGATE_MAX_CONCURRENT_CLONES": "0"}
    )
    assert bad.exit_code == 2
    # The error names where the bad value came from: here the variable, not -j.
    assert "CLONEGATE_MAX_CONCURRENT_CLONES must be at least 1" in bad.output
    assert "-j" not in bad.output
    server, ca_bundle = https_server
    untrusted = runner.invoke(app, ["analyze", server.url("basic")])
    assert lines(untrusted.stdout)[0]["error"]["message"].endswith(
        "verification failed (a server whose certificate comes from a private authority "
        "needs that authority's certificate: --ca-bundle FILE)"
    )
    trusted = runner.invoke(app, ["analyze", "--ca-bundle", str(ca_bundle), server.url("basic")])
    assert trusted.exit_code == 0, trusted.output
    # Worker processes start with this environment: they trust the test CA.
    monkeypatch.setenv("SSL_CERT_FILE", str(ca_bundle))
    private = server.url("basic", private=True)
    denied = runner.invoke(app, ["analyze", private])
    assert denied.exit_code == 1
    assert lines(denied.stdout)[0]["error"]["kind"] == "authentication"
    host = f"127.0.0.1:{server.port}"
    allowed = runner.invoke(
        app,
        ["analyze", "--verbose", private],
        env={
            "CLONEGATE_TOKEN": TOKEN,
            "CLONEGATE_TOKEN_HOST": host,
            "CLONEGATE_MAX_CONCURRENT_CLONES": "1",
        },
    )
    assert allowed.exit_code == 0, allowed.output
    flag = runner.invoke(
        app, ["analyze", "--verbose", "--token", TOKEN, "--token-host", host, private]
    )
    assert flag.exit_code == 0
    for result in (denied, allowed, flag):
        assert TOKEN not in result.output
        assert TOKEN not in result.stdout


def test_output_file_keep_and_depth(
    runner: CliRunner, daemon: GitDaemon, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    out = tmp_path / "results.jsonl"
    keep = tmp_path / "kept"
    # Not a clone of anything: refused, and left as it was.
    occupied = keep / f"127.0.0.1_{daemon.port}" / "basic"
    occupied.mkdir(parents=True)
    (occupied / "notes.txt").write_text("mine")
    args = ["analyze", "-o", str(out), "--keep", str(keep), "--depth", "0", "-q"]
    urls = [daemon.url("trunk"), daemon.url("basic")]
    result = runner.invoke(app, [*args, *urls])
    assert result.exit_code == 1
    assert result.stdout == ""
    reports = {r["index"]: r for r in lines(out.read_text())}
    kept = Path(reports[0]["path"])
    assert kept == keep / f"127.0.0.1_{daemon.port}" / "trunk"  # <dir>/<host>/<path>
    assert git("-C", str(kept), "rev-list", "--count", "HEAD") == str(repos["trunk"].commits)
    assert (kept / "file0.txt").exists()  # kept clones have a working tree
    assert reports[1]["error"]["kind"] == "storage"
    assert "is not a git clone" in reports[1]["error"]["message"]
    assert [p.name for p in occupied.iterdir()] == ["notes.txt"]

    # A second run over the same directory updates the clone where it is.
    (kept / "file0.txt").unlink()  # a local change, undone by the update
    inode = kept.stat().st_ino
    again = runner.invoke(app, [*args, urls[0]])
    assert again.exit_code == 0
    assert lines(out.read_text())[0]["path"] == str(kept)
    assert kept.stat().st_ino == inode
    assert (kept / "file0.txt").exists()


def test_timeouts(runner: CliRunner, tmpdir_env: Path) -> None:
    with raw_tcp_server(never_answer) as port:
        url = f"http://127.0.0.1:{port}/silent.git"
        result = runner.invoke(app, ["analyze", "--timeout", "1", url])
        clone_only = runner.invoke(app, ["analyze", "--clone-timeout", "1", url])
    for outcome in (result, clone_only):
        assert outcome.exit_code == 1
        (report,) = lines(outcome.stdout)
        assert report["status"] == "timeout"
        assert (report["error"]["phase"], report["error"]["kind"]) == ("clone", "timeout")
    assert list(tmpdir_env.iterdir()) == []


def test_table_on_a_terminal(daemon: GitDaemon, tmpdir_env: Path) -> None:
    code, text = run_on_a_terminal("analyze", daemon.url("basic"))
    assert code == 0
    assert "1 repository: 1 ok" in text
    assert "repository" in text  # the table's header
    assert '"status"' not in text  # no JSON on a terminal


def test_demo_runs(runner: CliRunner) -> None:
    result = runner.invoke(app, ["demo", "--rate", "4096"])
    assert result.exit_code == 0, result.output
    reports = lines(result.stdout)
    assert len(reports) == 6
    assert all(r["status"] == "ok" for r in reports)
    frameworks = set().union(*(r["analysis"]["by_framework"] for r in reports))
    assert frameworks == {
        "cargo-test",
        "go-testing",
        "jest",
        "junit5",
        "pytest",
        "unittest",
        "vitest",
    }


@pytest.fixture
def slow_proxy(daemon: GitDaemon) -> ThrottlingProxy:
    # The 128 KiB a test waits for take half a second; the rest of the 4 MiB blob
    # takes 15 s more, long beside a stop, which must come before it is all sent.
    return ThrottlingProxy(daemon.port, rate=256 * 1024)


# The group cases are what Ctrl-C in a terminal, ``docker stop`` and systemd do: every
# process of the run gets the signal, workers and their zygote included. Repeated:
# a shutdown that races its workers' deaths fails only sometimes.
@pytest.mark.parametrize(
    ("sig", "code", "group"),
    [(signal.SIGINT, 130, False), (signal.SIGTERM, 143, False), (signal.SIGINT, 130, True)]
    + [(signal.SIGTERM, 143, True)] * 10,
)
async def test_signal_during_a_run_shuts_down_cleanly(
    sig: signal.Signals, code: int, group: bool, slow_proxy: ThrottlingProxy, tmpdir_env: Path
) -> None:
    run_id = uuid.uuid4().hex
    marker = f"CLONEGATE_TEST_RUN={run_id}".encode()
    async with trio.open_nursery() as nursery:
        await nursery.start(slow_proxy.serve)
        url = f"git://127.0.0.1:{slow_proxy.port}/big.git"
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", "analyze", url, url.replace("big", "basic")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "CLONEGATE_TEST_RUN": run_id},
            start_new_session=group,
        )
        await slow_proxy.wait_forwarded(128 * 1024)  # a clone is mid-transfer
        assert len(processes_with(marker)) >= 3  # clonegate, its zygote, a worker
        # One zygote: the one the command line started before its imports serves the run.
        assert len(zygote_pids(process.pid)) == 1
        assert list(tmpdir_env.iterdir())  # its directory exists
        if group:
            os.killpg(process.pid, sig)
        else:
            process.send_signal(sig)
        # A generous bound that only turns a hang into a failure; how fast clonegate
        # stops is measured in bench/bench_stop.py.
        with trio.fail_after(60):
            returncode = await process.wait()
        forwarded_at_exit = slow_proxy.forwarded
        nursery.cancel_scope.cancel()
    assert process.stderr is not None
    stderr = b""
    while chunk := await process.stderr.receive_some():
        stderr += chunk
    assert returncode == code
    assert b"Traceback" not in stderr
    assert forwarded_at_exit < BIG_BLOB_BYTES  # the clone was stopped, not waited for
    assert list(tmpdir_env.iterdir()) == []  # no partial clone directory
    assert processes_with(marker) == set()  # no worker left behind


def test_verbose_quiet_and_completion(daemon: GitDaemon, tmpdir_env: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmpdir_env)}
    verbose = subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "--verbose", daemon.url("basic")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert verbose.returncode == 0
    assert len(lines(verbose.stdout)) == 1  # stdout: results only
    for step in ("queued", "cloning", "cloned", "analyzing", "done ok"):
        assert f" {step} {daemon.url('basic')}" in verbose.stderr
    quiet = subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "--quiet", daemon.url("no-such-repo")],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert quiet.returncode == 1
    assert quiet.stderr == ""
    assert lines(quiet.stdout)[0]["error"]["kind"] == "not_found"
    helped = subprocess.run(
        [sys.executable, "-m", "clonegate", "--help"], capture_output=True, text=True, check=False
    )
    assert "--install-completion" in helped.stdout


def test_keep_on_a_file_is_a_usage_error(runner: CliRunner, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = runner.invoke(app, ["analyze", "--keep", str(blocker), "git://127.0.0.1/x.git"])
    assert result.exit_code == 2
    assert "--keep" in result.output


def test_a_closed_pipe_stops_quietly(daemon: GitDaemon, tmpdir_env: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmpdir_env)}
    urls = [daemon.url("basic"), daemon.url("trunk"), daemon.url("big")]
    process = subprocess.Popen(
        [sys.executable, "-m", "clonegate", "analyze", "-j", "1", *urls],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    process.stdout.readline()  # the first report, then the reader goes away
    process.stdout.close()
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 141
    assert b"Traceback" not in stderr
    assert list(tmpdir_env.iterdir()) == []

"""Hostile input and hostile servers: nothing they send breaks the output or the batch.

Servers are real, on 127.0.0.1; the command line runs as people run it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from clonegate_cli.app import app

from .support.processes import descendant_pids
from .support.proxy import ThrottlingProxy
from .support.servers import GitDaemon, SshServer, raw_tcp_server

# Markup for rich, a terminal title change (OSC), a screen clear (CSI), a bell.
HOSTILE = "[/bold] [red]x[/red] \x1b]0;pwned\x07 \x1b[2J done"


def answer_with_an_error_line(conn: socket.socket) -> None:
    """A git:// server that refuses every request with ``ERR <HOSTILE>``."""
    try:
        conn.recv(65536)
        message = b"ERR " + HOSTILE.encode() + b"\n"
        conn.sendall(b"%04x" % (len(message) + 4) + message)
        conn.shutdown(socket.SHUT_WR)
    except OSError:
        pass


@pytest.mark.parametrize("output_format", ["table", "json", "jsonl"])
def test_a_servers_message_cannot_break_or_hijack_the_output(
    runner: CliRunner, daemon: GitDaemon, tmpdir_env: Path, output_format: str
) -> None:
    with raw_tcp_server(answer_with_an_error_line) as port:
        hostile = f"git://127.0.0.1:{port}/evil.git"
        result = runner.invoke(
            app, ["analyze", "-v", "--format", output_format, hostile, daemon.url("basic")]
        )
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "\x1b" not in result.output  # not on stdout, not in the logs on stderr
    assert "\x07" not in result.output
    if output_format == "table":
        text = " ".join(result.stdout.split())
        assert "ok" in text
        assert daemon.url("basic") in text  # every other repository is still reported
        # Shown as what it is: markup as text, escapes escaped.
        assert "[/bold] [red]x[/red] \\x1b]0;pwned\\x07 \\x1b[2J done" in text
        return
    if output_format == "json":
        reports = json.loads(result.stdout)["repositories"]
    else:
        reports = [json.loads(line) for line in result.stdout.splitlines()]
    by_url = {r["url"]: r for r in reports}
    assert by_url[daemon.url("basic")]["status"] == "ok"
    # JSON keeps the data, escaped by the encoder.
    assert HOSTILE in by_url[hostile]["error"]["message"]
    assert "\\u001b]0;pwned" in result.stdout


def run_cli(*args: bytes, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable.encode(), b"-m", b"clonegate", b"analyze", *args],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )


def test_bytes_that_are_not_utf8_are_usage_errors_naming_the_line(tmp_path: Path) -> None:
    listing = tmp_path / "repos.txt"
    listing.write_bytes(
        b"\xef\xbb\xbf"  # a byte-order mark: accepted, ignored
        b"# mirrors\r\n"
        b"https://git.example/org/a.git   # the first one\r\n"
        b"\n"
        b"https://git.example/org/\xff.git\n"
        b"https://git.example/org/c.git\n"
    )
    result = run_cli(b"--from-file", str(listing).encode())
    assert result.returncode == 2
    stderr = result.stderr.decode()
    assert "nothing was cloned" in stderr
    assert f"{listing} line 4: not UTF-8 (byte 0xff at column 25)" in stderr
    assert "https://git.example/org/\\udcff.git" in stderr  # shown escaped
    assert stderr.count(" line ") == 1  # the BOM, CRLF and the trailing comment are fine
    assert "Traceback" not in stderr

    same_on_stdin = run_cli(b"--from-file", b"-", stdin=listing.read_bytes())
    assert same_on_stdin.returncode == 2
    assert "stdin line 4: not UTF-8" in same_on_stdin.stderr.decode()

    argument = run_cli(b"https://git.example/org/a.git", b"https://h/\xff.git")
    assert argument.returncode == 2
    assert "argument 2: https://h/\\udcff.git: the URL is not valid UTF-8" in (
        argument.stderr.decode()
    )


def test_good_lines_with_comments_and_crlf_are_read(runner: CliRunner, daemon: GitDaemon) -> None:
    listing = f"\ufeff{daemon.url('basic')}  # a comment\r\n# only a comment\r\n"
    result = runner.invoke(app, ["analyze", "--from-file", "-"], input=listing)
    assert result.exit_code == 0, result.output
    (report,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert report["url"] == daemon.url("basic")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("ssh://-oProxyCommand=touch${IFS}pwned/x", "is not a host name"),
        ("-oProxyCommand=touch@host:repo", "is not a login name"),
        ("ssh://git@x;id>pwned;/r", "is not a host name"),
        ("ssh://-l@host/x", "is not a login name"),
        ("git@-host:org/repo.git", "is not a host name"),
        ("https://host%0a.example/x", "not a host name"),
        ("https://h/a%0Ab.git", "control characters"),
        ("https://h/\x1b[2J.git", "control characters"),
    ],
)
def test_option_and_command_injection_urls_are_refused_before_anything_runs(
    url: str, reason: str, tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "--", url],  # (-o is --output)
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        check=False,
        timeout=120,
    )
    assert result.returncode == 2
    assert reason in result.stderr
    assert "\x1b" not in result.stderr
    assert list(tmp_path.iterdir()) == []  # nothing ran: no clone, no file made


async def test_worker_processes_do_not_inherit_the_token(
    daemon: GitDaemon, tmpdir_env: Path
) -> None:
    secret = "s3cret-token-for-environ-test"
    proxy = ThrottlingProxy(daemon.port, rate=64 * 1024)
    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", "analyze", f"git://127.0.0.1:{proxy.port}/big.git"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "CLONEGATE_TOKEN": secret, "CLONEGATE_TOKEN_HOST": "git.example"},
        )
        with trio.fail_after(120):  # only turns a hang into a failure
            await proxy.wait_forwarded(128 * 1024)  # a worker is cloning right now
        workers = descendant_pids(process.pid)  # the zygote and the busy worker
        environs = {pid: Path(f"/proc/{pid}/environ").read_bytes() for pid in workers}
        process.terminate()
        with trio.fail_after(60):  # only turns a hang into a failure
            await process.wait()
        nursery.cancel_scope.cancel()
    assert len(workers) >= 2  # the clone runs in a worker process...
    for environ in environs.values():  # ...which never saw the token
        assert b"CLONEGATE_TOKEN=" not in environ
        assert secret.encode() not in environ


def test_an_ssh_child_gets_a_minimal_environment(
    sshd: SshServer, repo_root: Path, tmp_path: Path
) -> None:
    # The ssh program is a script that records the environment it was started with,
    # then runs the real ssh: the clone goes through, and the record is exact.
    seen = tmp_path / "ssh-environ"
    script = tmp_path / "recording-ssh"
    script.write_text(f'#!/bin/sh\ncat /proc/$$/environ > {seen}\nexec {sshd.ssh_command} "$@"\n')
    script.chmod(0o700)
    secret = "s3cret-token-for-ssh-environ-test"
    result = subprocess.run(
        [
            *(sys.executable, "-m", "clonegate", "analyze", "--format", "jsonl"),
            *("--ssh-command", str(script), sshd.url(repo_root, "basic")),
        ],
        capture_output=True,
        env={
            **os.environ,
            "CLONEGATE_TOKEN": secret,
            "CLONEGATE_TOKEN_HOST": "git.example",
            "UNRELATED_SECRET": "unrelated-value",
            "LC_ALL": "C.UTF-8",
        },
        timeout=300,  # only turns a hang into a failure
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["status"] == "ok"
    environ = dict(item.split(b"=", 1) for item in seen.read_bytes().split(b"\0") if b"=" in item)
    assert secret.encode() not in seen.read_bytes()
    assert b"UNRELATED_SECRET" not in environ
    assert environ[b"LC_ALL"] == b"C.UTF-8"  # what ssh needs stays: locale, PATH, HOME
    assert environ[b"PATH"]
    assert environ[b"HOME"]
    # No git configuration but the repository's own, and no prompt.
    assert environ[b"GIT_CONFIG_NOSYSTEM"] == b"1"
    assert environ[b"GIT_TERMINAL_PROMPT"] == b"0"


def test_credentials_need_their_host(runner: CliRunner, tmp_path: Path) -> None:
    url = "https://git.example/org/repo.git"
    cases = {
        ("--token", "t0ken", url): "a token needs its host: add --token-host HOST",
        ("--token-host", "git.example", url): "--token-host names the host of a token",
        ("--token", "t0ken", "--token-host", "https://git.example/", url): "give only host[:port]",
        ("--token", "t0ken", "--token-host", "-oProxyCommand=x", url): "is not a host name",
        ("--netrc", str(tmp_path / "missing"), url): "No such file or directory",
    }
    loose = tmp_path / "netrc"
    loose.write_text("machine git.example login me password pw\n")
    loose.chmod(0o644)
    cases[("--netrc", str(loose), url)] = "other users can read this file; chmod 600 it"
    broken = tmp_path / "broken"
    broken.write_text("machine git.example login me secret pw\n")
    broken.chmod(0o600)
    cases[("--netrc", str(broken), url)] = "line 1"
    for args, message in cases.items():
        result = runner.invoke(app, ["analyze", *args])
        assert result.exit_code == 2, (args, result.output)
        assert message in " ".join(result.output.split()), (args, result.output)
    # From the environment too, and the token is never echoed back.
    env = runner.invoke(app, ["analyze", url], env={"CLONEGATE_TOKEN": "t0ken-from-env"})
    assert env.exit_code == 2
    assert "a token needs its host" in env.output
    assert "t0ken-from-env" not in env.output

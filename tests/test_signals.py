"""Signals always stop a run (issue 38): with stdout a pipe nobody reads, and SIGHUP.

Each case runs the installed command line against git servers on 127.0.0.1: one
repository that finishes at once and one that a throttling proxy holds mid-transfer.
The signal is sent once the run is blocked, which the test knows from events (the
first repository's ``done`` line on stderr, the proxy's forwarded bytes), never from
a sleep.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import signal
import subprocess
import sys
import termios
import uuid
from pathlib import Path

import pytest
import trio

from .support.pipes import full_pipe
from .support.processes import processes_with
from .support.proxy import ThrottlingProxy
from .support.repos import BIG_BLOB_BYTES
from .support.servers import GitDaemon


@pytest.fixture
def slow_proxy(daemon: GitDaemon) -> ThrottlingProxy:
    # The 128 KiB a test waits for take half a second; the rest of the 4 MiB blob
    # takes 15 s more, long beside a stop, which must come before it is all sent.
    return ThrottlingProxy(daemon.port, rate=256 * 1024)


async def _read_until(stream: trio.abc.ReceiveStream, needle: bytes, seen: bytearray) -> None:
    while needle not in seen:
        chunk = await stream.receive_some()
        if not chunk:
            raise AssertionError(f"stderr ended before {needle!r}: {bytes(seen)!r}")
        seen += chunk


async def _stop_a_run(
    sig: signal.Signals,
    *,
    group: bool,
    stdout: int,
    proxy: ThrottlingProxy,
    daemon: GitDaemon,
    output_format: str = "jsonl",
) -> tuple[int, bytes, bytes, int]:
    """Run ``analyze`` over a quick repository and a slow one, send ``sig`` once the
    quick one is done and the slow one mid-transfer; its exit status, stderr, what it
    wrote on stdout if that is a pipe the test reads, and the bytes the proxy forwarded."""
    run_id = uuid.uuid4().hex
    marker = f"CLONEGATE_TEST_RUN={run_id}".encode()
    quick = daemon.url("basic")
    seen = bytearray()
    stdout_read = b""
    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        slow = f"git://127.0.0.1:{proxy.port}/big.git"
        command = ["analyze", "-v", "--format", output_format, quick, slow]
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", *command],
            stdout=stdout,
            stderr=subprocess.PIPE,
            env={**os.environ, "CLONEGATE_TEST_RUN": run_id},
            start_new_session=group,
        )
        assert process.stderr is not None
        try:
            with trio.fail_after(60):  # a safety net only; events drive the test
                await _read_until(process.stderr, f"done ok {quick}".encode(), seen)
                await proxy.wait_forwarded(128 * 1024)  # the slow clone is mid-transfer
            if group:
                os.killpg(process.pid, sig)
            else:
                process.send_signal(sig)
            # A generous bound that turns a hang into a failure, never the assertion.
            with trio.move_on_after(60):
                await process.wait()
                while chunk := await process.stderr.receive_some():
                    seen += chunk
                if process.stdout is not None:
                    while chunk := await process.stdout.receive_some():
                        stdout_read += chunk
        finally:
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGKILL) if group else process.kill()
                await process.wait()
        forwarded = proxy.forwarded
        nursery.cancel_scope.cancel()
    assert processes_with(marker) == set(), "a process of the run was left behind"
    assert process.returncode is not None
    return process.returncode, bytes(seen), stdout_read, forwarded


@pytest.mark.parametrize(
    ("sig", "code", "group"),
    [
        (signal.SIGTERM, 143, False),
        (signal.SIGINT, 130, False),
        (signal.SIGHUP, 129, False),
        (signal.SIGINT, 130, True),
    ],
)
async def test_a_signal_stops_a_run_whose_stdout_is_full(
    sig: signal.Signals,
    code: int,
    group: bool,
    slow_proxy: ThrottlingProxy,
    daemon: GitDaemon,
    tmpdir_env: Path,
) -> None:
    with full_pipe() as (_read_end, write_end):
        returncode, stderr, _, forwarded = await _stop_a_run(
            sig, group=group, stdout=write_end, proxy=slow_proxy, daemon=daemon
        )
    assert returncode == code, stderr.decode(errors="replace")
    assert b"Traceback" not in stderr
    assert b"not written" in stderr  # says what it could not write, and why
    assert forwarded < BIG_BLOB_BYTES  # the slow clone was stopped, not waited for
    assert list(tmpdir_env.iterdir()) == []  # every clone directory removed


@pytest.mark.parametrize("output_format", ["jsonl", "json"])
@pytest.mark.parametrize("group", [False, True])
async def test_sighup_is_handled_like_sigterm(
    output_format: str,
    group: bool,
    slow_proxy: ThrottlingProxy,
    daemon: GitDaemon,
    tmpdir_env: Path,
) -> None:
    returncode, stderr, stdout, forwarded = await _stop_a_run(
        signal.SIGHUP,
        group=group,
        stdout=subprocess.PIPE,
        proxy=slow_proxy,
        daemon=daemon,
        output_format=output_format,
    )
    assert returncode == 129, stderr.decode(errors="replace")
    assert b"Traceback" not in stderr
    assert b"hung up; every clone was stopped and removed" in stderr
    # What finished is written: the quick repository's report.
    if output_format == "jsonl":
        reports = [json.loads(line) for line in stdout.splitlines()]
    else:
        reports = json.loads(stdout)["repositories"]
    assert [r["url"] for r in reports] == [daemon.url("basic")]
    assert forwarded < BIG_BLOB_BYTES
    assert list(tmpdir_env.iterdir()) == []


def test_the_full_pipe_helper_is_full() -> None:
    with full_pipe() as (_read_end, write_end):
        flags = fcntl.fcntl(write_end, fcntl.F_GETFL)
        assert not flags & os.O_NONBLOCK
        os.set_blocking(write_end, False)
        with pytest.raises(BlockingIOError):
            os.write(write_end, b"x")
        os.set_blocking(write_end, True)


async def test_a_closed_terminal_stops_the_run(
    slow_proxy: ThrottlingProxy, daemon: GitDaemon, tmpdir_env: Path
) -> None:
    """The real SIGHUP: clonegate runs on a terminal of its own (a pseudo-terminal it
    controls, as a shell's job does), whose other end the test closes mid-run. The
    kernel hangs the terminal up, sends SIGHUP, and every write to it fails."""
    run_id = uuid.uuid4().hex
    marker = f"CLONEGATE_TEST_RUN={run_id}".encode()
    leader, follower = pty.openpty()

    def controlled_by_the_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)  # after setsid: its controlling terminal

    async with trio.open_nursery() as nursery:
        await nursery.start(slow_proxy.serve)
        quick = daemon.url("basic")
        slow = f"git://127.0.0.1:{slow_proxy.port}/big.git"
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", "analyze", "-v", quick, slow],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            start_new_session=True,
            preexec_fn=controlled_by_the_terminal,
            env={**os.environ, "CLONEGATE_TEST_RUN": run_id, "COLUMNS": "160"},
        )
        os.close(follower)
        terminal = trio.lowlevel.FdStream(leader)
        seen = bytearray()
        try:
            with trio.fail_after(60):  # a safety net only
                await _read_until(terminal, f"done ok {quick}".encode(), seen)
                await slow_proxy.wait_forwarded(128 * 1024)
            await terminal.aclose()  # the terminal window closes
            with trio.move_on_after(60):
                await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
        forwarded = slow_proxy.forwarded
        nursery.cancel_scope.cancel()
    assert process.returncode == 129
    assert forwarded < BIG_BLOB_BYTES
    assert list(tmpdir_env.iterdir()) == []
    assert processes_with(marker) == set()


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
async def test_a_signal_stops_a_run_whose_stderr_is_full(
    sig: signal.Signals,
    code: int,
    slow_proxy: ThrottlingProxy,
    daemon: GitDaemon,
    tmpdir_env: Path,
) -> None:
    """stderr a pipe nobody reads (-v writes a line per step): the progress lines wait,
    the run goes on, and a signal stops it. The quick repository's report on stdout
    says the run went on."""
    run_id = uuid.uuid4().hex
    marker = f"CLONEGATE_TEST_RUN={run_id}".encode()
    quick = daemon.url("basic")
    with full_pipe() as (_read_end, write_end):
        async with trio.open_nursery() as nursery:
            await nursery.start(slow_proxy.serve)
            slow = f"git://127.0.0.1:{slow_proxy.port}/big.git"
            process = await trio.lowlevel.open_process(
                [sys.executable, "-m", "clonegate", "analyze", "-v", quick, slow],
                stdout=subprocess.PIPE,
                stderr=write_end,
                env={**os.environ, "CLONEGATE_TEST_RUN": run_id},
            )
            assert process.stdout is not None
            seen = bytearray()
            try:
                with trio.fail_after(60):  # a safety net only
                    await _read_until(process.stdout, quick.encode(), seen)
                    await slow_proxy.wait_forwarded(128 * 1024)
                process.send_signal(sig)
                with trio.move_on_after(60):
                    await process.wait()
            finally:
                if process.returncode is None:
                    process.kill()
                    await process.wait()
            forwarded = slow_proxy.forwarded
            nursery.cancel_scope.cancel()
    assert process.returncode == code
    assert forwarded < BIG_BLOB_BYTES
    assert list(tmpdir_env.iterdir()) == []
    assert processes_with(marker) == set()

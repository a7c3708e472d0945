"""Nothing outlives clonegate: killed with SIGKILL mid-clone, its whole process tree ends,
and the next run removes the dead run's directories but not a live run's.

The process under test is a plain script using the library. Every process below it
is found by pid (not by name) while its clones are in flight, and each one's end is
awaited through a pidfd: no sampling, no sleep.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from clonegate._adapters.git.debris import new_clone_directory, remove_dead_runs

from .support.processes import descendant_pids

SCRIPT = """
import sys, trio
from pathlib import Path
from clonegate import CloneSettings, open_analyzer, with_max_concurrent_clones

async def main():
    clone = CloneSettings(ssh_command=sys.argv[1], work_dir=Path(sys.argv[2]))
    async with (
        open_analyzer(with_max_concurrent_clones(2), clone=clone) as use_case,
        use_case.analyze_many(sys.argv[3:]) as batch,
    ):
        async for report in batch:
            print(report)

trio.run(main)
"""
# An "ssh" that connects to the test's listener and waits there: a child of the
# worker that only the worker's death can end.
FAKE_SSH = """#!{python}
import socket, sys, time
socket.create_connection(("127.0.0.1", {port})).recv(1)
"""


async def test_sigkill_of_the_parent_ends_every_process_below_it(tmp_path: Path) -> None:
    connections: list[trio.SocketStream] = []
    changed = trio.Event()

    async def hold(stream: trio.SocketStream) -> None:
        nonlocal changed
        connections.append(stream)
        changed.set()
        changed = trio.Event()
        await trio.sleep_forever()  # say nothing: the clone waits on its read

    work = tmp_path / "work"
    work.mkdir()
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(
            functools.partial(trio.serve_tcp, hold, 0, host="127.0.0.1")
        )
        port = listeners[0].socket.getsockname()[1]
        fake_ssh = tmp_path / "fake-ssh"
        fake_ssh.write_text(FAKE_SSH.format(python=sys.executable, port=port))
        fake_ssh.chmod(0o755)
        process = await trio.lowlevel.open_process(
            [
                sys.executable,
                "-c",
                SCRIPT,
                str(fake_ssh),
                str(work),
                f"git://127.0.0.1:{port}/silent.git",
                "ssh://git@example.invalid/repo.git",
            ],
            stdout=subprocess.DEVNULL,
        )
        with trio.fail_after(120):  # a hang becomes a failure; nothing is timed
            while len(connections) < 2:  # the git:// clone and the fake ssh are connected
                await changed.wait()
        below = descendant_pids(process.pid)
        directories = list(work.iterdir())
        process.send_signal(signal.SIGKILL)
        await process.wait()
        pidfds = []
        for pid in below:
            with contextlib.suppress(ProcessLookupError):  # already gone
                pidfds.append(os.pidfd_open(pid))
        with trio.fail_after(30):
            for pidfd in pidfds:
                await trio.lowlevel.wait_readable(pidfd)  # readable once the process ended
                os.close(pidfd)
        nursery.cancel_scope.cancel()
    # zygote, two workers, and the fake ssh (with setpriv, if present, exec'd into it)
    assert len(below) >= 4
    assert not descendant_pids(process.pid)
    # The dead run left its clone directories; the next one removes them.
    assert len(directories) == 2
    assert all(d.exists() for d in directories)
    live = new_clone_directory(work)  # this (live) process's own
    assert sorted(work.iterdir()) == [live]
    assert remove_dead_runs(work) == []  # a live run's directory is never removed
    assert live.exists()
    live.rmdir()


def test_debris_is_named_for_a_later_run_even_out_of_file_descriptors(tmp_path: Path) -> None:
    """Issue 38: a process out of file descriptors named its directories
    ``clonegate-PID.None-…``, which no run ever removed."""
    work = tmp_path / "work"
    work.mkdir()
    first = new_clone_directory(work)  # the start time is read while it can be
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(map(int, os.listdir("/proc/self/fd"))), hard))
    taken: list[int] = []
    try:
        with contextlib.suppress(OSError):
            while True:  # every descriptor left under the limit
                taken.append(os.open(os.devnull, os.O_RDONLY))
        with pytest.raises(OSError, match="Too many open files"):
            os.open("/proc/self/stat", os.O_RDONLY)
        second = new_clone_directory(work)
    finally:
        for fd in taken:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert first.name.split("-")[1] == second.name.split("-")[1]
    assert "None" not in second.name
    # A dead run's directory from an older clonegate, with no start in its name, is
    # removed; one whose pid runs may be its owner's and stays.
    gone = _a_dead_pid()
    old = work / f"clonegate-{gone}.None-abc"
    old.mkdir()
    alive = work / f"clonegate-{os.getpid()}.None-abc"
    alive.mkdir()
    removed = remove_dead_runs(work)
    assert removed == [old]
    assert alive.exists()


def _a_dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid

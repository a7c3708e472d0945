"""The command line's first clone, started from its raw arguments before Typer and trio
load (ADR 0003, issue 47): taken over when the use case's job is the same, killed,
reaped and removed otherwise, and never started on any doubt."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import trio

from clonegate import CloneSettings, DulwichVCS
from clonegate._adapters.git import first_clone
from clonegate._adapters.preloads import CLONE_MODULES
from clonegate._adapters.workers import open_worker_pool, run_in_worker, spawn

from .support import worker_jobs
from .support.processes import pid_alive, processes_with
from .support.repos import make_repo
from .support.servers import git_daemon, raw_tcp_server

SCRIPT = Path(sys.executable).with_name("clonegate")
WAIT = 60.0  # a safety net on a loaded machine, never what a test asserts


@dataclass
class Silent:
    """A git:// server that accepts and never answers; what it saw."""

    port: int = 0
    connected: threading.Event = field(default_factory=threading.Event)
    requested: threading.Event = field(default_factory=threading.Event)  # a whole request line
    closed: threading.Event = field(default_factory=threading.Event)
    received: bytes = b""

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}.git"


@contextmanager
def silent_git() -> Iterator[Silent]:
    silent = Silent()

    def serve(conn: socket.socket) -> None:
        silent.connected.set()
        try:
            while data := conn.recv(65536):
                silent.received += data
                if b"\0" in silent.received:  # git://'s request line ends in NULs
                    silent.requested.set()
        except OSError:
            pass
        silent.closed.set()

    with raw_tcp_server(serve) as port:
        silent.port = port
        yield silent


@dataclass
class Served:
    daemon_url: str
    requests: Path  # one line per request the daemon was asked to serve

    def served(self) -> list[str]:
        """Each request the daemon was asked to serve: its service and repository."""
        lines = self.requests.read_text().splitlines()
        return [f"{line.split()[0]} {Path(line.split()[1]).name}" for line in lines]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    root = tmp_path / "served"
    root.mkdir()
    make_repo(root, "tiny", files={"test_a.py": b"def test_a():\n    pass\n"})
    requests = tmp_path / "requests.log"
    requests.touch()
    hook = tmp_path / "hook.sh"
    hook.write_text(f'#!/bin/sh\necho "$1 $2" >> {requests}\n')
    hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
    with git_daemon(root, None, f"--access-hook={hook}") as daemon:
        yield Served(daemon.url("tiny"), requests)


def environment(work: Path) -> dict[str, str]:
    """This process's environment with ``TMPDIR`` (where a run's clones go, and the
    mark of every process it starts) set to ``work``, and no CLONEGATE_ variable."""
    work.mkdir(exist_ok=True)
    kept = {k: v for k, v in os.environ.items() if not k.startswith("CLONEGATE_")}
    return {**kept, "TMPDIR": str(work)}


def nothing_left(work: Path) -> None:
    """No directory in ``work``, and no process of the run (its zygote, its workers)."""
    assert os.listdir(work) == []
    assert processes_with(f"TMPDIR={work}\0".encode()) == set()


def analyze(*arguments: str, work: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), "analyze", *arguments],
        capture_output=True,
        text=True,
        env=environment(work),
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "options",
    [
        [],
        # What the early reader understands reads as the command's options do.
        ["--depth", "2", "-j", "3"],
        ["--depth=0", "--max-concurrent-clones=1"],
    ],
)
def test_a_plain_analyze_takes_its_first_clone_over(
    served: Served, tmp_path: Path, options: list[str]
) -> None:
    arguments = ("--format", "json", "-v", *options, served.daemon_url)
    done = analyze(*arguments, work=tmp_path / "work")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["summary"]["ok"] == 1
    assert "the clone started with the command line goes on" in done.stderr
    # One clone, not the first one killed and another made: the daemon served it once.
    assert served.served() == ["upload-pack tiny.git"]
    nothing_left(tmp_path / "work")


def test_a_command_that_fails_before_cloning_leaves_nothing_of_its_first_clone(
    tmp_path: Path,
) -> None:
    with silent_git() as silent:
        # -j 0 is understood by the early reader, refused by the command's own checks:
        # the message is the command's, and the first clone (if its worker was forked
        # by then: the command may fail first) is killed, reaped and removed.
        done = analyze("--format", "json", "-j", "0", silent.url("x"), work=tmp_path / "work")
        assert done.returncode == 2
        assert "-j/--max-concurrent-clones must be at least 1, got 0" in done.stderr
        assert not silent.connected.is_set() or silent.closed.wait(WAIT)
    nothing_left(tmp_path / "work")


def test_a_program_that_ends_without_taking_its_first_clone_over_ends_it(
    tmp_path: Path,
) -> None:
    script = (
        "import os, sys; from clonegate.workers import *; "
        "prestart_first_clone(os.environ); start_first_clone(sys.argv[1]); "
        "sys.stdin.readline(); end_first_clone()"
    )
    work = tmp_path / "work"
    with silent_git() as silent:
        with subprocess.Popen(
            [sys.executable, "-c", script, silent.url("x")],
            env=environment(work),
            stdin=subprocess.PIPE,
        ) as program:
            assert silent.connected.wait(WAIT)  # the first clone waits for the server
            assert len(os.listdir(work)) == 1  # its directory
            assert program.stdin is not None
            program.stdin.close()  # the program ends, without a pool
            assert program.wait(WAIT) == 0
        # Its zygote and worker reaped before it exited, the directory removed.
        nothing_left(work)
        assert silent.closed.wait(WAIT)


def test_ctrl_c_while_the_first_clone_waits_kills_and_removes_it(tmp_path: Path) -> None:
    with silent_git() as silent:
        command = [str(SCRIPT), "analyze", "--format", "json", silent.url("x")]
        work = tmp_path / "work"
        with subprocess.Popen(
            command, env=environment(work), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        ) as process:
            assert silent.connected.wait(WAIT)  # the first clone waits for the server
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=WAIT)
        # Interrupted while importing (Python's own exit) or while running (130).
        assert process.returncode in (130, -signal.SIGINT)
        assert silent.closed.wait(WAIT)
    nothing_left(work)


def test_a_missing_repository_started_early_is_reported_as_without_an_early_start(
    served: Served, tmp_path: Path
) -> None:
    missing = served.daemon_url.replace("tiny", "missing")
    early = analyze("--format", "json", "-v", missing, work=tmp_path / "early")
    # --retries 2 is the default, which the early reader does not take: no early start.
    plain = analyze("--format", "json", "-v", "--retries", "2", missing, work=tmp_path / "plain")
    assert "the clone started with the command line goes on" in early.stderr
    assert "goes on" not in plain.stderr
    assert early.returncode == plain.returncode == 1
    reports = [json.loads(done.stdout)["repositories"][0] for done in (early, plain)]
    for report in reports:
        for volatile in ("timings", "phases", "clone_memory"):
            report.pop(volatile, None)
    assert reports[0] == reports[1]
    assert reports[0]["error"]["kind"] == "not_found"
    nothing_left(tmp_path / "early")


def test_a_url_the_library_refuses_starts_nothing_and_reads_as_before(
    served: Served, tmp_path: Path
) -> None:
    # Plain to the early reader; a control character to the library's URL rules.
    refused = served.daemon_url.replace("tiny", "tiny%1b")
    early = analyze("--format", "json", refused, work=tmp_path / "early")
    plain = analyze("--format", "json", "--retries", "2", refused, work=tmp_path / "plain")
    assert (early.returncode, early.stdout, early.stderr) == (
        plain.returncode,
        plain.stdout,
        plain.stderr,
    )
    assert "control characters" in early.stderr
    assert "\x1b" not in early.stderr
    assert served.served() == []
    nothing_left(tmp_path / "early")


@pytest.fixture
def no_prestart(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(spawn, "_prestarted", [])
    yield
    first_clone.end_first_clone()  # a test that failed midway leaves nothing running


def test_a_first_clone_of_another_job_is_killed_before_the_pool_runs_any(
    no_prestart: None, served: Served, tmp_path: Path
) -> None:
    settings = CloneSettings(work_dir=tmp_path)
    with silent_git() as silent:
        first_clone.prestart_first_clone(os.environ)
        assert first_clone.start_first_clone(silent.url("x"), settings)
        (zygote,) = spawn._prestarted
        first = zygote.first
        assert first is not None
        assert first.leftover is not None
        leftover = Path(first.leftover)
        # The first clone is under way (the server has its request) when the pool
        # runs another job.
        assert silent.requested.wait(WAIT)

        async def main() -> None:
            async with open_worker_pool() as pool:
                vcs = DulwichVCS(settings, pool=pool)
                source = await vcs.clone(served.daemon_url)
                assert source.commit
                # Killed and reaped before the clone was forked, its directory gone.
                assert first.state == "ended"
                assert first.pid is not None
                assert not pid_alive(first.pid)
                assert not leftover.exists()
                assert pool.statistics().workers_started == 2
                await source.aclose()

        trio.run(main)
        assert b"git-upload-pack /x.git" in silent.received
        assert silent.closed.wait(WAIT)


def test_the_same_job_runs_in_the_first_clones_worker(
    no_prestart: None, served: Served, tmp_path: Path
) -> None:
    settings = CloneSettings(work_dir=tmp_path)
    first_clone.prestart_first_clone(os.environ)
    assert first_clone.start_first_clone(served.daemon_url, settings)
    first = spawn._prestarted[0].first
    assert first is not None

    async def main() -> None:
        async with open_worker_pool() as pool:
            vcs = DulwichVCS(settings, pool=pool)
            source = await vcs.clone(served.daemon_url, on_progress=lambda _: None)
            assert first.state == "claimed"
            assert str(source.path).startswith(str(first.leftover))
            assert pool.statistics().workers_started == 1  # no fork but the first's
            await source.aclose()

    trio.run(main)
    assert served.served() == ["upload-pack tiny.git"]


async def test_a_clone_imports_nothing_past_the_clone_modules(
    served: Served, tmp_path: Path
) -> None:
    """The first clone's worker is forked before the grammars' modules: a module it
    imported itself would be compiled again, on the first result's path."""
    preload = (*CLONE_MODULES, "tests.support.worker_jobs")
    async with open_worker_pool(preload=preload) as pool:
        target = str(tmp_path / "clone")
        imported = await run_in_worker(
            pool, worker_jobs.modules_a_clone_imports, served.daemon_url, target
        )
    assert imported == []


@pytest.mark.parametrize(
    "differs",
    [
        {"depth": 2},
        {"read_timeout": 60.0},
        {"max_memory": 512 << 20},  # the allowance
        {"max_repo_size": 1 << 30},  # the kind of served worker
        {"low_speed_limit": 10},  # the envelope
    ],
)
def test_a_first_clone_of_the_same_url_with_other_settings_is_not_taken_over(
    no_prestart: None, served: Served, tmp_path: Path, differs: dict[str, object]
) -> None:
    first_clone.prestart_first_clone(os.environ)
    assert first_clone.start_first_clone(served.daemon_url, CloneSettings(work_dir=tmp_path))
    first = spawn._prestarted[0].first
    assert first is not None
    assert first.leftover is not None
    leftover = Path(first.leftover)

    async def main() -> None:
        async with open_worker_pool() as pool:
            vcs = DulwichVCS(CloneSettings(work_dir=tmp_path, **differs), pool=pool)  # type: ignore[arg-type]
            source = await vcs.clone(served.daemon_url, on_progress=lambda _: None)
            assert first.state == "ended"
            assert first.pid is not None
            assert not pid_alive(first.pid)
            assert not leftover.exists()
            assert not str(source.path).startswith(str(leftover))
            await source.aclose()

    trio.run(main)


def test_a_zygote_whose_parent_left_before_the_first_fork_ends_quietly() -> None:
    # A command that fails fast closes the zygote's control socket before the zygote
    # forks the first job's worker: nothing to tell, and nothing on the user's stderr.
    script = (
        "from clonegate._adapters.workers import spawn; "
        "z = spawn.start(['json'], None, first_after=1); "
        "z.process.stdin.write(spawn.NO_INIT); z.process.stdin.close(); z.control.close(); "
        "print(z.process.wait())"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=WAIT, check=True
    )
    assert (done.stdout, done.stderr) == ("0\n", "")


def test_without_a_zygote_waiting_for_it_no_first_clone_is_sent(
    no_prestart: None, tmp_path: Path
) -> None:
    settings = CloneSettings(work_dir=tmp_path)
    assert not first_clone.start_first_clone("git://127.0.0.1:9/x.git", settings)
    assert os.listdir(tmp_path) == []


def test_a_first_clone_is_taken_over_before_the_zygote_is_ready(
    no_prestart: None, served: Served, tmp_path: Path
) -> None:
    """The first clone's reply is read as soon as the zygote has told of its worker,
    while the zygote still imports the rest of its preload: a first result waited
    for the grammars before (issue 47)."""
    fifo = tmp_path / "held"
    os.mkfifo(fifo)
    preload = (*CLONE_MODULES, "tests.support.held_import")
    environment = {**os.environ, "CLONEGATE_TEST_HELD_IMPORT": str(fifo)}
    spawn.prestart(preload, environment, first_after=len(CLONE_MODULES))
    settings = CloneSettings(work_dir=tmp_path)
    assert first_clone.start_first_clone(served.daemon_url, settings)
    first = spawn._prestarted[0].first
    assert first is not None

    async def main() -> None:
        async with open_worker_pool(preload=preload) as pool:
            try:
                with trio.fail_after(WAIT):  # a safety net: before, it waited for ever
                    source = await DulwichVCS(settings, pool=pool).clone(
                        served.daemon_url, on_progress=lambda _: None
                    )
                assert first.state == "claimed"
                assert not pool._started.is_set()  # the zygote is still importing
                await source.aclose()
            finally:
                # Opened for writing once the zygote reads it, then closed: its end.
                await trio.to_thread.run_sync(lambda: os.close(os.open(fifo, os.O_WRONLY)))

    trio.run(main)
    assert served.served() == ["upload-pack tiny.git"]

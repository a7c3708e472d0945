"""What a killed run leaves under ``--keep`` is removed by the next one, removing a
kept clone follows no symbolic link, and the walk leaks no descriptor (issue 38,
ADR 0011)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clonegate import CloneSettings, DulwichVCS
from clonegate._adapters.git.kept_debris import staging_prefix
from clonegate._adapters.git.kept_place import KeptPlace, open_parent

from .support.keep_scene import Scene, clonegate_analyze, snapshot, staging_left
from .support.repos import make_repo
from .support.servers import git_daemon, never_answer, raw_tcp_server

HERE = staging_prefix().split("-")[1].split(".")[2]  # this machine and pid namespace


@pytest.fixture
def keep_scene(tmp_path: Path) -> Iterator[Scene]:
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "org/team/repo", commits=2)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious").write_text("mine\n")
    with git_daemon(served) as daemon:
        yield Scene(daemon, served, tmp_path / "keep", victim)


def started(pid: int) -> str:
    """Process ``pid``'s start time, as /proc gives it."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]


def ended_process() -> str:
    """The ``<pid>.<start>.<where>`` of a process of this machine and pid namespace
    that has ended: an owner no longer running."""
    reads = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    child = subprocess.Popen(reads, stdin=subprocess.PIPE)
    start = started(child.pid)
    assert child.stdin is not None
    child.stdin.close()
    child.wait()
    return f"{child.pid}.{start}.{HERE}"


def plant(directory: Path, victim: Path) -> Path:
    """A staging directory as a killed run leaves it: a half-made clone, whose files
    may be links out of the keep directory."""
    directory.mkdir(parents=True)
    (directory / "repo" / ".git").mkdir(parents=True)
    (directory / "repo" / "file").write_text("half\n")
    (directory / "repo" / "out").symlink_to(victim, target_is_directory=True)
    (directory / "repo" / "precious").symlink_to(victim / "precious")
    return directory


async def test_a_later_run_removes_the_staging_directories_of_ended_runs_only(
    keep_scene: Scene,
) -> None:
    scene, dead, ours = keep_scene, ended_process(), staging_prefix()
    elsewhere = dead.replace(HERE, "0" * 8 if HERE != "0" * 8 else "1" * 8)
    host = scene.host
    stale = [
        plant(host / "org" / "team" / f".clonegate-{dead}-0a1b2c3d4e5f", scene.victim),
        # Beside a place this run does not clone: the whole keep directory is swept.
        plant(scene.keep / "elsewhere_1" / "g" / "r" / f".clonegate-{dead}-00ff", scene.victim),
    ]
    kept = [
        plant(host / "org" / "team" / f"{ours}abcdef", scene.victim),  # a running owner
        plant(host / "org" / ".clonegate-0123456789ab", scene.victim),  # no owner named
        # Inside a clone's working tree: the repository's own file, not ours.
        plant(host / "clone" / f".clonegate-{dead}-0e0e", scene.victim),
        plant(scene.keep / ".hidden" / f".clonegate-{dead}-0d0d", scene.victim),
        # Another machine's, or another container's: its pid means nothing here.
        plant(host / "org" / "team" / f".clonegate-{elsewhere}-0f0f", scene.victim),
    ]
    (host / "clone" / ".git").mkdir()
    link = host / f".clonegate-{dead}-0c0c"  # a link with a staging name: not a directory
    link.symlink_to(scene.victim, target_is_directory=True)
    before = snapshot(scene.victim)

    await DulwichVCS(CloneSettings(checkout=True, keep_in=scene.keep)).clone(
        scene.daemon.url("org/team/repo")
    )

    assert [path for path in stale if os.path.lexists(path)] == []
    assert [path for path in kept if not path.is_dir()] == []
    assert link.is_symlink()
    assert snapshot(scene.victim) == before


def test_a_run_killed_mid_clone_leaves_a_staging_directory_the_next_run_removes(
    keep_scene: Scene,
) -> None:
    scene = keep_scene
    connected = threading.Event()

    def hold(conn: socket.socket) -> None:
        connected.set()  # the staging directory is made before the worker connects
        never_answer(conn)

    with raw_tcp_server(hold) as port:
        url = f"git://127.0.0.1:{port}/org/team/repo.git"
        run = subprocess.Popen(
            [sys.executable, "-m", "clonegate", "analyze", f"--keep={scene.keep}", url],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its workers too are killed with it
        )
        try:
            assert connected.wait(timeout=120)  # only turns a hang into a failure
        finally:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait()
    (left,) = (scene.keep / f"127.0.0.1_{port}" / "org" / "team").iterdir()
    assert left.name.startswith(f".clonegate-{run.pid}.")  # its owner, by name

    later = clonegate_analyze(scene.keep, scene.daemon.url("org/team/repo"))

    assert later.returncode == 0, later.stderr
    assert staging_left(scene.keep) == []


async def test_closing_a_kept_clone_removes_it_and_follows_no_symbolic_link(
    keep_scene: Scene,
) -> None:
    scene = keep_scene
    vcs = DulwichVCS(CloneSettings(checkout=True, keep_in=scene.keep))
    url = scene.daemon.url("org/team/repo")
    first = await vcs.clone(url)
    await first.aclose()
    assert not first.path.exists()
    await first.aclose()  # idempotent

    kept = await vcs.clone(url)
    # By the time it is closed, the path runs through a link to someone's directory
    # holding a clone of the same name.
    org = scene.host / "org"
    shutil.copytree(org, scene.victim / "org", symlinks=True)
    org.rename(org.with_name("org.moved"))
    org.symlink_to(scene.victim / "org", target_is_directory=True)
    before = snapshot(scene.victim)

    with pytest.raises(OSError, match="is a symbolic link"):
        await kept.aclose()

    assert snapshot(scene.victim) == before
    assert (org.with_name("org.moved") / "team" / "repo" / ".git").is_dir()


def test_a_directory_on_the_way_that_cannot_be_searched_leaks_no_descriptor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Running as root, no directory refuses a search: the error is simulated where the
    # walk asks whether a directory on the way is a clone.
    real_lstat = os.lstat

    def refused(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if path == ".git":
            raise PermissionError(13, "Permission denied", path)
        return real_lstat(path, *args, **kwargs)

    place = KeptPlace(str(tmp_path / "keep"), "host/org/repo")
    monkeypatch.setattr(os, "lstat", refused)
    before = len(os.listdir("/proc/self/fd"))
    for _ in range(3):
        with pytest.raises(PermissionError):
            open_parent(place, create=True)
    assert len(os.listdir("/proc/self/fd")) == before

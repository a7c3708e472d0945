"""Real memory cgroups (v1 ``memory`` controller) for tests and benchmarks (issue 15).

A :class:`MemoryCgroup` is a child of the memory cgroup this process is in, so it
needs no privilege beyond write access to that group, which these machines give. A
command runs inside it through a shell that moves itself in before ``exec``: every
process the command starts is charged to the group from its first page.
"""

from __future__ import annotations

import os
import random
import select
import signal
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from .repos import fast_import, git

MiB = 1 << 20


def own_memory_cgroup() -> Path:
    """This process's v1 memory cgroup directory; ``OSError`` saying why there is none."""
    mounts = Path("/proc/self/mountinfo").read_text().splitlines()
    mount = next(
        (
            Path(line.split()[4])
            for line in mounts
            if " - cgroup " in line and "memory" in line.rsplit(" ", 1)[-1].split(",")
        ),
        None,
    )
    if mount is None:
        raise OSError("no cgroup v1 memory controller is mounted")
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            return mount / path.lstrip("/")
    raise OSError("this process is in no memory cgroup")


@dataclass
class MemoryCgroup:
    path: Path

    def run(self, argv: Sequence[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
        """``argv`` inside this group, to completion; output captured as text."""
        inside = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(self.path), *argv]
        return subprocess.run(inside, capture_output=True, text=True, check=False, **kwargs)  # type: ignore[call-overload, no-any-return]

    @property
    def peak(self) -> int:
        """Most bytes the group has been charged at once (processes and page cache)."""
        return int((self.path / "memory.max_usage_in_bytes").read_text())

    @property
    def processes(self) -> list[int]:
        """The pids in the group now."""
        return _procs(self.path)

    @property
    def oom_kills(self) -> int:
        """Processes the kernel's OOM killer has killed in this group."""
        for line in (self.path / "memory.oom_control").read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill":
                return int(value)
        raise OSError("this kernel does not count OOM kills per cgroup")


@contextmanager
def memory_cgroup(limit: int | None = None) -> Iterator[MemoryCgroup]:
    """A fresh child memory cgroup, limited to ``limit`` bytes (no swap here: the
    machines have none, and ``memsw`` is set too where it exists); removed at exit,
    after whatever still runs in it is killed."""
    path = own_memory_cgroup() / f"clonegate-test-{uuid.uuid4().hex[:12]}"
    path.mkdir()
    try:
        if limit is not None:
            (path / "memory.limit_in_bytes").write_text(str(limit))
            memsw = path / "memory.memsw.limit_in_bytes"
            if memsw.exists():
                memsw.write_text(str(limit))
        yield MemoryCgroup(path)
    finally:
        _remove(path)


def _remove(path: Path) -> None:
    # A group can be removed only once empty: kill what is left, wait for each exit.
    for pid in _procs(path):
        try:
            pidfd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            select.select([pidfd], [], [], 10.0)
        finally:
            os.close(pidfd)
    path.rmdir()


def _procs(path: Path) -> list[int]:
    return [int(pid) for pid in (path / "cgroup.procs").read_text().split()]


def cgroup_unavailable() -> str | None:
    """Why no memory cgroup can be made here, or ``None`` if one can."""
    try:
        with memory_cgroup(64 * MiB) as group:
            group.oom_kills  # noqa: B018  (the kernel must count OOM kills)
    except OSError as exc:
        return f"no writable memory cgroup: {exc}"
    return None


def make_memory_heavy_repo(root: Path, name: str, *, blob_mib: int = 96) -> str:
    """A bare ``root/<name>.git`` whose full clone needs memory: one commit adds a
    ``blob_mib`` MiB data file (random hexadecimal text: it compresses about 2:1, so
    the pack is a little over half of it), the next changes a line of it and adds a
    small test file. One version of the file is stored as a delta of the other, and
    resolving a delta holds its base and its result whole: a clone needs about twice
    the file's size for as long as that takes, far more than the pack it receives.
    (A file that is no delta's base is hashed as it streams, and needs little.)"""
    bare = root / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    data = random.Random(15).randbytes(blob_mib * MiB // 2).hex().encode()
    edited = b"edited\n" + data[7:]
    test = b"def test_data():\n    pass\n"
    stream = b"".join(
        [
            b"commit refs/heads/main\nmark :1\n",
            b"committer Fixture <fixture@example.invalid> 1700000000 +0000\ndata 4\ndata",
            f"\nM 644 inline data/table.txt\ndata {len(data)}\n".encode(),
            data,
            b"\ncommit refs/heads/main\nmark :2\n",
            b"committer Fixture <fixture@example.invalid> 1700000001 +0000\ndata 5\ntests",
            f"\nfrom :1\nM 644 inline data/table.txt\ndata {len(edited)}\n".encode(),
            edited,
            f"\nM 644 inline tests/test_data.py\ndata {len(test)}\n".encode(),
            test,
            b"\n",
        ]
    )
    return fast_import(bare, stream)

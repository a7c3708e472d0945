"""Private clone directories that name their owner, and the debris of dead runs.

A clone's private directory is ``clonegate-<pid>.<start>-<random>`` in the work
directory: the process that made it, and that process's start time (from
``/proc``, so that a reused pid is not mistaken for the owner). A process killed
with SIGKILL cannot remove its clones; the first clone of the next clonegate
process in the same work directory removes every such directory whose owner is no
longer running, and never one whose owner is (a concurrent run's). A long-running
process (a cluster worker) looks again at most once a second, before a clone: a
peer killed beside it on the same machine leaves nothing behind for long. Directories
made by anything else, or by a clonegate without owners in names, are left alone.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

# "None" for the start: what clonegate before issue 38 wrote when it could not read
# its own start time (out of file descriptors); such a directory's owner is unknown.
_OWNED = re.compile(r"clonegate-(\d+)\.(\d+|None)-")
_own_start: dict[int, int] = {}  # pid -> its start time: read once, while it can be
_lock = threading.Lock()
_swept: dict[tuple[int, str], float] = {}  # (pid, directory) -> when (monotonic)
SWEEP_INTERVAL = 1.0


def new_clone_directory(work_dir: Path | None) -> Path:
    """A new private (0700) directory for one clone in ``work_dir`` (default: the
    system's temporary directory), named for this process. Blocking; call it in a
    thread. On this process's first use of ``work_dir``, and then at most once a
    second, dead runs' directories there are removed first."""
    parent = Path(work_dir if work_dir is not None else tempfile.gettempdir())
    pid = os.getpid()
    with _lock:
        last = _swept.get((pid, str(parent)))
        if last is None or time.monotonic() - last >= SWEEP_INTERVAL:
            remove_dead_runs(parent)
            _swept[(pid, str(parent))] = time.monotonic()
    return Path(tempfile.mkdtemp(prefix=f"clonegate-{pid}.{own_start_time()}-", dir=parent))


def own_start_time() -> int:
    """This process's start time, for the names of its directories: read once, so that
    a process out of file descriptors still names them for a later run to recognise;
    if even the first reading fails, the OSError (EMFILE) is raised: no directory is
    made that no run would ever remove."""
    pid = os.getpid()  # a forked worker is another process, with its own start
    start = _own_start.get(pid)
    if start is None:
        start = _start_time(pid, strict=True)
        assert start is not None  # strict: this process is running
        _own_start[pid] = start
    return start


def remove_dead_runs(parent: Path) -> list[Path]:
    """Remove the clone directories in ``parent`` whose owner process has ended."""
    removed: list[Path] = []
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        owner = _OWNED.match(entry.name)
        if owner is None or not entry.is_dir() or entry.is_symlink():
            continue
        pid, start = int(owner[1]), owner[2]
        try:
            running = _start_time(pid, strict=True)
        except OSError:
            continue  # cannot tell (out of file descriptors): left for a later sweep
        if running is not None and (start == "None" or running == int(start)):
            continue  # its owner is running (or, unnamed, may be)
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def _start_time(pid: int, *, strict: bool = False) -> int | None:
    """When process ``pid`` started (clock ticks since boot), or None if it has ended.
    ``strict``: an OSError other than "no such process" (EMFILE) is raised, not None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    except OSError:
        if strict:
            raise
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None  # a zombie has ended; only its exit status is left
    return int(fields[19])  # field 22 of stat

"""Staging directories under the keep directory that name their owner, and the removal
of those a dead run left (ADR 0011).

A kept clone is made in a staging directory beside its place,
``.clonegate-<pid>.<start>.<where>-<random>``: the process that made it and that
process's start time (from ``/proc``, so that a reused pid is not mistaken for the
owner), as debris.py names clone directories, and where those numbers mean
something: a tag of the machine and pid namespace. A keep directory can be shared
(a network file system, a volume mounted in several containers), and a pid from
elsewhere says nothing here. A run killed with SIGKILL cannot remove its staging
directories; the first kept clone of the next process over the same keep directory
walks it and removes each one of its own machine and namespace whose owner has ended.

The walk is the kept places' own (kept_place.py): every directory opened at its
parent's descriptor with ``O_NOFOLLOW``, nothing done through a symbolic link. It
goes down only the directories clonegate makes on the way to places, never into a
clone (a directory holding ``.git``, or ``HEAD`` and ``objects``: a repository's
content is its own) nor into a hidden one, and removes only directories whose names
it gives. An owner it cannot look up (``/proc`` unreadable, out of descriptors) is
taken as running: a live run's staging directory is never removed.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import stat
import threading

__all__ = ["clone_kind", "remove_dead_staging", "staging_prefix", "sweep_once"]

_STAGING = re.compile(r"\.clonegate-(\d+)\.(\d+)\.([0-9a-f]{8})-[0-9a-f]+")
_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# Kept paths deeper than this (a URL of many components) are not swept below it: the
# walk holds one descriptor per level.
MAX_DEPTH = 32
_lock = threading.Lock()
_swept: set[tuple[int, str]] = set()  # (pid, keep directory)
_prefixes: dict[int, str] = {}  # pid -> its prefix: a process's own never changes


def staging_prefix() -> str:
    """The start of this process's staging directories' names; raises OSError when
    ``/proc`` cannot tell this process's start time (then no name says its owner)."""
    pid = os.getpid()
    prefix = _prefixes.get(pid)
    if prefix is None:
        start = _start_time(pid)
        if start is None:
            raise OSError(errno.ESRCH, "cannot read this process's start time in /proc")
        prefix = _prefixes[pid] = f".clonegate-{pid}.{start}.{_where()}-"
    return prefix


def _where() -> str:
    """A tag of this machine and pid namespace: where a pid names this process.
    Raises OSError rather than give another tag (out of descriptors, say)."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id", "/proc/sys/kernel/random/boot_id"):
        try:
            with open(path, "rb") as file:
                machine = file.read().strip()
        except FileNotFoundError:
            continue
        if machine:
            namespace = os.readlink("/proc/self/ns/pid").encode()
            return hashlib.sha256(machine + b"\0" + namespace).hexdigest()[:8]
    raise OSError(errno.ENOENT, "no machine id in /etc, nor a boot id in /proc")


def sweep_once(keep_in: str) -> None:
    """Remove dead runs' staging directories under ``keep_in``, once per process and
    keep directory. Blocking; never raises: a sweep that cannot go on stops there."""
    key = (os.getpid(), keep_in)
    with _lock:
        if key in _swept:
            return
        _swept.add(key)
        remove_dead_staging(keep_in)


def remove_dead_staging(keep_in: str) -> list[str]:
    """Remove the staging directories under ``keep_in`` whose owner has ended; return
    their paths."""
    removed: list[str] = []
    try:
        here = _where()
        top = os.open(keep_in, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)  # the user's
    except OSError:
        return removed
    try:
        _sweep(top, keep_in, 0, here, removed)
    finally:
        os.close(top)
    return removed


def _sweep(fd: int, shown: str, depth: int, here: str, removed: list[str]) -> None:
    try:
        with os.scandir(fd) as scan:
            names = [entry.name for entry in scan if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for name in names:
        owner = _STAGING.fullmatch(name)
        if owner is not None:
            if owner[3] != here:
                continue  # made on another machine, or in another pid namespace
            if _owner_ended(int(owner[1]), int(owner[2])) and _remove(fd, name):
                removed.append(os.path.join(shown, name))
        elif not name.startswith(".") and depth < MAX_DEPTH:
            child = _open_index_directory(fd, name)
            if child is not None:
                try:
                    _sweep(child, os.path.join(shown, name), depth + 1, here, removed)
                finally:
                    os.close(child)


def clone_kind(fd: int) -> str:
    """What the directory open at ``fd`` is as a clone: ``"working tree"`` (it holds
    ``.git``), ``"bare repository"`` (``HEAD`` and ``objects``), or ``""``, none.
    Raises :class:`OSError` when it cannot tell."""
    if _exists(fd, ".git"):
        return "working tree"
    if _exists(fd, "HEAD") and _exists(fd, "objects"):
        return "bare repository"
    return ""


def _open_index_directory(fd: int, name: str) -> int | None:
    """``name`` in ``fd`` opened without following a link, unless it is a clone."""
    try:
        child = os.open(name, _OPEN_DIRECTORY, dir_fd=fd)
    except OSError:
        return None  # a link, gone, or out of descriptors: not walked
    try:
        walked = clone_kind(child) == ""
    except OSError:
        walked = False  # cannot tell: not walked into
    if not walked:
        os.close(child)
        return None
    return child


def _exists(fd: int, name: str) -> bool:
    try:
        os.lstat(name, dir_fd=fd)
    except FileNotFoundError:
        return False
    return True


def _remove(fd: int, name: str) -> bool:
    """Remove directory ``name`` in ``fd`` and all in it, following no link."""
    try:
        if not stat.S_ISDIR(os.lstat(name, dir_fd=fd).st_mode):
            return False
    except OSError:
        return False
    shutil.rmtree(name, ignore_errors=True, dir_fd=fd)
    return True


def _owner_ended(pid: int, start: int) -> bool:
    """Whether process ``pid`` that started at ``start`` has ended; False when it
    cannot be told."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            fields = file.read().rsplit(b")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return True
    except OSError:
        return False
    try:
        if fields[0] in (b"Z", b"X"):
            return True  # a zombie has ended; only its exit status is left
        return int(fields[19]) != start  # field 22 of stat; another start: the pid reused
    except (IndexError, ValueError):
        return False  # not a stat line we know


def _start_time(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            return int(file.read().rsplit(b")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None

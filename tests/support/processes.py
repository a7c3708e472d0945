"""Processes as the tests see them: a tree of descendants, clonegate's workers and
zygotes found by pid (never by name alone), and whether a pid still runs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import trio

from clonegate._adapters.workers.pool import WorkerPool, _Exit
from clonegate._adapters.workers.spawn import ZYGOTE_MARK


def _process_table() -> dict[int, tuple[int, bytes]]:
    """Every process: pid -> (parent pid, command line)."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        table[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline)
    return table


def descendant_pids(
    root: int | None = None, table: dict[int, tuple[int, bytes]] | None = None
) -> set[int]:
    """Every living process below ``root`` (default: this one), at any depth."""
    table = _process_table() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (ppid, _cmdline) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [os.getpid() if root is None else root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found and pid_alive(child):
                found.add(child)
                todo.append(child)
    return found


def worker_pids(root: int | None = None) -> set[int]:
    """The clonegate worker processes below ``root`` (default: this process): the
    zygote's forks, not the zygote."""
    table = _process_table()
    mark = ZYGOTE_MARK.encode()
    return {
        pid
        for pid in descendant_pids(root, table)
        if mark in table.get(pid, (0, b""))[1] and mark in table.get(table[pid][0], (0, b""))[1]
    }


def zygote_pids(root: int) -> set[int]:
    """The clonegate zygotes below ``root``: marked processes whose parent is not one."""
    table = _process_table()
    mark = ZYGOTE_MARK.encode()
    return {
        pid
        for pid in descendant_pids(root, table)
        if mark in table[pid][1] and mark not in table.get(table[pid][0], (0, b""))[1]
    }


def pid_alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def processes_with(marker: bytes) -> set[int]:
    """Processes whose environment holds ``marker``: a run's own and everything it
    started, inherited, and no other test session's on the same machine."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "environ").read_bytes():
                    found.add(int(entry.name))
            except OSError:
                continue
    return found


async def reported_exit(pool: WorkerPool, pid: int) -> None:
    """Wait until ``pool``'s zygote has reported worker ``pid``'s exit, so the pool's
    statistics show it ended. The pool keeps that record for its own use (why a worker
    died); the tests read it here rather than through a method of the pool's that only
    they would call. A checkpoint."""
    await pool._exits.setdefault(pid, _Exit()).done.wait()


@contextmanager
def killed_at_exit(processes: list[trio.Process]) -> Iterator[None]:
    """Kill each of ``processes`` when the block ends, however it ends (nothing for
    one that has exited): a failing test leaves no worker behind."""
    try:
        yield
    finally:
        for process in processes:
            process.kill()


async def stderr_of(process: trio.Process) -> str:
    """All a process writes to its stderr pipe, until it closes it."""
    assert process.stderr is not None
    data = b""
    while chunk := await process.stderr.receive_some():
        data += chunk
    return data.decode()

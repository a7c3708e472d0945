"""Removing a clone's directory (``ClonedSource.remove``): here, because the domain
does no I/O (ADR 0001)."""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

import trio

__all__ = ["discard", "remove_tree"]


async def discard(path: Path) -> None:
    """Remove ``path`` and all under it, even while being cancelled.

    Shielded: this cleanup must finish before a cancellation goes on, so that whoever
    holds a limit slot around it keeps the slot until the directory is gone. It is a
    local rmtree, run to completion in a thread (never abandoned) and it cannot hang
    on the network.
    """
    with trio.CancelScope(shield=True):
        # Out of file descriptors (rmtree opens each directory it walks): the other
        # clones free theirs as they end, so try again a few times, bounded (6 s).
        for delay in _OUT_OF_DESCRIPTORS_RETRIES:
            try:
                await trio.to_thread.run_sync(remove_tree, path)
                return
            except OSError as exc:
                if exc.errno not in (errno.EMFILE, errno.ENFILE):
                    raise
            await trio.sleep(delay)
        await trio.to_thread.run_sync(remove_tree, path)


_OUT_OF_DESCRIPTORS_RETRIES = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2)  # seconds between tries


def remove_tree(path: Path) -> None:
    """Delete ``path`` and everything under it, if it exists; symlinks are not followed."""
    shutil.rmtree(path, ignore_errors=True)
    if path.exists() or path.is_symlink():
        try:
            shutil.rmtree(path)  # raise the real error rather than leave a silent remnant
        except OSError as exc:
            if exc.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            _remove_by_path(path)


def _remove_by_path(path: Path) -> None:
    """What :func:`remove_tree` does, holding one file descriptor at a time (rmtree
    holds one per level it is in, and a process out of them could not remove a clone).
    By path, so for directories nothing else changes: a clone's own, once its worker
    has ended."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
        return
    # os.walk closes each listing before it goes down; a listing it cannot open
    # (EMFILE again) is raised, for discard to try again, not skipped.
    for top, directories, files in os.walk(path, topdown=False, onerror=_raise):
        for name in files:
            os.unlink(os.path.join(top, name))
        for name in directories:
            inner = os.path.join(top, name)
            if os.path.islink(inner):  # listed among directories, never walked into
                os.unlink(inner)
            else:
                os.rmdir(inner)
    path.rmdir()


def _raise(error: OSError) -> None:
    raise error

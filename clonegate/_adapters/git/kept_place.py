"""Reaching a kept clone's place without following a symbolic link (ADR 0011, ADR 0012).

The keep directory is the user's; what lies below it may have been written by a
repository. A kept clone's working tree holds the symlinks its repository committed
(``nest/a`` with ``b -> /victim``), and another URL's kept path (``nest/a/b/c``) can
run through it. So below the keep directory every component is opened relative to
its parent's descriptor with ``O_NOFOLLOW | O_DIRECTORY`` (an ``openat`` walk), and
everything after is done relative to descriptors: the staging directory is made and
removed at its parent's descriptor, the clone is written through
``/proc/self/fd/<staging>``, and moved into place by a ``renameat`` between two
descriptors. A component swapped for a symlink after the walk changes nothing: the
descriptors still name the directories that were checked.

Blocking and plain: used by the parent (in a thread) and by the clone worker.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..._domain.urls import visible

__all__ = [
    "KeptPlace",
    "UnsafePlace",
    "make_staging",
    "open_directory",
    "open_parent",
    "remove_staging",
    "through",
]

_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePlace(Exception):
    """The kept path cannot be reached safely: it runs through something that is not
    a plain directory of ours, or descriptors cannot be written through."""


@dataclass(frozen=True, slots=True)
class KeptPlace:
    """A kept clone's place: ``keep_in`` (the user's directory, which may itself be a
    link) and ``relative`` below it (``RepoURL.kept_path``), plus the name of the
    staging directory the parent made beside the place."""

    keep_in: str
    relative: str
    staging: str = ""

    @property
    def name(self) -> str:
        """The place's own name, in the directory :func:`open_parent` opens."""
        return PurePosixPath(self.relative).name

    @property
    def shown(self) -> str:
        """The place's full path, for messages."""
        return visible(os.path.join(self.keep_in, self.relative))


def open_parent(place: KeptPlace, *, create: bool) -> int:
    """A descriptor of the directory that holds ``place``, reached without following
    any symbolic link below ``place.keep_in``; the caller closes it.

    With ``create``, missing directories are made on the way (the keep directory
    too). Raises :class:`UnsafePlace` for a component that is a symbolic link, not a
    directory, or another clone's working tree (a directory holding ``.git``: its
    content is a repository's to choose, from one run to the next).
    """
    if create:
        os.makedirs(place.keep_in, exist_ok=True)
    try:
        fd = os.open(place.keep_in, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise _gone(visible(place.keep_in)) from None
    walked = place.keep_in
    try:
        for part in PurePosixPath(place.relative).parts[:-1]:
            walked = os.path.join(walked, part)
            child = _enter(fd, part, create, visible(walked))
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _enter(fd: int, name: str, create: bool, shown: str) -> int:
    """Open directory ``name`` in ``fd``, made first with ``create``."""
    if create:
        with contextlib.suppress(FileExistsError):  # checked below, as it is
            os.mkdir(name, dir_fd=fd)
    child = open_directory(fd, name, shown)
    try:
        os.lstat(".git", dir_fd=child)
    except FileNotFoundError:
        return child
    os.close(child)
    raise UnsafePlace(
        f"{shown} is another kept clone's working tree: a clone is never kept inside another"
    )


def open_directory(fd: int, name: str, shown: str) -> int:
    """Open directory ``name`` in ``fd``, refusing a symbolic link or anything else."""
    try:
        return os.open(name, _OPEN_DIRECTORY, dir_fd=fd)
    except FileNotFoundError:
        raise _gone(shown) from None
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
    if stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode):
        raise UnsafePlace(
            f"{shown} is a symbolic link (a file of another kept clone?): "
            "a kept clone is never written through one"
        )
    raise UnsafePlace(f"{shown} is not a directory: a kept clone cannot be made there")


def _gone(shown: str) -> UnsafePlace:
    return UnsafePlace(f"{shown} was removed while the clone was being made")


def through(fd: int) -> str:
    """A path that names the directory open at ``fd``, whatever happens to the path it
    was opened by: the descriptor's ``/proc`` entry, for libraries that take paths."""
    path = f"/proc/self/fd/{fd}"
    if not os.path.isdir(path):
        raise UnsafePlace("kept clones are written through /proc/self/fd: /proc is not mounted")
    return path


def make_staging(parent: int) -> str:
    """Make a private (0700) staging directory in ``parent``; return its name."""
    for _ in range(100):
        name = f".clonegate-{secrets.token_hex(6)}"
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            continue
        return name
    raise FileExistsError(errno.EEXIST, "no unused name for a staging directory")


def remove_staging(place: KeptPlace) -> None:
    """Remove ``place``'s staging directory and all in it, reached as it was made.

    When the path to it no longer walks (a component replaced by a symbolic link
    since), it is left where it is: nothing is removed through a link.
    """
    try:
        parent = open_parent(place, create=False)
    except UnsafePlace:
        return
    try:
        shutil.rmtree(place.staging, ignore_errors=True, dir_fd=parent)
        try:
            os.lstat(place.staging, dir_fd=parent)
        except FileNotFoundError:
            return
        shutil.rmtree(place.staging, dir_fd=parent)  # the real error, not a silent remnant
    finally:
        os.close(parent)

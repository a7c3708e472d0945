"""What a checkout will write, known before it writes a byte (ADR 0003, ADR 0011).

A 6 KB pack held one 4 MiB blob of zeros at 100 paths: a kept clone's checkout
wrote 419 MB before the clone's size was compared with ``--max-repo-size 50M``. The
file-size limit (``RLIMIT_FSIZE``) bounds each file, not their sum, and a blob is
stored once however many paths share it, so a small pack can fill a disk. Before a
clone's files are written (a new clone's checkout, an update's reset), the sizes of
its tree's blobs are summed, each path counted, from the pack headers as the
analysis reads them (``analysis/blobs.py``): past the limit together with ``.git``,
the clone is ``too_large`` and no file is written. Each path counts its entry in
``.git/index`` too: empty files take no bytes, but a tree of millions of them takes
an index of hundreds of MB (and as many inodes). Worker side.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import Any

from ..._domain.errors import ErrorKind
from ..._domain.sizes import format_size
from ..analysis.blobs import size_at
from .worker_errors import Failure

__all__ = ["bytes_under", "ensure_checkout_fits"]

# An index entry's fixed part, without its path (git's index format, version 2): so
# that a million empty files, which take no bytes of their own, still count.
_INDEX_ENTRY = 62


def ensure_checkout_fits(repo: Any, head: bytes, limit: int) -> None:
    """Raise ``too_large`` if checking out ``head`` in ``repo`` would take it past
    ``limit`` bytes on disk, its ``.git`` included; write nothing."""
    from dulwich.object_store import iter_tree_contents

    store = repo.object_store
    packs = list(getattr(store, "packs", ()))
    taken = bytes_under(repo.controldir())
    sizes: dict[bytes, int] = {}
    for entry in iter_tree_contents(store, repo[head].tree):
        taken += _INDEX_ENTRY + len(entry.path)  # each path's entry in .git/index
        if stat.S_ISDIR(entry.mode) or entry.mode & 0o170000 == 0o160000:
            continue  # a submodule: an empty directory
        size = sizes.get(entry.sha)
        if size is None:
            size = sizes[entry.sha] = _blob_size(store, packs, entry.sha)
        taken += size
        if taken > limit:
            raise Failure(
                ErrorKind.TOO_LARGE,
                f"the clone would take more than {format_size(limit)} on disk once checked out "
                "(the limit)",
            )


def bytes_under(root: str | os.PathLike[str]) -> int:
    """The size of the files under ``root``, links not followed."""
    return sum(_file_sizes(root))


def _file_sizes(root: str | os.PathLike[str]) -> Iterator[int]:
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            yield os.lstat(os.path.join(dirpath, name)).st_size


def _blob_size(store: Any, packs: list[Any], sha: bytes) -> int:
    """A blob's size from its pack header; read in full only where that cannot be
    (a loose object): what the checkout would read anyway."""
    for pack in packs:
        try:
            offset = pack.index.object_offset(sha)
        except KeyError:
            continue
        size = size_at(pack, offset)
        if size is not None:
            return size
        break
    return len(store[sha].as_raw_string())

"""What a clone leaves behind, removed without ever hiding why the clone ended
(issue 38).

Out of file descriptors (``ulimit -n 10``), removing a failed clone's directory raised
an OSError that replaced the clone's own error: the repository was reported as
``clone_error`` with a traceback instead of, say, ``not_found``. A removal that fails
now leaves the directory where it is, under the name that says its owner (debris.py,
kept_debris.py), so that a later run's sweep removes it, and logs one warning line.
"""

from __future__ import annotations

import logging
from pathlib import Path

import trio

from ..clones import discard
from .kept_place import KeptPlace, remove_staging

__all__ = ["clean_up"]

logger = logging.getLogger(__name__)


async def clean_up(
    keep: KeptPlace | None, owned_root: Path | None, target: Path, shown: str
) -> None:
    """Remove what the clone of ``shown`` made: a kept clone's staging directory
    reached as it was made, without following a symbolic link; ``owned_root`` (or a
    destination the caller chose, ``target``) as :func:`discard` does. Shielded, like
    every removal; never raises an OSError."""
    root = owned_root or target
    try:
        if keep is None:
            await discard(root)
        else:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(remove_staging, keep)
    except OSError as exc:
        # A destination the caller chose is theirs: no sweep of ours looks there.
        later = "; a later run removes it" if owned_root is not None else ""
        logger.warning(
            "could not remove what the clone of %s left at %s (%s)%s",
            shown,
            root,
            exc.strerror or exc,
            later,
        )

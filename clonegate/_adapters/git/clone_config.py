"""The settings a clone records in its ``.git/config``; worker side.

What ``git clone --single-branch`` records: the remote's URL, its fetch refspec, and
the branch's remote and merge settings. A kept clone's config is read again by the
next run's update (ADR 0011), so only settings dulwich reads back as written are
recorded: dulwich 1.2 writes some valid branch names so that its own reader fails on
the file (a ``"`` then a ``#`` in a section name: "expected trailing ]") or cuts a
value short (a ``;``). Such a branch, chosen by the server, gets no settings of its
own; the clone stays readable, and updatable.
"""

from __future__ import annotations

import io
from typing import Any

__all__ = ["record_origin"]

_Setting = tuple[tuple[bytes, ...], bytes]


def record_origin(repo: Any, url: str, head_ref: bytes, tracking: bytes) -> None:
    """Record ``url`` as ``origin`` in ``repo``'s config, and ``head_ref``'s settings
    (fetched into ``tracking``) where they read back as written."""
    branch = head_ref.removeprefix(b"refs/heads/")
    settings: dict[_Setting, bytes] = {
        ((b"remote", b"origin"), b"url"): url.encode(),
    }
    branch_settings: dict[_Setting, bytes] = {
        ((b"remote", b"origin"), b"fetch"): b"+" + head_ref + b":" + tracking,
        ((b"branch", branch), b"remote"): b"origin",
        ((b"branch", branch), b"merge"): head_ref,
    }
    if _reads_back(branch_settings):
        settings.update(branch_settings)
    config = repo.get_config()
    for (section, name), value in settings.items():
        config.set(section, name, value)
    config.write_to_path()


def _reads_back(settings: dict[_Setting, bytes]) -> bool:
    """Whether dulwich reads ``settings`` back as written."""
    from dulwich.config import ConfigFile

    written = ConfigFile()
    for (section, name), value in settings.items():
        written.set(section, name, value)
    text = io.BytesIO()
    written.write_to_file(text)
    try:
        read = ConfigFile.from_file(io.BytesIO(text.getvalue()))
    except ValueError:
        return False
    return all(read.get(section, name) == value for (section, name), value in settings.items())

"""The refs and settings a clone records in its ``.git``; worker side.

What ``git clone --single-branch`` records: the branch and its remote-tracking ref,
``HEAD`` on the branch, the remote's URL and fetch refspec, and the branch's remote
and merge settings. A kept clone is updated by later runs (ADR 0011), from a
repository that may have changed in between:

- its HEAD may be another branch by then, whose name clashes with the one recorded
  (``a``, then ``a/b``: a ref file where a directory must go). The branch recorded
  before, and its tracking ref, are removed first: a kept clone tracks one branch;
- its config is read again, and dulwich 1.2 writes some valid branch names so that
  its own reader fails on the file (a ``"`` then a ``#`` in a section name:
  "expected trailing ]") or cuts a value short (a ``;``). Only settings that read
  back as written are recorded; such a branch gets none of its own, and the clone
  stays readable, and updatable.
"""

from __future__ import annotations

import io
from typing import Any

from ..._domain.errors import ErrorKind
from ..._domain.urls import visible
from .worker_errors import Failure

__all__ = ["record_refs"]

_Setting = tuple[tuple[bytes, ...], bytes]


def record_refs(repo: Any, url: str, head: bytes, head_ref: bytes) -> str:
    """Record the server's HEAD (``head``, on branch ``head_ref``) fetched from ``url``
    in ``repo`` as ``git clone --single-branch`` would; return the branch's name."""
    from dulwich.refs import Ref, check_ref_format

    if not head_ref.startswith(b"refs/heads/"):
        repo.refs[b"HEAD"] = head  # the server's HEAD is detached: so is ours
        return ""
    if not check_ref_format(Ref(head_ref)):
        name = visible(head_ref.decode("utf-8", "replace"))[:200]
        raise Failure(
            ErrorKind.INVALID_REPOSITORY, f"the server's HEAD names an invalid branch: {name}"
        )
    _forget_other_branch(repo, head_ref)
    branch = head_ref.removeprefix(b"refs/heads/")
    tracking = b"refs/remotes/origin/" + branch
    repo.refs[head_ref] = head
    repo.refs.set_symbolic_ref(b"HEAD", head_ref)
    repo.refs[tracking] = head
    # The URL recorded is the one without credentials: tokens never reach .git/config.
    record_origin(repo, url, head_ref, tracking)
    return branch.decode("utf-8", "replace")


def _forget_other_branch(repo: Any, head_ref: bytes) -> None:
    """Remove the branch a kept clone's HEAD is on, and its tracking ref, if it is not
    ``head_ref``: its name may stand where ``head_ref``'s must go."""
    chain, _sha = repo.refs.follow(b"HEAD")
    recorded = chain[-1] if len(chain) > 1 else b""
    if not recorded.startswith(b"refs/heads/") or recorded == head_ref:
        return
    repo.refs.set_symbolic_ref(b"HEAD", head_ref)  # not left pointing at a removed ref
    tracking = b"refs/remotes/origin/" + recorded.removeprefix(b"refs/heads/")
    for ref in (recorded, tracking):
        repo.refs.remove_if_equals(ref, None)


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

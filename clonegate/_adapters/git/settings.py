"""``CloneSettings``: how :class:`DulwichVCS` clones, each default written here once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..._domain.checks import positive_int, positive_seconds
from ..settings import setting

__all__ = ["CloneSettings"]


@dataclass(frozen=True, slots=True)
class CloneSettings:
    """The settings of :class:`clonegate.DulwichVCS` (ADR 0017); checked when made.

    depth: commits of history to fetch; 1 (the default) is a shallow clone, ``None``
      the full history of that one branch.
    checkout: also write the working tree. Off by default: the analyzer reads files
      from the object store, and checking out is half of a dulwich clone's time.
    connect_timeout: seconds to establish a connection (HTTP, ssh).
    read_timeout: seconds without any data before the clone fails; on git:// it
      also bounds the connect.
    work_dir: where private temporary clone directories are made (default: the
      system's temporary directory).
    ssh_command: the ssh program and options of your own (an identity file, a
      known-hosts file); clonegate appends ``BatchMode=yes`` and its timeouts.
    ca_bundle: a PEM file of certificate authorities to trust for https, instead of
      the system's (an internal CA).
    max_repo_size: bytes of pack data one clone may receive, and the most it may
      write per file and in all (default 2 GiB); past it, ``too_large``.
    max_memory: bytes of memory one clone may use on top of its worker's start
      (default 1 GiB), enforced as the worker's address-space limit; past it,
      ``too_large``.
    low_speed_limit, low_speed_time: a clone that receives less than
      ``low_speed_limit`` bytes per second on average over ``low_speed_time``
      seconds fails ``too_slow`` (default 1000 bytes/s over 30 s), on every
      transport.
    keep_in: keep clones made without a ``destination`` at a stable place,
      ``<keep_in>/<host>/<path>`` (:attr:`RepoURL.kept_path`), instead of a private
      temporary directory. Made complete beside it, then renamed into place; when
      that place already holds this repository's clone (its ``origin`` is this
      URL), the clone is updated in place: the remote HEAD is fetched and the
      working tree reset to it, local changes included. Anything else there is
      refused with a :class:`StorageError` and left untouched, and so is a kept
      path that runs through a symbolic link, a file, or another kept clone:
      nothing below ``keep_in`` is reached through a link (ADR 0011). The
      returned source's ``aclose`` removes the kept clone the same way.
    """

    depth: int | None = setting(1, "Commits of history; 0 for all.")
    checkout: bool = setting(False, "Also write the working tree.")
    connect_timeout: float = setting(30.0, "Seconds to connect (https, ssh).")
    read_timeout: float = setting(120.0, "Seconds without data before a clone fails.")
    work_dir: Path | None = setting(None, "Where private temporary clones are made.")
    keep_in: Path | None = setting(None, "Keep clones under this directory, and update them.")
    ssh_command: str = setting("ssh", "The ssh program and its options, e.g. 'ssh -i KEY'.")
    ca_bundle: Path | None = setting(
        None, "PEM file of certificate authorities to trust for https."
    )
    max_repo_size: int = setting(
        2 << 30, "Most one clone may receive and write, e.g. 500M (K, M, G: binary units)."
    )
    max_memory: int = setting(1 << 30, "Memory one clone may use, on top of its worker's.")
    low_speed_limit: int = setting(
        1000,
        "A clone receiving less than this many bytes/s of refs or pack data "
        "(progress messages aside) over --low-speed-time fails.",
    )
    low_speed_time: float = setting(30.0, "The window of --low-speed-limit.")

    def __post_init__(self) -> None:
        if self.depth is not None:
            positive_int("depth", self.depth)
        for name in ("connect_timeout", "read_timeout", "low_speed_time"):
            positive_seconds(name, getattr(self, name))
        for name in ("max_repo_size", "max_memory", "low_speed_limit"):
            positive_int(name, getattr(self, name))
        if not isinstance(self.ssh_command, str) or not self.ssh_command.strip():
            raise ValueError("ssh_command must be a non-empty string")

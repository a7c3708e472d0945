"""Credentials read from a netrc file (ADR 0013): the file's I/O, apart from the domain's
rule that binds each entry to its host (``netrc_credentials``)."""

from __future__ import annotations

import netrc
from pathlib import Path

from .._domain.credentials import Credential, netrc_credentials
from .._usecase.options import Option, with_credentials

__all__ = ["read_netrc", "with_netrc"]


def read_netrc(path: Path) -> tuple[Credential, ...]:
    """The ``machine`` entries of a netrc file, each bound to its host (``host:port`` too).

    A ``default`` entry is ignored: it would apply to every host in a list. Like ssh
    with a private key, a file that other users may read is refused. Raises
    ValueError (with the file's line) for a file netrc cannot parse, an entry that
    is not a valid credential, or a readable-by-others file; OSError when the file
    cannot be read.
    """
    if path.stat().st_mode & 0o077:
        raise ValueError(f"{path}: other users can read this file; chmod 600 it first")
    try:
        entries = netrc.netrc(str(path)).hosts
    except netrc.NetrcParseError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: {exc.msg}") from None
    return netrc_credentials(str(path), entries)


def with_netrc(path: Path) -> Option:
    """Credentials from a netrc file: each ``machine`` entry (``host`` or ``host:port``)
    for https on that host only, under the same rules as :func:`with_token`.

    Read now: raises ValueError for a file that does not parse or that other users
    can read, OSError for one that cannot be read. The ``default`` entry is ignored.
    """
    return with_credentials(read_netrc(Path(path)))

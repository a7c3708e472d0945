"""Git packs as ``git pack-objects`` writes them, for the pack indexer's tests."""

from __future__ import annotations

import subprocess
from pathlib import Path


def pack_of(repo: Path, into: Path, *options: str) -> Path:
    """Every object of ``repo`` in one pack, as ``git pack-objects`` writes it."""
    pack = subprocess.run(
        ["git", "-C", str(repo), "pack-objects", "--all", "--stdout", *options],
        input=b"",
        capture_output=True,
        check=True,
    ).stdout
    into.write_bytes(pack)
    return into

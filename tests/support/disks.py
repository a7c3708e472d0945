"""A small disk of a test's own, to fill up or to remount read-only."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .server_programs import unavailable


def mount(*options: str) -> None:
    subprocess.run(["mount", *options], check=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs of this test's own (root and mount(8) needed; CI has both)."""
    where = tmp_path / "disk"
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        message = f"cannot mount a tmpfs: {done.stderr.decode().strip()}"
        unavailable(message)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=True)

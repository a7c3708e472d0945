"""A keep directory under attack (issue 38): the served repositories, the --keep
directory, and a victim outside it that must never change; what is under a directory,
links not followed; and the command line run as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .servers import GitDaemon


@dataclass
class Scene:
    daemon: GitDaemon
    served: Path
    keep: Path  # the --keep directory
    victim: Path  # outside it: must never change

    @property
    def host(self) -> Path:
        return self.keep / f"127.0.0.1_{self.daemon.port}"


def snapshot(root: Path) -> dict[str, bytes | str]:
    """Everything under ``root``, links not followed: what a write there would change."""
    seen: dict[str, bytes | str] = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(dirpath, name)
            key = str(path.relative_to(root))
            if path.is_symlink():
                seen[key] = f"-> {os.readlink(path)}"
            elif path.is_dir():
                seen[key] = "dir"
            else:
                seen[key] = path.read_bytes()
    return seen


def staging_left(keep: Path) -> list[str]:
    return [d for d, _, _ in os.walk(keep) if ".clonegate-" in d]


def clonegate_analyze(keep: Path, url: str) -> subprocess.CompletedProcess[str]:
    """The CLI in its own process, as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "clonegate", "analyze", "--format=jsonl", f"--keep={keep}", url],
        capture_output=True,
        text=True,
        timeout=300,  # only turns a hang into a failure
    )

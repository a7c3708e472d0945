"""What the cluster's end-to-end tests run: copies of one small repository to serve,
and `clonegate` commands in processes of their own, started in the checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import trio

from .paths import ROOT
from .repos import make_repo


def serve_copies(root: Path, count: int) -> None:
    make_repo(root, "r0", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    for i in range(1, count):
        shutil.copytree(root / "r0.git", root / f"r{i}.git")


async def start_clonegate(*args: str, env: dict[str, str]) -> trio.Process:
    return await trio.lowlevel.open_process(
        [sys.executable, "-m", "clonegate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )

"""Run clonegate on a pseudo-terminal, as a person at a terminal would."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def run_on_a_terminal(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit status and everything written to the terminal (stdout and stderr), without
    terminal escapes. The 60 s bounds only turn a hang into a failure."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "clonegate", *args],
        stdout=follower,
        stderr=follower,
        env={**os.environ, "COLUMNS": "160", **(env or {})},
    )
    os.close(follower)
    captured = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        captured += chunk
    code = process.wait(timeout=60)
    os.close(leader)
    return code, _ESCAPES.sub("", captured.decode(errors="replace"))

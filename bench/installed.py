"""Benchmarks of whole commands measure clonegate as installed, not as a source tree.

A wheel install (pip, uv) compiles every module to bytecode; the development tree is
an editable install, whose modules stay source, and these machines set
``PYTHONDONTWRITEBYTECODE=1``: every command started from the tree compiled
clonegate's ~90 modules again (about 60 ms of each start, measured). Benchmarks
that start ``clonegate`` call :func:`compile_sources` first, as an install would.
"""

from __future__ import annotations

import compileall
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def compile_sources() -> None:
    """Write the bytecode of clonegate and its command line (``__pycache__``, ignored by git)."""
    for package in (ROOT / "clonegate", ROOT / "cli" / "clonegate_cli"):
        if not compileall.compile_dir(package, quiet=1):
            raise RuntimeError(f"could not compile {package}")

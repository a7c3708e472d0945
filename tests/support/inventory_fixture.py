"""The analyzer's fixture tree (tests/fixtures/inventory: test files of every framework
it reads), and the hazards a test adds to it before committing it: links out of the
tree and a file over the size limit."""

from __future__ import annotations

import os
from pathlib import Path

FIXTURE = Path(__file__).parents[1] / "fixtures" / "inventory"


def add_hazards(work: Path) -> None:
    outside = work.parent / "outside"
    outside.mkdir()
    (outside / "test_secret.py").write_text("def test_secret(): ...\n")
    os.symlink(outside / "test_secret.py", work / "tests" / "test_escape.py")
    os.symlink("../../outside/test_secret.py", work / "tests" / "test_relative_escape.py")
    (work / "tests" / "test_huge.py").write_bytes(b"# padding\n" * (1024 * 1024 + 1))

"""Where the checkout is: the directory the tests' own processes start in, so that
``python -m clonegate`` and ``python -m tests.support.…`` find this checkout's code."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

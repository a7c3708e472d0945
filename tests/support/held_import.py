"""A module whose import waits until the test lets it end: it reads the FIFO named by
``CLONEGATE_TEST_HELD_IMPORT`` to its end. Preloaded by a zygote after the clone
modules, it holds the zygote short of ready while a first clone runs (issue 47)."""

from __future__ import annotations

import os

with open(os.environ["CLONEGATE_TEST_HELD_IMPORT"], "rb") as fifo:
    fifo.read()

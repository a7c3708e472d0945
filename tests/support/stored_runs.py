"""A store file with two runs, as the store's commands read it: the second run changed
one test file and failed another repository, whose URL is hostile."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import trio

from clonegate import RepositoryReport, TestCase
from clonegate.store import open_store

from .inventories import INVENTORY, KEY, report

HOSTILE = "git://example.org/team/repo\x1b[31mred"


def save_two_runs(path: Path) -> tuple[int, int]:
    """Two runs: the second changed one test file and failed another repository."""
    changed = replace(
        INVENTORY,
        files=(replace(INVENTORY.files[0], tests=(TestCase("test_top", 1),)), INVENTORY.files[1]),
    )
    failed = RepositoryReport.failure(HOSTILE, 1, "clone", "not_found", f"{HOSTILE}: gone")

    async def build() -> tuple[int, int]:
        async with open_store(path) as store:
            a = await store.begin_run({"clone_depth": 1})
            await store.save(a, KEY, report(0))
            await store.save(a, "git://example.org/other", replace(report(1), url=HOSTILE))
            await store.finish_run(a)
            b = await store.begin_run({"clone_depth": 1})
            second = report(0, commit="b" * 40, inventory=changed)
            assert second.analysis is not None
            # Totals made from the inventory, as the analyzer makes them.
            totals = replace(second.analysis, tests=changed.tests)
            await store.save(b, KEY, replace(second, analysis=totals))
            await store.save(b, "git://example.org/other", failed)
            await store.finish_run(b)
            return a, b

    return trio.run(build)

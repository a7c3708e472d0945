"""A fixed count that thrashes says so, in a real memory cgroup (issue 46, ADR 0014).

Four full-history clones of a project-shaped repository (4,000 files, 6,000 commits:
a 52 MB pack of 85,647 deltas, bench/forecast_shapes.py) served by ``git daemon`` on
127.0.0.1, run by the real command with ``-j 4 --memory-budget off`` inside a v1 memory
cgroup of 1.3 times what one clone took alone, measured in the same session. There
the kernel reclaims the walks' pages for minutes and kills little or nothing (issue
46: a hang); the run must say so on stderr, once, naming ``--memory-budget auto``.
The run's own repository timeout ends it. Skipped where no memory cgroup can be made
or the kernel gives no pressure stall figures; a failure in CI, which sets
``CLONEGATE_REQUIRE_ALL_SERVERS``. About a minute and a half: the repository is made
once (~50 s), then one clone alone and the thrashing batch (bounded at 40 s).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.forecast_shapes import make_delta_history

from .support.cgroup import cgroup_unavailable, memory_cgroup
from .support.server_programs import unavailable
from .support.servers import git_daemon

COPIES = 4
TIMEOUT = 40  # seconds per repository: the bound of the thrashing run


@pytest.fixture(scope="module")
def delta_urls(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[str]]:
    reason = cgroup_unavailable()
    if reason is None and not Path("/proc/pressure/memory").exists():
        reason = "no pressure stall information (PSI) in this kernel"
    if reason is not None:
        unavailable(reason)
    root = tmp_path_factory.mktemp("delta")
    make_delta_history(root / "delta.git")
    for i in range(COPIES):
        (root / f"delta-{i}.git").symlink_to(root / "delta.git")
    with git_daemon(root) as daemon:
        yield [daemon.url(f"delta-{i}") for i in range(COPIES)]


def test_a_fixed_count_that_thrashes_says_so_once(delta_urls: list[str], tmp_path: Path) -> None:
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    command = [sys.executable, "-m", "clonegate", "analyze", "--depth", "0"]
    with memory_cgroup() as group:
        alone = group.run([*command, delta_urls[0]], env=env)
        assert alone.returncode == 0, alone.stderr
        limit = int(group.peak * 1.3)
    with memory_cgroup(limit) as group:
        fixed = ["-j", "4", "--memory-budget", "off"]  # the count alone, as before issue 46
        done = group.run([*command, *fixed, "--timeout", str(TIMEOUT), *delta_urls], env=env)
        assert group.processes == [], "a process of the run outlived it"
    reports = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(r["index"] for r in reports) == list(range(COPIES))
    said = [line for line in done.stderr.splitlines() if "memory thrashes: for" in line]
    assert len(said) == 1, done.stderr
    assert "none of the" in said[0]
    assert "try --memory-budget auto" in said[0]
    # The summary line of JSON lines (on stderr) counts each stretch: 2 in a trial run,
    # an OOM kill's report (progress) between them.
    assert " memory thrash" in done.stderr.splitlines()[-1]

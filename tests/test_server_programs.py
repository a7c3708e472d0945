"""The README's promise: without `sshd`, `redis-server`, `redis-sentinel`, the `ssh`
client or `chromium`, the tests that need them are skipped, and under ``.ci/run``
(``CLONEGATE_REQUIRE_ALL_SERVERS``) they fail instead.

Each case runs pytest in a subprocess on tests that reach those programs in each way
there is (the session's sshd fixture, the ``ssh_servers`` fixture, the redis fixtures, the
``server_program`` fixture), with the programs' search path emptied, as on a machine that
lacks them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from .support.server_programs import REQUIRE_ALL, SEARCH_PATH

ROOT = Path(__file__).resolve().parent.parent
NEEDING_SERVERS = [
    "tests/test_remote_head.py::test_over_ssh",
    "tests/test_envelope.py::test_a_trickle_is_stopped_on_ssh_and_https_too",
    "tests/test_redis_semaphore.py::test_every_script_is_idempotent_per_acquisition_id",
    "tests/test_redis_cluster.py::test_release_hints_reach_waiters_through_other_nodes",
    "tests/test_redis_sentinel.py::test_a_client_follows_the_master_the_sentinels_name",
    "tests/test_wire_envelope.py::test_a_silent_handshake_is_a_read_timeout[ssh-clone]",
    "tests/test_browser.py::test_an_element_a_script_adds_is_in_the_dom",
]


def _outcomes(tmp_path: Path, *, require_all: bool) -> dict[str, int]:
    empty = tmp_path / "no-programs"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != REQUIRE_ALL}
    env[SEARCH_PATH] = str(empty)
    if require_all:
        env[REQUIRE_ALL] = "1"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *NEEDING_SERVERS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,  # a safety net only; the runs take seconds
    )
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr
    counts = {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", summary)}
    assert counts, done.stdout + done.stderr
    return counts


def test_without_the_servers_their_tests_are_skipped(tmp_path: Path) -> None:
    assert _outcomes(tmp_path, require_all=False) == {"skipped": len(NEEDING_SERVERS)}


def test_in_ci_a_missing_server_fails_its_tests(tmp_path: Path) -> None:
    counts = _outcomes(tmp_path, require_all=True)
    failed = counts.get("failed", 0) + counts.get("errors", counts.get("error", 0))
    assert failed == len(NEEDING_SERVERS), counts
    assert set(counts) <= {"failed", "errors", "error"}, counts

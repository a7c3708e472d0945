"""Where the tests find the server programs they start, and what happens when one is missing.

The README promises that tests needing `sshd`, `redis-server` (with `redis-cli`) or
`redis-sentinel` are skipped on a machine without them, and `.ci/run` (which installs
them) sets ``CLONEGATE_REQUIRE_ALL_SERVERS``
so that CI fails instead of skipping. Both rules live here, once.

Programs are looked up on ``PATH`` plus the system directories Debian puts them in
(`sshd` is in /usr/sbin, which a non-root ``PATH`` lacks). ``CLONEGATE_TEST_SERVER_PATH``
replaces that search path: ``tests/test_server_programs.py`` empties it to run tests as
on a machine without the servers.
"""

from __future__ import annotations

import os
import shutil

import pytest

REQUIRE_ALL = "CLONEGATE_REQUIRE_ALL_SERVERS"
SEARCH_PATH = "CLONEGATE_TEST_SERVER_PATH"


def server_program(name: str, debian_package: str) -> str:
    """The path of server program ``name``; skips the test when it is not installed (fails
    it under ``CLONEGATE_REQUIRE_ALL_SERVERS``)."""
    default = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin"])
    found = shutil.which(name, path=os.environ.get(SEARCH_PATH, default))
    if found is None:
        message = f"{name} is not installed (Debian package {debian_package})"
        if os.environ.get(REQUIRE_ALL):
            pytest.fail(message)
        pytest.skip(message)
    return found

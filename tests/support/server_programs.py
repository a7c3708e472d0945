"""Where the tests find the server programs they start, and what happens when one is missing.

The README promises that tests needing `sshd`, `redis-server` (with `redis-cli`),
`redis-sentinel`, the `ssh` client, `chromium` or root's mounts are skipped on a machine
without them, and `.ci/run` (which installs them and runs as root) sets
``CLONEGATE_REQUIRE_ALL_SERVERS`` so that CI fails instead of skipping. Both rules live
here, once: every test reaches a server program through the ``server_program`` fixture
(tests/conftest.py) or a server fixture built on it, and every other missing facility
through :func:`unavailable`.

Programs are looked up on ``PATH`` plus the system directories Debian puts them in
(`sshd` is in /usr/sbin, which a non-root ``PATH`` lacks). ``CLONEGATE_TEST_SERVER_PATH``
replaces that search path: ``tests/test_server_programs.py`` empties it to run tests as
on a machine without the servers.
"""

from __future__ import annotations

import os
import shutil
from typing import NoReturn

import pytest

REQUIRE_ALL = "CLONEGATE_REQUIRE_ALL_SERVERS"
SEARCH_PATH = "CLONEGATE_TEST_SERVER_PATH"

# Each program the tests start or call, and the Debian package that installs it.
DEBIAN_PACKAGES = {
    "sshd": "openssh-server",
    "ssh": "openssh-client",
    "redis-server": "redis-server",
    "redis-cli": "redis-tools",
    "redis-sentinel": "redis-sentinel",
    "chromium": "chromium",  # headless, for the HTML report (tests/support/browser.py)
}


def unavailable(reason: str) -> NoReturn:
    """Skip the test for want of ``reason``'s facility; fail it under
    ``CLONEGATE_REQUIRE_ALL_SERVERS``, where everything must be there."""
    if os.environ.get(REQUIRE_ALL):
        pytest.fail(reason)
    pytest.skip(reason)


def server_program(name: str) -> str:
    """The path of program ``name`` (a key of ``DEBIAN_PACKAGES``); skips the test when
    it is not installed (fails it under ``CLONEGATE_REQUIRE_ALL_SERVERS``)."""
    default = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/usr/bin"])
    found = shutil.which(name, path=os.environ.get(SEARCH_PATH, default))
    if found is None:
        unavailable(f"{name} is not installed (Debian package {DEBIAN_PACKAGES[name]})")
    return found

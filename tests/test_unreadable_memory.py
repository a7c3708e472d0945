"""The memory budget where this machine's memory cannot be read (issue 46, ADR 0014).

The command line's default budget (``auto``) is then no budget, said once; a budget the
user asked for (``--memory-budget auto``, ``with_memory_budget("auto")``) is a usage
error naming why, never a traceback. The command-line tests hide ``/proc/meminfo``
behind an empty file in a mount namespace of their own (root and ``unshare`` needed)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from clonegate import MemoryReading, Option, UseCaseConfig, with_memory_budget
from clonegate._adapters.memory import SystemMemorySensor
from clonegate._usecase.estimates import MemoryEstimates

from .support.repos import make_repo
from .support.servers import git_daemon

MiB = 1 << 20
SCRIPT = Path(sys.executable).with_name("clonegate")


class Unreadable:
    def read(self) -> MemoryReading:
        raise OSError("/proc/meminfo: no such file")


def _estimates(*options: Option) -> MemoryEstimates | None:
    return MemoryEstimates.for_budget(UseCaseConfig.of(options), Unreadable(), 1024 * MiB)


def test_an_auto_budget_asked_for_is_refused_where_memory_cannot_be_read() -> None:
    with pytest.raises(ValueError, match=r"cannot be read \(/proc/meminfo: no such file\)"):
        _estimates(with_memory_budget("auto"))


def test_an_auto_budget_not_required_is_no_budget_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="clonegate"):
        assert _estimates(with_memory_budget("auto", required=False)) is None
    (said,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert said.startswith("no memory budget: this machine's memory cannot be read")


def test_a_meminfo_without_its_figures_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "meminfo").write_text("Cached: 12 kB\n")
    with pytest.raises(OSError, match="no MemTotal or MemAvailable"):
        SystemMemorySensor(proc=tmp_path).read()


needs_namespace = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None,
    reason="hiding /proc/meminfo needs root and unshare",
)


def _analyze_without_meminfo(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    empty = tmp_path / "empty"
    empty.write_text("")
    script = f'mount --bind "{empty}" /proc/meminfo && exec "$0" analyze "$@"'
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CLONEGATE_")}
    return subprocess.run(
        ["unshare", "-m", "sh", "-c", script, str(SCRIPT), *arguments],
        capture_output=True,
        text=True,
        env={**environment, "TMPDIR": str(tmp_path)},
        timeout=120,
        check=False,
    )


@needs_namespace
def test_the_default_budget_is_off_with_a_warning_where_memory_cannot_be_read(
    tmp_path: Path,
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "small")
    with git_daemon(served) as daemon:
        done = _analyze_without_meminfo(tmp_path, "--format", "json", daemon.url("small"))
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["summary"]["ok"] == 1
    assert "memory_budget" not in document["summary"]  # no budget, not a made-up one
    warnings = [line for line in done.stderr.splitlines() if "memory" in line]
    assert warnings == [
        "WARNING clonegate: no memory budget: this machine's memory cannot be read "
        "(/proc/meminfo says no MemTotal or MemAvailable); the clone limit alone limits clones"
    ]


@needs_namespace
def test_an_auto_budget_asked_for_is_a_usage_error_where_memory_cannot_be_read(
    tmp_path: Path,
) -> None:
    done = _analyze_without_meminfo(
        tmp_path, "--memory-budget", "auto", "git://127.0.0.1:1/never-cloned.git"
    )
    assert done.returncode == 2
    assert done.stderr == (
        "clonegate: error: a memory budget of 'auto' needs this machine's memory, which cannot "
        "be read (/proc/meminfo says no MemTotal or MemAvailable); give a size, or no budget\n"
    )
    assert done.stdout == ""

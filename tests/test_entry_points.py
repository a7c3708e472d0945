"""The installed entry points start, and the benchmark scripts still run (not timed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import clonegate

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False, timeout=120)


def test_console_script_and_python_m_print_the_version() -> None:
    script = Path(sys.executable).with_name("clonegate")
    for command in ([str(script)], [sys.executable, "-m", "clonegate"]):
        result = _run(*command, "--version")
        assert result.returncode == 0, result.stderr
        assert result.stdout == f"clonegate {clonegate.__version__}\n"


@pytest.mark.slow  # each starts servers and runs a smaller benchmark: seconds to a minute
@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("bench_semaphore.py", "| uncontended acquire+release x2,000 |"),
        ("bench_clone.py", "| clonegate, bare (default) |"),
        ("bench_worker.py", "| fixed cost per clone |"),
        ("bench_analyzer.py", "files per second per core"),
        ("bench_usecase.py", "repositories/s"),
        ("bench_load.py", "peak RSS"),
        ("bench_stop.py", "| CLI: SIGTERM mid-clone |"),
        ("bench_intake.py", "| full-history clone |"),
        ("bench_first_result.py", "| clonegate |"),
        ("bench_batch.py", "| 24 clones: -j 8 |"),
        ("bench_batch_cpu.py", "| mid | clonegate |"),
        ("bench_memory.py", "| budget auto |"),
        ("bench_budget_cost.py", "| first result, one tiny repository | auto |"),
        ("bench_throttle.py", "| -j 3 (oracle) |"),
        ("bench_listing.py", "| streamed / list-then-clone |"),
    ],
)
def test_benchmarks_run_in_quick_mode(script: str, expected: str) -> None:
    result = _run(sys.executable, str(ROOT / "bench" / script), "--quick")
    assert result.returncode == 0, result.stderr
    assert expected in result.stdout

"""The kernel's count of OOM kills: how the pool tells a worker killed for memory from
one that died otherwise (ADR 0014)."""

from __future__ import annotations

import os
from time import monotonic

# A baseline at most this old is reused: reading /proc/vmstat costs ~0.24 ms (the kernel
# formats every counter), which was 9% of the parent's CPU per repository of an
# incremental re-run, whose listings are jobs too. An OOM kill this shortly before a job
# that then dies is counted as the job's: the figure is a heuristic either way (any OOM
# kill on the machine during the job counts).
BASELINE_SECONDS = 0.1

_vmstat: int | None = None
_baseline: tuple[float, int | None] = (-BASELINE_SECONDS, None)


def kills() -> int | None:
    """Processes the kernel's OOM killer has killed since boot (any cgroup), if known.

    Read now; the reading is also the next jobs' baseline (after a worker died, a job
    started at once must not count the kill that ended it as its own)."""
    global _baseline
    value = _read()
    _baseline = (monotonic(), value)
    return value


def _read() -> int | None:
    # One pread of a file kept open (opening it cost 0.3-0.5 ms).
    global _vmstat
    try:
        if _vmstat is None:
            _vmstat = os.open("/proc/vmstat", os.O_RDONLY | os.O_CLOEXEC)
        text = os.pread(_vmstat, 1 << 16, 0)
    except OSError:
        return None
    at = text.find(b"\noom_kill ")
    if at < 0:
        return None
    return int(text[at + 10 : text.index(b"\n", at + 1)])


def baseline() -> int | None:
    """:func:`kills` before a job: read again when the last reading is older than
    ``BASELINE_SECONDS``."""
    if monotonic() - _baseline[0] >= BASELINE_SECONDS:
        return kills()
    return _baseline[1]

"""Memory readings from Linux: the cgroup this process is in (v1 or v2), ``/proc/meminfo``
and pressure stall information (PSI), behind the domain's ``MemorySensor`` (ADR 0014)."""

from __future__ import annotations

import time
from pathlib import Path

from .._domain.memory import MemoryReading

__all__ = ["SystemMemorySensor"]

# cgroup v1 writes "no limit" as a huge number (LONG_MAX rounded to a page).
_NO_LIMIT = 1 << 60


class SystemMemorySensor:
    """Reads the memory this process may use: its cgroup's limit and working set where
    a limit applies (in v1 the hierarchical limit, in v2 the smallest ``memory.max`` up
    the tree), otherwise the machine's ``MemTotal`` and ``MemAvailable``.

    The working set is usage without inactive file cache, which the kernel reclaims
    before it kills anything (what kubelet and Docker count). Pressure is the share
    of wall time some task stalled on memory since the previous ``read`` (from the
    ``total`` stall microseconds of the cgroup's ``memory.pressure`` in v2, else of
    ``/proc/pressure/memory``); ``None`` on the first read or without PSI. Failures
    count the times the limiting cgroup hit its limit (v1 ``memory.failcnt`` and
    ``memory.memsw.failcnt`` of this process's own group: a limit set higher up counts
    in its own group, not here).
    """

    def __init__(self, proc: Path = Path("/proc")) -> None:
        self._proc = proc
        self._v1, self._v2 = _cgroup_directories(proc)
        pressure = self._v2 / "memory.pressure" if self._v2 is not None else None
        if pressure is None or not pressure.exists():
            pressure = proc / "pressure" / "memory"
        self._pressure_file = pressure
        self._last_stall: tuple[float, int] | None = None

    def read(self) -> MemoryReading:
        info = _key_values(self._proc / "meminfo")
        if "MemTotal" not in info or "MemAvailable" not in info:  # before Linux 3.14
            raise OSError(f"{self._proc / 'meminfo'} says no MemTotal or MemAvailable")
        limit, available = info["MemTotal"] * 1024, info["MemAvailable"] * 1024
        group = self._group_limit_and_working_set()
        failures = None
        if group is not None and group[0] < limit:
            limit = group[0]
            available = min(available, max(0, group[0] - group[1]))
            failures = self._failures()
        return MemoryReading(limit, available, self._pressure(), failures)

    def _failures(self) -> int | None:
        """The times this cgroup's charges hit its limit, in all (None if unknown)."""
        try:
            if self._v2 is not None:
                return _key_values(self._v2 / "memory.events").get("max")
            if self._v1 is not None:
                # With a memory+swap limit (these tests set both), that counter is
                # charged first and its failures are counted there, not in failcnt.
                names = ("memory.failcnt", "memory.memsw.failcnt")
                counts = [self._v1 / name for name in names]
                return sum(int(count.read_text()) for count in counts if count.exists())
        except (OSError, ValueError):
            pass
        return None

    def _group_limit_and_working_set(self) -> tuple[int, int] | None:
        if self._v2 is not None:
            limits = [_v2_limit(d) for d in (self._v2, *self._v2.parents)]
            known = [limit for limit in limits if limit is not None]
            if known:
                usage = int((self._v2 / "memory.current").read_text())
                stat = _key_values(self._v2 / "memory.stat")
                return min(known), usage - stat.get("inactive_file", 0)
        if self._v1 is not None:
            stat = _key_values(self._v1 / "memory.stat")
            limit = stat.get("hierarchical_memory_limit", _NO_LIMIT)
            if limit < _NO_LIMIT:
                usage = int((self._v1 / "memory.usage_in_bytes").read_text())
                return limit, usage - stat.get("total_inactive_file", 0)
        return None

    def _pressure(self) -> float | None:
        try:
            some = self._pressure_file.read_text().splitlines()[0]
        except (OSError, IndexError):
            return None
        stalled = int(some.rsplit("total=", 1)[1])
        now = time.monotonic()
        last, self._last_stall = self._last_stall, (now, stalled)
        if last is None or now <= last[0]:
            return None
        return min(1.0, (stalled - last[1]) / 1e6 / (now - last[0]))


def _key_values(path: Path) -> dict[str, int]:
    """``name value`` or ``name: value kB`` lines (meminfo, memory.stat) as integers."""
    values = {}
    for line in path.read_text().splitlines():
        parts = line.replace(":", " ").split()
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    return values


def _v2_limit(directory: Path) -> int | None:
    try:
        text = (directory / "memory.max").read_text().strip()
    except OSError:
        return None
    return None if text == "max" else int(text)


def _cgroup_directories(proc: Path) -> tuple[Path | None, Path | None]:
    """This process's v1 ``memory`` cgroup directory and its v2 directory, if mounted."""
    v1_mount = v2_mount = None
    try:
        mounts = (proc / "self" / "mountinfo").read_text().splitlines()
        memberships = (proc / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None, None
    for line in mounts:
        fields, _, rest = line.partition(" - ")
        kind, _source, options = [*rest.split(), "", ""][:3]
        mount_point = Path(fields.split()[4])
        if kind == "cgroup2":
            v2_mount = mount_point
        elif kind == "cgroup" and "memory" in options.split(","):
            v1_mount = mount_point
    v1 = v2 = None
    for line in memberships:
        _hierarchy, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if controllers == "" and v2_mount is not None:
            v2 = v2_mount / relative
        elif "memory" in controllers.split(",") and v1_mount is not None:
            v1 = v1_mount / relative
    return (v1 if v1 is not None and v1.is_dir() else None), (
        v2 if v2 is not None and (v2 / "memory.current").exists() else None
    )

"""What a worker reads of its own memory: its resident size, its address space, and
a job's peak above the zygote's pages; and its place in the OOM killer's choice
(ADR 0014). No trio: workers import it."""

from __future__ import annotations

import os
import resource

__all__ = ["address_space", "first_to_go", "job_peak", "resident"]


def job_peak(start: int) -> int:
    """Bytes of memory the job cost at most, beyond the zygote's (ADR 0014).

    The peak resident size above the start counts each page the job added, but not
    the zygote's pages it wrote to (reference counts do, everywhere): these became
    private copies without growing the resident size. They are never shared again,
    so their number at the end (private pages beyond those the job added) bounds
    their number at the peak.
    """
    added = max(0, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - start)
    fields = {}
    try:
        with open("/proc/self/smaps_rollup", "rb") as rollup:
            for line in rollup:
                name, _, rest = line.partition(b":")
                if rest.endswith(b" kB\n"):
                    fields[name] = int(rest.split()[0]) * 1024
    except (OSError, ValueError):
        return added
    private = fields.get(b"Private_Clean", 0) + fields.get(b"Private_Dirty", 0)
    copied = max(0, private - (fields.get(b"Rss", 0) - start))
    return added + copied


def resident() -> int:
    """This process's resident memory in bytes."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def address_space() -> int:
    """This process's virtual size in bytes (what RLIMIT_AS counts)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def first_to_go() -> None:
    """Make this worker the OOM killer's first choice (ADR 0014). When memory runs
    out, losing one job is better than losing the parent, which holds every result,
    or the zygote; raising one's own score needs no privilege."""
    try:
        with open("/proc/self/oom_score_adj", "w") as score:
            score.write("1000")
    except OSError:
        pass  # no procfs: the kernel chooses by size alone

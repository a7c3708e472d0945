"""``-j`` within what the open-file limit (``ulimit -n``, RLIMIT_NOFILE) allows (issue 38).

Each running clone holds file descriptors in this process: its worker's socket and
pidfd, and for a moment the directories its removal walks. Past the limit, forks and
removals fail with EMFILE. So ``-j`` is lowered, with a warning, to the clones whose
descriptors fit; first the soft limit is raised towards the hard one if that is enough.
"""

from __future__ import annotations

import os
import resource

__all__ = ["clones_within_open_file_limit"]

# Measured with 2 CPUs (issue 38): the command line holds about 6 descriptors when it
# reads its options, its run adds about 11 (event loop, signal wake-up, the output's
# reopened stdout, the store's files, the zygote's socket) and 2 per analysis worker
# (one per CPU); each clone running adds 3 to 4 at its peak.
_RUN_DESCRIPTORS = 12
_PER_ANALYSIS_WORKER = 2
PER_CLONE = 4


def clones_within_open_file_limit(jobs: int) -> tuple[int, int | None]:
    """How many of ``jobs`` clones at once the open-file limit allows (at least 1), and
    that limit (None: unlimited). May raise this process's soft limit, up to the hard."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    reserved = (
        len(os.listdir("/proc/self/fd"))
        + _RUN_DESCRIPTORS
        + _PER_ANALYSIS_WORKER * (os.cpu_count() or 1)
    )
    needed = reserved + PER_CLONE * jobs
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        if raised > soft:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
    if soft == resource.RLIM_INFINITY:
        return jobs, None
    return max(1, min(jobs, (soft - reserved) // PER_CLONE)), soft

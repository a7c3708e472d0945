"""How a worker process that ended without a reply is told apart (see :mod:`.pool`)."""

from __future__ import annotations

import os
import signal

__all__ = ["WorkerDied"]

# Signals of a process that crashed (as native code does when an allocation fails).
_CRASHES = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT})


class WorkerDied(Exception):
    """The worker process ended without a reply (killed, or crashed in native code).

    ``out_of_memory``: it was killed with SIGKILL while the kernel's out-of-memory
    killer killed something (its count in ``/proc/vmstat`` rose during the job, or at
    most ``oom.BASELINE_SECONDS`` before it), so it was, in all likelihood, the OOM
    killer's victim.

    ``allowance_used_up``: it crashed (SIGSEGV, SIGBUS, SIGABRT) with at least 90% of
    its job's memory allowance resident at its peak. Native code that cannot allocate
    (tree-sitter's parser: measured, issue 38) crashes instead of raising
    ``MemoryError``; a crash at the allowance is the allowance's doing.
    """

    def __init__(
        self,
        status: int | None,
        peak_rss_bytes: int,
        *,
        out_of_memory: bool = False,
        allowance: int = 0,
    ) -> None:
        self.signal = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
        self.peak_rss_bytes = peak_rss_bytes
        self.out_of_memory = out_of_memory and self.signal == signal.SIGKILL
        self.allowance_used_up = (
            allowance > 0 and self.signal in _CRASHES and peak_rss_bytes >= allowance * 0.9
        )
        if self.out_of_memory:
            how = "killed by the kernel's out-of-memory killer"
        elif self.allowance_used_up:
            how = f"killed by signal {self.signal} with its memory allowance used up"
        elif self.signal:
            how = f"killed by signal {self.signal}{_name(self.signal)}"
        elif status is not None and os.WIFEXITED(status):
            how = f"ended without a reply (exit status {os.WEXITSTATUS(status)})"
        else:
            how = "ended without a reply"
        self.how = how  # for the job's own error message
        super().__init__(f"the worker process was {how}")


def _name(signum: int) -> str:
    try:
        return f" ({signal.Signals(signum).name})"
    except ValueError:  # a real-time signal has no name
        return ""

"""What an analysis job holds in the memory budget while it runs (issue 46, ADR 0014)."""

from __future__ import annotations

import math
from collections import deque

from .admission import MemoryAdmission, MemoryLease
from .estimates import MiB

__all__ = ["ANALYSIS_OPENING", "AnalysisMemory"]

# MiB an analysis job holds before any of this run's jobs was measured: the corpus's
# 60 real repositories peak at 7-21 MiB a job (p95 17), the listing of 30,000 files at
# 23 (bench/bench_analysis_memory.py).
ANALYSIS_OPENING = 24


class AnalysisMemory:
    """The budget's share for analysis jobs (the domain's ``JobMemory``): each holds the
    nearest-rank 90th percentile of the last ``window`` jobs' measured peaks, times
    ``margin`` (:data:`ANALYSIS_OPENING` before any), at most the budget.

    A job that failed teaches nothing: its peak is not measured, and a repository whose
    file took a worker to its cap is that repository's failure (``out_of_memory``),
    not what the next repository needs. What the share does not bound (a job past its
    figure, up to its worker's cap) the controller sees in the readings, and the OOM
    killer takes a worker, the largest, first (ADR 0014).
    """

    def __init__(
        self,
        admission: MemoryAdmission,
        *,
        quantile: float = 0.9,
        margin: float = 1.25,
        window: int = 32,
        opening: int = ANALYSIS_OPENING,
    ) -> None:
        self._admission = admission
        self._quantile, self._margin, self._opening = quantile, margin, opening
        self._peaks: deque[int] = deque(maxlen=window)  # MiB

    def estimate(self) -> int:
        """MiB the next analysis job holds."""
        if not self._peaks:
            return self._opening
        ordered = sorted(self._peaks)
        rank = max(0, math.ceil(self._quantile * len(ordered)) - 1)
        return max(1, math.ceil(ordered[rank] * self._margin))

    async def hold(self) -> MemoryLease:
        return await self._admission.hold(self.estimate())

    def release(self, held: object, peak: int | None) -> None:
        """Give ``held`` back; learn ``peak`` (bytes), if the job measured one."""
        assert isinstance(held, MemoryLease)
        self._admission.release(held)
        if peak is not None:
            self._peaks.append(max(1, math.ceil(peak / MiB)))

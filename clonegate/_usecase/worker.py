"""``ClusterWorker``: take jobs from a shared queue, run each through the use case, write
its report once, and only then acknowledge it (ADR 0015)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import trio

from .._domain.checks import positive_int, positive_seconds
from .._domain.jobs import Job, JobQueue
from .._domain.reports import RepositoryReport
from .._domain.urls import shown_url
from .analyze import AnalyzeUseCase

__all__ = ["ClusterWorker", "WorkerTotals"]

logger = logging.getLogger("clonegate")


@dataclass
class WorkerTotals:
    taken: int = 0
    reported: int = 0  # reports this worker wrote
    superseded: int = 0  # finished, not written: reported already, or taken over
    dead_lettered: int = 0
    by_status: dict[str, int] = field(default_factory=dict)


class ClusterWorker:
    """Runs jobs from ``queue`` through ``use_case`` until cancelled (or, with
    ``exit_when_done``, until the queue is idle).

    The queue reclaims a job after ``claim_idle`` seconds without renewal; this
    worker renews its running jobs every third of that. With nothing to do, it waits
    for new jobs indefinitely, looking for jobs to reclaim every third of that too.

    At-least-once: a job is acknowledged only once its report is written, so a worker
    that dies mid-job leaves it pending; after ``claim_idle`` seconds without renewal
    another worker reclaims it. At most one report per job per run: the report and the
    acknowledgement are one atomic step that writes nothing if the job's repository
    already has a report in its run, or if this worker no longer holds the job (it
    was taken over): the owner's report is the one that counts. A job handed out more
    than ``max_deliveries`` times (it keeps killing its workers) gets a ``dead_letter``
    report instead of a further attempt.
    """

    def __init__(
        self,
        queue: JobQueue,
        use_case: AnalyzeUseCase,
        *,
        in_flight: int | None = None,
        max_deliveries: int = 3,
    ) -> None:
        self.queue = queue
        self.use_case = use_case
        # One job more than clone slots: the next clone starts without a round trip.
        self.in_flight = positive_int(
            "in_flight", in_flight or use_case.config.max_concurrent_clones + 1
        )
        self.claim_idle = positive_seconds("claim_idle", queue.claim_idle)
        self.max_deliveries = positive_int("max_deliveries", max_deliveries)
        self.totals = WorkerTotals()
        self._running: dict[str, Job] = {}

    async def run(self, *, exit_when_done: bool = False) -> WorkerTotals:
        """Work until cancelled; with ``exit_when_done``, return once the queue is idle."""
        slots = trio.Semaphore(self.in_flight)
        # Idle, a worker waits for new jobs for ever, and reclaims a dead worker's every
        # third of claim_idle; with exit_when_done, it checks for the end every second.
        wait = min(1.0, self.claim_idle / 3) if exit_when_done else self.claim_idle / 3
        async with self.use_case.session(), trio.open_nursery() as nursery:
            nursery.start_soon(self._renew_forever)
            while True:
                await slots.acquire()
                free = 1 + _take_all(slots)
                jobs = await self.queue.take(free, wait=wait)
                for _ in range(free - len(jobs)):
                    slots.release()
                for job in jobs:
                    self.totals.taken += 1
                    nursery.start_soon(self._one, job, slots)
                if not jobs and not self._running and exit_when_done and await self.queue.idle():
                    break
            nursery.cancel_scope.cancel()
        return self.totals

    async def _one(self, job: Job, slots: trio.Semaphore) -> None:
        try:
            if job.id in self._running:
                # Its own job, reclaimed once its renewals had failed for claim_idle (a
                # Redis outage ridden out): the run goes on under the new delivery, so
                # its report passes the fence. Run twice here, the two would collide.
                self._running[job.id] = job
                return
            if job.deliveries > self.max_deliveries:
                report = RepositoryReport.failure(
                    shown_url(job.url),
                    job.index,
                    "clone",
                    "dead_letter",
                    f"{shown_url(job.url)}: {job.deliveries - 1} workers stopped while running "
                    "this job (killed, out of memory, or lost); it was not run again",
                )
                self.totals.dead_lettered += 1
                await self._finish(job, report)
                return
            self._running[job.id] = job  # before the start: it may take an outage long
            try:
                if not await self.queue.start(job):
                    return  # reported already, or taken over by another worker (logged)
                report = await self.use_case.execute(job.url, index=job.index)
            finally:
                job = self._running.pop(job.id)  # the latest delivery: see above
            await self._finish(job, report)
        finally:
            slots.release()

    async def _finish(self, job: Job, report: RepositoryReport) -> None:
        if await self.queue.finish(job, report):
            self.totals.reported += 1
            self.totals.by_status[report.status] = self.totals.by_status.get(report.status, 0) + 1
        else:
            self.totals.superseded += 1

    async def _renew_forever(self) -> None:
        while True:
            await trio.sleep(self.claim_idle / 3)
            if self._running:
                for job in await self.queue.renew(list(self._running.values())):
                    # It was reclaimed while this worker was slow (paused, cut off):
                    # its report will be dropped; the new owner's counts.
                    logger.warning("job %s (%s) was taken over by another worker", job.id, job.url)


def _take_all(slots: trio.Semaphore) -> int:
    taken = 0
    while True:
        try:
            slots.acquire_nowait()
        except trio.WouldBlock:
            return taken
        taken += 1

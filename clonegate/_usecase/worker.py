"""``ClusterWorker``: take jobs from a shared queue, run each through the use case, write
its report once, and only then acknowledge it (ADR 0015)."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import trio

from .._domain.checks import positive_int, positive_seconds
from .._domain.jobs import Job, JobQueue
from .._domain.limits import LimitError
from .._domain.reports import RepositoryReport
from .._domain.urls import redact, shown_url
from .analyze import AnalyzeUseCase

__all__ = ["ClusterWorker", "WorkerTotals"]

logger = logging.getLogger("clonegate")

# With exit_when_done, the queue must look idle this many times in a row, a take's
# wait apart: a master that a failover demoted answers until the client follows the
# sentinels (every 0.5 s), and its idle may be false (its writes are lost with it).
# Seen once, a worker that finished its jobs on it left the run's other jobs unrun.
IDLE_CHECKS = 3


@dataclass
class WorkerTotals:
    taken: int = 0
    reported: int = 0  # reports this worker wrote
    superseded: int = 0  # finished, not written: reported already, or taken over
    dead_lettered: int = 0
    retried: int = 0  # put back after an infrastructure error (a shared limit failed)
    stopped: int = 0  # cancelled mid-run: another worker took the job over
    memory_thrash: int = 0  # stretches without progress under memory pressure (ADR 0014)
    by_status: dict[str, int] = field(default_factory=dict)


@dataclass
class _Held:
    """A job from its take to its end, and the scope its run is cancelled with."""

    job: Job
    scope: trio.CancelScope = field(default_factory=trio.CancelScope)
    taken_over: bool = False
    ending: bool = False  # its run is over: being reported or put back (fenced)


class ClusterWorker:
    """Runs jobs from ``queue`` through ``use_case`` until cancelled (or, with
    ``exit_when_done``, until the queue is idle).

    The queue reclaims a job after ``claim_idle`` seconds without renewal; this
    worker renews its jobs every third of that, and stops running (and writes nothing
    for) a job another worker took over meanwhile. With nothing to do, it waits for
    new jobs indefinitely, looking for jobs to reclaim every third of that too.

    At-least-once: a job is acknowledged only once its report is written, so a worker
    that dies mid-job leaves it pending; after ``claim_idle`` seconds without renewal
    another worker reclaims it. At most one report per job per run: the report and the
    acknowledgement are one atomic step that writes nothing if the job's repository
    already has a report in its run, or if this worker no longer holds the job (it
    was taken over): the owner's report is the one that counts.

    Infrastructure is never the repository's fault: when a shared limit fails (its
    Redis unreachable, the lease lost), the job is put back for a later attempt,
    counted and after a backoff, with no report.

    Poison isolation: a reclaimed job may be what killed its worker, so it is taken
    only by a worker that holds no other job, and runs alone (the worker takes
    nothing else meanwhile); a worker that holds jobs takes no new ones while such a
    job waits, until it holds none. A job is dead-lettered (a ``dead_letter`` report
    instead of a further attempt) once ``max_deliveries`` workers stopped while
    holding it and one of them ran it alone: a job that only shared a worker with
    the one that killed it is run again.
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
        self._held: dict[tuple[str, int], _Held] = {}  # by job id and delivery
        self._ended = trio.Event()  # a held job ended (replaced once set)
        self._thrash_told = 0  # the use case's count of thrash when last told to the queue

    async def run(self, *, exit_when_done: bool = False) -> WorkerTotals:
        """Work until cancelled; with ``exit_when_done``, return once the queue is idle."""
        slots = trio.Semaphore(self.in_flight)
        # Idle, a worker waits for new jobs for ever, and reclaims a dead worker's every
        # third of claim_idle; with exit_when_done, it checks for the end every second.
        wait = min(1.0, self.claim_idle / 3) if exit_when_done else self.claim_idle / 3
        thrash = self._thrash_told = self.use_case.memory_thrash  # the use case counts
        try:
            await self._work(slots, wait, exit_when_done)
        finally:
            self.totals.memory_thrash += self.use_case.memory_thrash - thrash
        return self.totals

    async def _work(self, slots: trio.Semaphore, wait: float, exit_when_done: bool) -> None:
        async with self.use_case.session(), trio.open_nursery() as nursery:
            nursery.start_soon(self._renew_forever)
            idle = 0  # the queue looked idle this many times in a row
            while True:
                await slots.acquire()
                free = 1 + _take_all(slots)
                # Holding none, it may reclaim a dead worker's job (to run alone).
                jobs = await (self.queue.take_new if self._held else self.queue.take)(free, wait)
                for _ in range(free - len(jobs or ())):
                    slots.release()
                if jobs is None:  # a reclaimable job waits for a worker holding none
                    await self._until_empty()
                    continue
                for job in jobs:
                    self.totals.taken += 1
                    held = self._held[job.id, job.deliveries] = _Held(job)
                    nursery.start_soon(self._one, held, slots)
                if any(job.reclaimed for job in jobs):
                    await self._until_empty()  # it runs alone
                if jobs or self._held or not exit_when_done or not await self.queue.idle():
                    idle = 0
                elif (idle := idle + 1) >= IDLE_CHECKS:
                    break
            nursery.cancel_scope.cancel()

    async def _until_empty(self) -> None:
        await trio.lowlevel.checkpoint()
        while self._held:
            await self._ended.wait()

    async def _one(self, held: _Held, slots: trio.Semaphore) -> None:
        job = held.job
        try:
            if job.deaths >= self.max_deliveries and job.died_alone:
                await self._dead_letter(job)
                return
            if not await self.queue.start(job, alone=job.reclaimed):
                return  # reported already, or taken over by another worker (logged)
            report: RepositoryReport | None = None
            failure: LimitError | None = None
            with held.scope:
                try:
                    line = job.url if job.listed is None else job.listed  # ADR 0023
                    report = await self.use_case.execute(
                        line, index=job.index, raise_limit_errors=True
                    )
                except LimitError as exc:
                    failure = exc
            # From here the scripts are fenced: a renewal that finds the job gone is
            # about this end (its own RETRY or FINISH), not a takeover.
            held.ending = True
            await self._tell_thrash()  # before the report: with it when results are read
            if held.taken_over:
                self.totals.stopped += 1
                logger.warning("job %s (%s): stopped, another worker has it", job.id, job.url)
            elif failure is not None:
                await self._retry(job, failure)
            elif report is not None:
                await self._finish(job, report)
        finally:
            del self._held[job.id, job.deliveries]
            self._ended.set()
            self._ended = trio.Event()
            slots.release()

    async def _dead_letter(self, job: Job) -> None:
        report = RepositoryReport.failure(
            shown_url(job.url),
            job.index,
            "clone",
            "dead_letter",
            f"{shown_url(job.url)}: {job.deaths} workers stopped while running this job "
            "(killed, out of memory, or lost), one of them running it alone; it was not "
            "run again",
        )
        self.totals.dead_lettered += 1
        await self._finish(job, report)

    async def _retry(self, job: Job, exc: LimitError) -> None:
        reason = redact(str(exc))
        retry = await self.queue.retry(job, f"{exc.kind}: {reason}")
        if retry is None:  # taken over meanwhile (logged): the new owner runs it
            self.totals.superseded += 1
            return
        self.totals.retried += 1
        logger.warning(
            "job %s (%s): put back, retry %d in %.1f s, after an infrastructure error: %s",
            job.id,
            shown_url(job.url),
            retry.attempt,
            retry.delay,
            reason,
        )

    async def _finish(self, job: Job, report: RepositoryReport) -> None:
        if await self.queue.finish(job, report):
            self.totals.reported += 1
            self.totals.by_status[report.status] = self.totals.by_status.get(report.status, 0) + 1
        else:
            self.totals.superseded += 1

    async def _tell_thrash(self) -> None:
        """Count the stretches of memory thrash since the last call in the runs of the
        jobs held now (their jobs ran through them; a run's summary says so, ADR 0014).
        Always a checkpoint."""
        counted = self.use_case.memory_thrash
        stretches, self._thrash_told = counted - self._thrash_told, counted
        runs = sorted({held.job.run for held in self._held.values()})
        if not stretches or not runs:  # nothing to tell, or no run to tell it to
            await trio.lowlevel.checkpoint()
            return
        await self.queue.note_thrash(runs, stretches)

    async def _renew_forever(self) -> None:
        while True:
            await trio.sleep(self.claim_idle / 3)
            await self._tell_thrash()
            if self._held:
                held = list(self._held.values())
                for job in await self.queue.renew([h.job for h in held]):
                    # Reclaimed while this worker was slow (paused, cut off): its run
                    # stops now, and writes nothing; the new owner's report counts.
                    taken = self._held.get((job.id, job.deliveries))
                    if taken is not None and not taken.ending:
                        taken.taken_over = True
                        taken.scope.cancel()
                        logger.warning(
                            "job %s (%s) was taken over by another worker", job.id, job.url
                        )


def _take_all(slots: trio.Semaphore) -> int:
    taken = 0
    while True:
        try:
            slots.acquire_nowait()
        except trio.WouldBlock:
            return taken
        taken += 1

"""The port of a shared work queue: jobs that several worker processes take, run and
report, each report written once (ADR 0015)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .listed import Listed
from .reports import RepositoryReport

__all__ = ["Job", "JobQueue", "Retry"]


@dataclass(frozen=True, slots=True)
class Job:
    id: str  # the queue's own id for this delivery
    run: str  # the run it was submitted to
    index: int  # its line in the submitted list
    url: str
    key: str  # the repository's normalized URL: one report per key per run
    deliveries: int  # times handed to a worker, this one included
    retries: int = 0  # times put back after an infrastructure error (not the job's fault)
    # Workers lost while they ran it, before its latest retry (deliveries - 1 counts since).
    earlier_deaths: int = 0
    died_alone: bool = False  # a worker died while running it and nothing else
    listed: Listed | None = None  # what a forge's listing said of it (ADR 0023)

    @property
    def deaths(self) -> int:
        """Workers that stopped (died, were lost) while they held this job."""
        return self.earlier_deaths + self.deliveries - 1

    @property
    def reclaimed(self) -> bool:
        """Taken from a worker that stopped renewing it: it may be what killed that one."""
        return self.deliveries > 1


@dataclass(frozen=True, slots=True)
class Retry:
    attempt: int  # the job's retries, this one included
    delay: float  # seconds before it is handed out again (by the queue's clock)


class JobQueue(Protocol):
    """What :class:`ClusterWorker` needs from a queue. Every method is a checkpoint."""

    consumer: str  # this worker's name in the queue
    claim_idle: float  # seconds a job may go unrenewed before another worker takes it

    async def take(self, n: int, wait: float) -> list[Job]:
        """For a worker that holds no job: one job whose worker stopped renewing it (it
        died), alone, as the worker must run it alone (poison isolation); else up to
        ``n`` new ones, waiting up to ``wait`` seconds for any (or less: a queue may
        bound its waits; then it returns none sooner)."""
        ...

    async def take_new(self, n: int, wait: float) -> list[Job] | None:
        """For a worker that holds jobs: up to ``n`` new ones as :meth:`take`; None, at
        once, if a job waits to be reclaimed (then the worker takes nothing more until
        it holds none, and can run that one alone)."""
        ...

    async def start(self, job: Job, *, alone: bool = False) -> bool:
        """Record that this worker runs ``job`` (``alone``: and nothing else, until it
        ends); False if it already has its report (then it is acknowledged and must
        not run again), or if this worker no longer holds it (another worker took it
        over: that one runs it)."""
        ...

    async def renew(self, jobs: list[Job]) -> list[Job]:
        """Keep ``jobs`` from being reclaimed; returns those this worker no longer holds
        (another worker took them over)."""
        ...

    async def finish(self, job: Job, report: RepositoryReport) -> bool:
        """Write the report, unless the job's key already has one in its run, then
        acknowledge the job; atomically. Only while this worker still holds ``job``
        (the delivery it got): a report from a worker the job was taken from is dropped
        (logged), and acknowledges nothing. Returns whether this report was written."""
        ...

    async def retry(self, job: Job, reason: str) -> Retry | None:
        """Put ``job`` back for another attempt after an infrastructure error (``reason``):
        counted, after a backoff, with no report. Only while this worker still holds it;
        None if it does not (another worker took it over: logged)."""
        ...

    async def note_thrash(self, runs: list[str], stretches: int) -> None:
        """Count ``stretches`` of memory thrash in each of ``runs``: this worker's
        memory thrashed while it ran one of their jobs (ADR 0014)."""
        ...

    async def idle(self) -> bool:
        """No job is queued, waiting to be retried, or being run by anyone."""
        ...

"""The port of a shared work queue: jobs that several worker processes take, run and
report, each report written once (ADR 0015)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from .reports import RepositoryReport

__all__ = ["Job", "JobQueue"]


@dataclass(frozen=True, slots=True)
class Job:
    id: str  # the queue's own id for this delivery
    run: str  # the run it was submitted to
    index: int  # its line in the submitted list
    url: str
    key: str  # the repository's normalized URL: one report per key per run
    deliveries: int  # times handed to a worker, this one included


class JobQueue(Protocol):
    """What :class:`ClusterWorker` needs from a queue. Every method is a checkpoint."""

    async def take(self, n: int, wait: float) -> list[Job]:
        """Up to ``n`` jobs: first those whose worker stopped renewing them (it died),
        then new ones, waiting up to ``wait`` seconds for any (or less: a queue may
        bound its waits; then it returns none sooner)."""
        ...

    consumer: str  # this worker's name in the queue
    claim_idle: float  # seconds a job may go unrenewed before another worker takes it

    async def start(self, job: Job) -> bool:
        """Record that this worker runs ``job``; False if it already has its report
        (then it is acknowledged and must not run again), or if this worker no longer
        holds it (another worker took it over: that one runs it)."""
        ...

    async def renew(self, jobs: list[Job]) -> list[Job]:
        """Keep ``jobs`` from being reclaimed; returns those another worker took over."""
        ...

    async def finish(self, job: Job, report: RepositoryReport) -> bool:
        """Write the report, unless the job's key already has one in its run, then
        acknowledge the job; atomically. Only while this worker still holds ``job``
        (the delivery it got): a report from a worker the job was taken from is dropped
        (logged), and acknowledges nothing. Returns whether this report was written."""
        ...

    async def idle(self) -> bool:
        """No job is queued or being run by anyone."""
        ...

"""ClusterWorker's poison isolation as a unit, on an in-memory queue and the use case's
fakes (ADR 0015, issue 39 item 7): a worker that holds jobs takes nothing while a dead
worker's job waits to be reclaimed, and the job it reclaims runs alone. The same rules on
a real Redis and git daemon: tests/test_cluster_worker_faults.py, test_cluster_poison.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import trio
import trio.testing

from clonegate import AnalyzeUseCase, RepositoryReport
from clonegate.cluster import ClusterWorker, Job, Retry

from .support.fakes import FakeAnalyzer, FakeVCS

A = Job("1-0", "r", 0, "https://git.example/org/a.git", "a", 1)
NEW = Job("3-0", "r", 2, "https://git.example/org/new.git", "new", 1)
# A dead worker's job: reclaimed, its second delivery.
SUSPECT = Job("2-0", "r", 1, "https://git.example/org/suspect.git", "suspect", 2)


class _Queue:
    """Hands out A to a worker holding nothing, then has the suspect waiting to be
    reclaimed (and a new job queued) from then on; records every call."""

    consumer = "w"
    claim_idle = 60.0

    def __init__(self) -> None:
        self._changed = trio.Event()
        self.calls: list[str] = []
        self.started: list[tuple[str, bool]] = []
        self.finished: list[str] = []
        self._new = [A]
        self._suspect: Job | None = None

    @property
    def takes(self) -> list[str]:
        """The worker's calls that take (or finish) jobs, in order."""
        return [call for call in self.calls if call != "start"]

    async def until(self, done: Callable[[], bool]) -> None:
        """Returns once ``done()`` holds, checked after each call the worker makes."""
        while not done():
            await self._changed.wait()

    def _called(self, name: str) -> None:
        self.calls.append(name)
        self._changed.set()
        self._changed = trio.Event()

    async def take(self, n: int, wait: float) -> list[Job]:
        self._called("take")
        if self._suspect is not None:
            suspect, self._suspect = self._suspect, None
            await trio.lowlevel.checkpoint()
            return [suspect]
        return await self._read(n, wait)

    async def take_new(self, n: int, wait: float) -> list[Job] | None:
        self._called("take_new")
        if self._suspect is not None:
            await trio.lowlevel.checkpoint()
            return None
        return await self._read(n, wait)

    async def _read(self, n: int, wait: float) -> list[Job]:
        jobs, self._new = self._new[:n], self._new[n:]
        if jobs == [A]:
            self._suspect, self._new = SUSPECT, [NEW]
        if not jobs:
            await trio.sleep(wait)
        await trio.lowlevel.checkpoint()
        return jobs

    async def start(self, job: Job, *, alone: bool = False) -> bool:
        await trio.lowlevel.checkpoint()
        self.started.append((job.key, alone))
        self._called("start")
        return True

    async def renew(self, jobs: list[Job]) -> list[Job]:
        await trio.lowlevel.checkpoint()
        return []

    async def finish(self, job: Job, report: RepositoryReport) -> bool:
        await trio.lowlevel.checkpoint()
        self.finished.append(job.key)
        self._called("finish")
        return True

    async def retry(self, job: Job, reason: str) -> Retry | None:
        raise AssertionError(f"no infrastructure error here: {reason}")

    async def note_thrash(self, runs: list[str], stretches: int) -> None:
        assert not stretches  # the fakes' use case has no memory sensor
        await trio.lowlevel.checkpoint()

    async def idle(self) -> bool:
        await trio.lowlevel.checkpoint()
        return False


async def test_a_busy_worker_takes_nothing_while_a_suspect_waits_then_runs_it_alone(
    tmp_path: Path,
) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    queue = _Queue()
    use_case = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    worker = ClusterWorker(queue, use_case, in_flight=3)
    with trio.fail_after(60):  # a safety net only
        async with trio.open_nursery() as nursery:
            nursery.start_soon(worker.run)
            await queue.until(lambda: len(queue.takes) == 2)
            await trio.testing.wait_all_tasks_blocked()
            # A clones, the suspect waits: the worker takes no new job beside A.
            assert queue.takes == ["take", "take_new"]
            assert queue.started == [("a", False)]
            vcs.release[A.url].set()
            await queue.until(lambda: len(queue.started) == 2)
            await trio.testing.wait_all_tasks_blocked()
            # A ended: holding nothing, it reclaimed the suspect, alone, and takes nothing.
            assert queue.finished == ["a"]
            assert queue.takes == [
                "take",
                "take_new",
                "finish",
                "take",
            ]
            assert queue.started[-1] == ("suspect", True)
            vcs.release[SUSPECT.url].set()
            # Then it takes new jobs again.
            await queue.until(lambda: len(queue.started) == 3)
            assert queue.finished == ["a", "suspect"]
            assert queue.started[-1] == ("new", False)
            nursery.cancel_scope.cancel()


class _IdleQueue(_Queue):
    """No job to take; idle as ``answers`` say, in turn (then idle): a master demoted
    by a failover said idle, the master followed next had ``LATE`` to run."""

    # A take's wait is a third of this: three idle answers in ~0.3 s of real time. (Not
    # a mock clock: the use case's threads would let it jump past the job's end.)
    claim_idle = 0.3

    def __init__(self, answers: list[bool]) -> None:
        super().__init__()
        self._new = []
        self.answers = answers
        self.idle_calls = 0

    async def _read(self, n: int, wait: float) -> list[Job]:
        if self.idle_calls == 1 and self._late:
            self._late = False
            await trio.lowlevel.checkpoint()
            return [LATE]
        await trio.sleep(wait)
        return []

    _late = True

    async def idle(self) -> bool:
        await trio.lowlevel.checkpoint()
        self.idle_calls += 1
        return self.answers.pop(0) if self.answers else True


LATE = Job("4-0", "r", 3, "https://git.example/org/late.git", "late", 1)


async def test_a_worker_that_exits_when_done_needs_the_queue_idle_three_times_running(
    tmp_path: Path,
) -> None:
    # Idle once (a demoted master's answer), then a job appears: it runs it, and only
    # after three idle answers in a row, a take's wait apart, does the worker leave.
    queue = _IdleQueue([True])
    use_case = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())
    worker = ClusterWorker(queue, use_case)
    with trio.fail_after(60):  # a safety net only
        totals = await worker.run(exit_when_done=True)
    assert queue.finished == ["late"]
    assert totals.reported == 1
    assert queue.idle_calls == 1 + 3

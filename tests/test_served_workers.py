"""Served workers: one process for many small jobs of one kind (workers/served.py)."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable

import pytest
import trio
import trio.testing

from clonegate._adapters.workers import WorkerDied, WorkerPool, open_worker_pool, wire, zygote
from clonegate._adapters.workers.served import MAX_IDLE, ServedWorker
from clonegate._adapters.workers.zygote import RETIRE_GROWTH

from .support import worker_jobs
from .support.processes import pid_alive, reported_exit


async def test_jobs_of_one_kind_share_a_worker_that_ends_with_the_pool() -> None:
    async with open_worker_pool() as pool:
        pids = [(await pool.run(worker_jobs.pid, reuse="k"))[0] for _ in range(5)]
        fresh, _ = await pool.run(worker_jobs.pid)  # no kind: a fork of its own, as always
        stats = pool.statistics()
        assert len(set(pids)) == 1
        assert pid_alive(pids[0])  # idle, waiting for the next job
    assert fresh != pids[0]
    assert stats.workers_started == 2
    assert not pid_alive(pids[0])


async def test_kinds_and_allowances_do_not_share_workers() -> None:
    async with open_worker_pool() as pool:
        a, _ = await pool.run(worker_jobs.pid, reuse="a")
        b, _ = await pool.run(worker_jobs.pid, reuse="b")
        capped, _ = await pool.run(worker_jobs.pid, reuse="a", memory_allowance=64 << 20)
        again, _ = await pool.run(worker_jobs.pid, reuse="a")
    assert len({a, b, capped}) == 3
    assert again == a


async def test_a_job_that_raises_ends_its_worker() -> None:
    async with open_worker_pool() as pool:
        first, _ = await pool.run(worker_jobs.pid, reuse="k")
        with pytest.raises(ValueError, match="no good"):
            await pool.run(worker_jobs.fail, "no good", reuse="k")
        after, _ = await pool.run(worker_jobs.pid, reuse="k")
        assert after != first
        assert pool.statistics().workers_started == 2  # the failing job ran in `first`


async def test_a_job_can_ask_its_worker_to_end() -> None:
    async with open_worker_pool() as pool:
        first, _ = await pool.run(worker_jobs.pid_then_end, reuse="k")
        await reported_exit(pool, first)  # it ended on its own, after its reply
        after, _ = await pool.run(worker_jobs.pid, reuse="k")
    assert after != first


async def test_a_worker_whose_memory_grew_ends_after_its_reply() -> None:
    async with open_worker_pool() as pool:
        small, _ = await pool.run(worker_jobs.keep, 1 << 20, reuse="k")
        same, _ = await pool.run(worker_jobs.keep, RETIRE_GROWTH, reuse="k")
        await reported_exit(pool, same)
        after, _ = await pool.run(worker_jobs.pid, reuse="k")
    assert small == same
    assert after != same


async def test_each_job_of_a_served_worker_has_its_own_peak_and_allowance() -> None:
    # Clones run in served workers: each must be measured and capped as in a fresh
    # worker, since the memory budget learns from a clone's own peak (ADR 0014) and an
    # earlier clone's leftovers must not eat into the next one's allowance.
    allowance = 256 << 20
    async with open_worker_pool() as pool:

        async def run(job: Callable[..., int], *args: object) -> tuple[int, int]:
            return await pool.run(job, *args, memory_allowance=allowance, reuse="k")

        first, big_peak = await run(worker_jobs.allocated_in, 200 << 20)
        second, small_peak = await run(worker_jobs.pid)
        third, big_again = await run(worker_jobs.allocated_in, 200 << 20)
        with pytest.raises(MemoryError):
            await run(worker_jobs.allocated_in, 300 << 20)
    assert first == second == third
    assert big_peak >= 200 << 20
    assert big_again >= 200 << 20
    assert small_peak < 64 << 20


async def at_once(pool: WorkerPool, count: int) -> list[int]:
    """The pids of ``count`` jobs of one kind asked for at the same moment, in the
    order they finished."""
    gate = trio.Event()
    pids: list[int] = []

    async def job() -> None:
        await gate.wait()
        pids.append((await pool.run(worker_jobs.pid, reuse="k"))[0])

    async with trio.open_nursery() as nursery:
        for _ in range(count):
            nursery.start_soon(job)
        await trio.testing.wait_all_tasks_blocked()
        gate.set()
    return pids


async def test_concurrent_jobs_get_workers_of_their_own_then_share_them() -> None:
    async with open_worker_pool() as pool:
        pids = await at_once(pool, 3)
        for _ in range(6):
            pids.append((await pool.run(worker_jobs.pid, reuse="k"))[0])
        assert len(set(pids[:3])) == 3  # never two jobs in one worker at once
        assert set(pids[3:]) <= set(pids[:3])
        assert pool.statistics().workers_started == 3


async def test_idle_workers_are_bounded_per_kind() -> None:
    async with open_worker_pool() as pool:
        pids = await at_once(pool, MAX_IDLE + 2)  # a worker each
        assert len(set(pids)) == MAX_IDLE + 2
        # Idle in the order they finished; the two idle longest were ended.
        await reported_exit(pool, pids[0])
        await reported_exit(pool, pids[1])
        assert pool.statistics().workers_running & set(pids) == set(pids[2:])


async def test_an_idle_worker_killed_from_outside_is_replaced() -> None:
    async with open_worker_pool() as pool:
        first, _ = await pool.run(worker_jobs.pid, reuse="k")
        os.kill(first, signal.SIGKILL)
        await reported_exit(pool, first)
        after, _ = await pool.run(worker_jobs.pid, reuse="k")
    assert after != first


async def test_cancelling_a_served_job_kills_its_worker() -> None:
    async with open_worker_pool() as pool:
        idle, _ = await pool.run(worker_jobs.pid, reuse="k")
        with trio.CancelScope() as scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(lambda: pool.run(worker_jobs.sleep_forever, reuse="k"))
                await trio.testing.wait_all_tasks_blocked()
                scope.cancel()
        assert not pid_alive(idle)  # the job ran in the idle worker, which was killed
        after, _ = await pool.run(worker_jobs.pid, reuse="k")
    assert after != idle


async def test_a_worker_dead_before_its_job_arrives_is_reported_as_died(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The worker ends between the idle check and the job's arrival (staged: the check
    # is made to miss it): the caller gets WorkerDied, as for any worker that ends
    # without a reply, not a broken stream.
    async with open_worker_pool() as pool:
        first, _ = await pool.run(worker_jobs.pid, reuse="k")
        os.kill(first, signal.SIGKILL)
        await reported_exit(pool, first)
        monkeypatch.setattr(ServedWorker, "alive", lambda self: True)
        with pytest.raises(WorkerDied, match="killed by signal 9"):
            await pool.run(worker_jobs.pid, reuse="k")
        after, _ = await pool.run(worker_jobs.pid, reuse="k")
    assert after != first


async def test_frames_that_arrive_in_one_read_are_each_heard() -> None:
    """Notes and a reply written back to back reach the parent in one read: each frame
    is taken whole, and what follows it is kept for the next, not dropped."""
    ours, theirs = trio.socket.socketpair()
    worker = ServedWorker(pid=0, stream=trio.SocketStream(ours), pidfd=-1, cell=None)  # type: ignore[arg-type]
    frames = [wire.dump(wire.Note(1)), wire.dump(wire.Note(2)), wire.dump(wire.Reply(value="done"))]
    data = b"".join(wire.frame(payload) for payload in frames)
    await theirs.send(data[:-3])  # all but the reply's last bytes
    heard: list[object] = []
    async with trio.open_nursery() as nursery:

        async def finish() -> None:
            await trio.testing.wait_all_tasks_blocked()  # the parent waits for the rest
            await theirs.send(data[-3:])
            theirs.close()  # then nothing more: a lost frame reads as an early end

        nursery.start_soon(finish)
        reply = await worker.reply(None, heard.append)
    await worker.stream.aclose()
    assert heard == [1, 2]
    assert reply == wire.Reply(value="done")
    assert worker.unread == bytearray()


async def test_a_burst_of_notes_then_the_reply_reaches_the_parent_whole() -> None:
    """A real served worker sends thousands of notes as fast as it can: the parent hears
    each, in order, and the reply after them, job after job in the same worker."""
    heard: list[object] = []
    async with open_worker_pool() as pool:
        for _ in range(3):
            heard.clear()
            value, _ = await pool.run(worker_jobs.tell_many, 2000, reuse="k", on_note=heard.append)
            assert value == 2000
            assert heard == list(range(2000))
        assert pool.statistics().workers_started == 1


def test_a_frame_is_sent_with_the_breach_signal_held_back(monkeypatch: pytest.MonkeyPatch) -> None:
    """The clone envelope's SIGUSR1 raises in the worker's main thread: while a frame
    is being sent it is held back (delivered after), so it can never cut a frame."""
    masks: list[set[int | signal.Signals]] = []

    class Stream:
        def sendall(self, data: bytes) -> None:
            masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, []))

    monkeypatch.setattr(zygote, "_job_stream", Stream())
    zygote.tell_parent(1)
    assert signal.SIGUSR1 in masks[0]
    assert signal.SIGUSR1 not in signal.pthread_sigmask(signal.SIG_BLOCK, [])

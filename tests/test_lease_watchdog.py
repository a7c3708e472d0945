"""A worker process never outlives its caller's lease (issue 39, ADR 0015): the
deadline of the expiring permits the calling task holds reaches the worker, and the
worker ends itself, and every connection it holds, when it passes with no renewal;
renewals keep it alive. The parent may be paused: it plays no part in the ending.

A served worker keeps a connection from one job to the next: the first job connects
(no deadline), so the server has the connection before any deadline runs, and the
second waits on it under one."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
import trio

from clonegate._adapters.workers import open_worker_pool
from clonegate._domain.limits import HeldDeadline, held_deadline
from clonegate.errors import LeaseLostError

from .support import worker_jobs
from .support.proxy import OnLoopback

KIND = "lease-watchdog-test"
SAFETY_NET = 60  # seconds: the old code waits for ever; never the assertion


class Permit:
    """An expiring permit, renewed by the test as a Redis heartbeat renews a lease."""

    def __init__(self, seconds: float) -> None:
        self.expires_at = time.monotonic() + seconds
        self._callbacks: list[Callable[[], None]] = []
        self.followed = trio.Event()  # the pool wrote the deadline and follows renewals

    def on_renewal(self, callback: Callable[[], None]) -> Callable[[], None]:
        self._callbacks.append(callback)
        self.followed.set()
        return lambda: self._callbacks.remove(callback)

    def renew(self, seconds: float) -> None:
        self.expires_at = time.monotonic() + seconds
        for callback in list(self._callbacks):
            callback()


class Recorder(OnLoopback):
    """Accepts one connection, answers a byte when told, records when it closes."""

    def __init__(self) -> None:
        self.accepted = trio.Event()
        self.closed = trio.Event()
        self.answer = trio.Event()

    async def _handle(self, client: trio.SocketStream) -> None:
        self.accepted.set()
        async with client, trio.open_nursery() as nursery:
            nursery.start_soon(self._answer, client)
            try:
                while await client.receive_some():
                    pass
            except trio.BrokenResourceError:
                pass  # reset: closed all the same
            self.closed.set()
            nursery.cancel_scope.cancel()

    async def _answer(self, client: trio.SocketStream) -> None:
        await self.answer.wait()
        await client.send_all(b"x")


async def test_a_worker_ends_with_its_connection_when_the_deadline_passes_unrenewed() -> None:
    server = Recorder()
    with trio.fail_after(SAFETY_NET):
        async with open_worker_pool() as pool, trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            worker, _ = await pool.run(worker_jobs.connect, server.port, reuse=KIND)
            await server.accepted.wait()
            # Granted for a moment and never renewed, as by a parent paused right after.
            token = held_deadline.set(HeldDeadline([Permit(0.2)]))
            try:
                with pytest.raises(LeaseLostError, match="stopped itself at its deadline"):
                    await pool.run(worker_jobs.wait_for_answer, reuse=KIND)
            finally:
                held_deadline.reset(token)
            await server.closed.wait()  # the kernel closed it with the process
            assert worker not in pool.statistics().workers_running
            nursery.cancel_scope.cancel()
    assert not server.answer.is_set()


async def test_renewals_keep_a_worker_alive_past_its_first_deadline() -> None:
    server = Recorder()
    with trio.fail_after(SAFETY_NET):
        async with open_worker_pool() as pool, trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            worker, _ = await pool.run(worker_jobs.connect, server.port, reuse=KIND)
            await server.accepted.wait()
            permit = Permit(0.5)
            first_deadline = permit.expires_at
            token = held_deadline.set(HeldDeadline([permit]))
            try:
                async with trio.open_nursery() as job:
                    answered: list[bytes] = []

                    async def wait() -> None:
                        answer, _ = await pool.run(worker_jobs.wait_for_answer, reuse=KIND)
                        answered.append(answer)

                    job.start_soon(wait)
                    await permit.followed.wait()  # the worker has the first deadline
                    permit.renew(SAFETY_NET)  # the heartbeat came
                    # Not a synchronization: the first deadline must be in the past
                    # before the job may end, or this would prove nothing. (trio's
                    # clock is CLOCK_MONOTONIC too.)
                    await trio.sleep(first_deadline - time.monotonic() + 0.05)
                    assert time.monotonic() > first_deadline
                    server.answer.set()
            finally:
                held_deadline.reset(token)
            assert answered == [b"x"]
            assert not server.closed.is_set()
            # The same worker serves on, its watchdog thread gone with the job that had it.
            same, _ = await pool.run(worker_jobs.pid, reuse=KIND)
            threads, _ = await pool.run(worker_jobs.threads, reuse=KIND)
            assert (same, threads) == (worker, 1)
            nursery.cancel_scope.cancel()


async def test_only_a_job_with_a_deadline_has_a_watchdog_thread() -> None:
    # WeightedSemaphore's hold yields nothing that expires: no deadline, no thread.
    async with open_worker_pool() as pool:
        without, _ = await pool.run(worker_jobs.threads)
        token = held_deadline.set(HeldDeadline([Permit(SAFETY_NET)]))
        try:
            under, _ = await pool.run(worker_jobs.threads)
        finally:
            held_deadline.reset(token)
    assert (without, under) == (1, 2)


async def test_the_watchdog_thread_takes_nothing_of_the_jobs_memory_allowance() -> None:
    # Its stack and malloc arena are reserved before the allowance is counted.
    allowance = 256 << 20
    async with open_worker_pool() as pool:
        token = held_deadline.set(HeldDeadline([Permit(SAFETY_NET)]))
        try:
            left, _ = await pool.run(
                worker_jobs.address_space_left, memory_allowance=allowance, reuse=KIND
            )
        finally:
            held_deadline.reset(token)
    assert left > allowance - (8 << 20)  # what the job's own start maps, not 64 MiB

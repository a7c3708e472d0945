"""Idle workers outlive a killed one and run its jobs (ADR 0015, issue 39 item 0).

Three `clonegate worker` processes on a redis-server of the test's own: the victim
takes the first two jobs and is held cloning the first (a proxy in front of `git
daemon` answers nobody until a second client connects), the two others run the 28
other jobs and then have nothing to do. Once they have been idle longer than
--claim-idle, the victim is SIGKILLed: its two jobs become claimable while the others
wait for work, each asking for more jobs than there are to reclaim (the case where
issue 39's workers hung on a read and exited, leaving the jobs unreported)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from clonegate._adapters.redis.connection import Redis
from clonegate.cluster import RedisWorkQueue, open_redis

from .support.proxy import ThrottlingProxy
from .support.redis_server import RedisServer
from .support.repos import make_repo
from .support.servers import git_daemon

pytestmark = pytest.mark.slow

JOBS = 30
HELD = 2  # the victim's jobs: it runs -j 1, so it takes two (its clone slot, one ahead)
CLAIM_IDLE = 2.0
ROOT = Path(__file__).resolve().parents[1]
WORKER = ("worker", "--cluster-limit", "2", "--lease", "4", "--claim-idle", str(CLAIM_IDLE))
SAFETY_NET = 300  # seconds: a bound for a hung run, never the assertion


class Worker:
    """A `clonegate worker` process and everything it printed on stderr."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.stderr = b""
        self.started = trio.Event()

    @property
    def name(self) -> str:
        return self.stderr.split(b"\n", 1)[0].split()[1].rstrip(b":").decode()

    async def pump(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.receive_some():
            self.stderr += chunk
            if b"\n" in self.stderr:
                self.started.set()


async def _worker(nursery: trio.Nursery, env: dict[str, str], *args: str) -> Worker:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "clonegate", *WORKER, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    worker = Worker(process)
    nursery.start_soon(worker.pump)
    await worker.started.wait()
    return worker


async def _idle_for(redis: Redis[str], run: str) -> float:
    """Seconds since the run's last report, by the Redis server's clock."""
    last = await redis.xrevrange(f"{{clonegate}}:run:{run}:results", count=1)
    now = (await redis.time()).timestamp()
    identifier = str(last[0].identifier)  # "<server ms>-<n>"
    return now - int(identifier.split("-")[0]) / 1000


async def test_idle_workers_stay_up_and_run_a_killed_workers_jobs(
    tmp_path: Path, tmpdir_env: Path, own_redis: RedisServer
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "r0", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    for i in range(1, JOBS):
        shutil.copytree(served / "r0.git", served / f"r{i}.git")
    env = {**os.environ, "CLONEGATE_REDIS_URL": own_redis.url, "TMPDIR": str(tmpdir_env)}
    run = "idle"
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        held = ThrottlingProxy(daemon.port, hold=(JOBS, 2))  # flows from a 2nd client on
        proxy = ThrottlingProxy(daemon.port)
        async with trio.open_nursery() as nursery, open_redis(own_redis.url) as redis:
            await nursery.start(held.serve)
            await nursery.start(proxy.serve)
            urls = [
                f"git://127.0.0.1:{(held if i < HELD else proxy).port}/r{i}.git"
                for i in range(JOBS)
            ]
            await trio.run_process(
                [sys.executable, "-m", "clonegate", "submit", "--run", run, *urls],
                capture_stdout=True,
                env=env,
                cwd=ROOT,
            )
            queue = RedisWorkQueue(redis)
            # Its clone waits at the proxy while the others work, however long they take.
            victim = await _worker(nursery, env, "-j", "1", "--read-timeout", str(SAFETY_NET))
            while True:  # mid-run: it runs both its jobs, the first one cloning
                status = await queue.status(run)
                assert status is not None
                if held.connections and len(status.running) == HELD:
                    break
                await trio.sleep(0.01)  # polling the shared state, which has no events
            assert {r.worker for r in status.running} == {victim.name}
            survivors = [await _worker(nursery, env, "-j", "2") for _ in range(2)]
            # The others finish the rest, then have nothing to do for a claim time.
            while status.done < JOBS - HELD or await _idle_for(redis, run) < CLAIM_IDLE:
                await trio.sleep(0.05)
                status = await queue.status(run)
                assert status is not None
            assert victim.process.returncode is None  # its jobs are still its own
            victim.process.kill()
            await victim.process.wait()
            while status.done < JOBS:
                for worker in survivors:
                    assert worker.process.returncode is None, worker.stderr.decode()
                await trio.sleep(0.05)
                status = await queue.status(run)
                assert status is not None
            # Reported, and still waiting for work.
            assert [w.process.returncode for w in survivors] == [None, None]
            reports = [
                json.loads(entry.field_values["report"]) | {"by": entry.field_values["worker"]}
                for entry in await redis.xrange(f"{{clonegate}}:run:{run}:results")
            ]
            for worker in survivors:
                worker.process.send_signal(signal.SIGTERM)
            codes = [await worker.process.wait() for worker in survivors]
            nursery.cancel_scope.cancel()
    # Exactly one report per job, every one ok; the victim's two by the survivors.
    assert sorted(r["index"] for r in reports) == list(range(JOBS))
    assert all(r["status"] == "ok" and r["analysis"]["tests"] == 1 for r in reports)
    assert {r["by"] for r in reports if r["index"] < HELD} <= {w.name for w in survivors}
    assert (status.submitted, status.done, status.running) == (JOBS, JOBS, ())
    # Stopped by SIGTERM only: exit 143 and no traceback.
    assert codes == [143, 143], [w.stderr.decode() for w in survivors]
    assert not any(b"Traceback" in w.stderr for w in survivors)

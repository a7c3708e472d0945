"""Workers ride out Redis (ADR 0015, issue 39 item 5): `clonegate worker` processes on
a redis-server of the test's own, through a Redis killed and restarted with its AOF,
and through a partition of one worker (a relay that blackholes, then cuts) for longer
and for shorter than its --redis-patience. What counts is what Redis recorded (one
report per job), how the workers ended, and what they printed: one line when an
outage begins, one when Redis is back, one error line when patience runs out, never
a traceback."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from clonegate.cluster import RedisWorkQueue, open_redis

from .support.proxy import FaultyRelay, ThrottlingProxy
from .support.redis_server import RedisServer, redis_server
from .support.repos import make_repo
from .support.servers import git_daemon

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SAFETY_NET = 240  # seconds: a bound for a hung run (under pytest's), never the assertion
# Clones held at a proxy for as long as a test needs, without failing as too slow.
HELD_CLONES_WAIT = ("--read-timeout", str(SAFETY_NET), "--low-speed-time", str(SAFETY_NET))
GONE = b"retrying for up to"  # the line that says an outage began
BACK = b"back after"  # the line that says it ended


class Worker:
    """A `clonegate worker` process and everything it printed on stderr."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.stderr = b""
        self.ended = False  # its stderr closed: it exited
        self._changed = trio.Event()

    @property
    def name(self) -> str:
        return self.stderr.split(b"\n", 1)[0].split()[1].rstrip(b":").decode()

    def count(self, text: bytes) -> int:
        return sum(text in line for line in self.stderr.splitlines())

    async def printed(self, text: bytes) -> None:
        while text not in self.stderr:
            assert not self.ended, f"exited without {text!r}: {self.stderr.decode()}"
            await self._changed.wait()

    async def pump(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.receive_some():
            self.stderr += chunk
            self._changed.set()
            self._changed = trio.Event()
        self.ended = True
        self._changed.set()


async def _worker(nursery: trio.Nursery, env: dict[str, str], *args: str) -> Worker:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "clonegate", "worker", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    worker = Worker(process)
    nursery.start_soon(worker.pump)
    await worker.printed(b"waiting for jobs")
    return worker


def _serve(root: Path, count: int) -> None:
    make_repo(root, "r0", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    for i in range(1, count):
        shutil.copytree(root / "r0.git", root / f"r{i}.git")


async def _submit(env: dict[str, str], run: str, urls: list[str]) -> None:
    await trio.run_process(
        [sys.executable, "-m", "clonegate", "submit", "--run", run, *urls],
        capture_stdout=True,
        capture_stderr=True,
        env=env,
        cwd=ROOT,
    )


async def _reports(url: str, run: str) -> list[dict[str, Any]]:
    async with open_redis(url) as redis:
        return [
            json.loads(entry.field_values["report"]) | {"by": entry.field_values["worker"]}
            for entry in await redis.xrange(f"{{clonegate}}:run:{run}:results")
        ]


def _assert_quiet(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "coredis" not in stderr, stderr  # its own log lines, one per retry


@pytest.fixture
def aof_redis(tmp_path: Path) -> Iterator[RedisServer]:
    with redis_server(tmp_path / "redis", appendonly=True) as running:
        yield running


@pytest.mark.parametrize("fault", ["restart", "silence"])
async def test_workers_ride_out_a_redis_restart_or_silence(
    tmp_path: Path, tmpdir_env: Path, aof_redis: RedisServer, fault: str
) -> None:
    """Restart: SIGKILL (what was in flight gets no reply, new connections are refused),
    then a start that reads the AOF back. Silence: SIGSTOP mid-command (requests wait
    out the reply bound; new connections hang in the handshake), then SIGCONT."""
    jobs, held = 24, 2  # cloning through the outage: their answers wait for its end
    served = tmp_path / "served"
    served.mkdir()
    _serve(served, jobs)
    env = {**os.environ, "CLONEGATE_REDIS_URL": aof_redis.url, "TMPDIR": str(tmpdir_env)}
    run = fault
    # A lease longer than the outage: every permit is kept through it.
    flags = ("-j", "2", "--cluster-limit", "4", "--lease", "60", "--claim-idle", "6")
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        hold = ThrottlingProxy(daemon.port, hold=(jobs, jobs + 1))  # until released
        proxy = ThrottlingProxy(daemon.port, rate=64 * 1024)
        async with trio.open_nursery() as nursery:
            await nursery.start(hold.serve)
            await nursery.start(proxy.serve)
            urls = [
                f"git://127.0.0.1:{(hold if i < held else proxy).port}/r{i}.git"
                for i in range(jobs)
            ]
            await _submit(env, run, urls)
            workers = [await _worker(nursery, env, *flags, *HELD_CLONES_WAIT) for _ in range(3)]
            async with open_redis(aof_redis.url) as redis:
                queue = RedisWorkQueue(redis)
                while True:  # mid-run: the held ones cloning, the others reported or started
                    status = await queue.status(run)
                    assert status is not None
                    if hold.connections == held and status.done + len(status.running) == jobs:
                        break
                    await trio.sleep(0.02)  # polling the shared state, which has no events
            aof_redis.stop() if fault == "restart" else aof_redis.pause()
            for worker in workers:  # each one saw it...
                await worker.printed(GONE)
            aof_redis.start() if fault == "restart" else aof_redis.resume()  # ...then back
            for worker in workers:
                await worker.printed(BACK)
            hold.release()  # the held clones end after the outage
            async with open_redis(aof_redis.url) as redis:
                queue = RedisWorkQueue(redis)
                while status.done < jobs:
                    for worker in workers:
                        assert worker.process.returncode is None, worker.stderr.decode()
                    await trio.sleep(0.05)
                    status = await queue.status(run)
                    assert status is not None
            for worker in workers:
                worker.process.send_signal(signal.SIGTERM)
            codes = [await worker.process.wait() for worker in workers]
            nursery.cancel_scope.cancel()
    reports = await _reports(aof_redis.url, run)
    # Nothing lost, nothing twice, nothing failed: no lease outlived the outage.
    assert sorted(r["index"] for r in reports) == list(range(jobs))
    assert [r for r in reports if r["status"] != "ok"] == []
    for worker in workers:  # one outage: two lines, no traceback, no coredis noise
        text = worker.stderr.decode()
        assert (worker.count(GONE), worker.count(BACK)) == (1, 1), text
        _assert_quiet(text)
    assert codes == [143, 143, 143]  # up until the SIGTERM


async def test_a_partitioned_worker_waits_out_its_patience_then_exits_with_one_line(
    tmp_path: Path, tmpdir_env: Path, own_redis: RedisServer
) -> None:
    jobs, held = 16, 2  # the impatient worker's: it runs -j 1, so it takes two
    served = tmp_path / "served"
    served.mkdir()
    _serve(served, jobs)
    env = {**os.environ, "CLONEGATE_REDIS_URL": own_redis.url, "TMPDIR": str(tmpdir_env)}
    run = "partition"
    flags = ("--cluster-limit", "4", "--lease", "60", "--claim-idle", "3")
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        # The impatient worker's clone waits here until a second client comes: the
        # worker that takes its job over once it is gone.
        hold = ThrottlingProxy(daemon.port, hold=(jobs, 2))
        proxy = ThrottlingProxy(daemon.port, rate=32 * 1024)
        impatient_route, patient_route = FaultyRelay(own_redis.port), FaultyRelay(own_redis.port)
        async with trio.open_nursery() as nursery:
            for server in (hold, proxy, impatient_route, patient_route):
                await nursery.start(server.serve)
            urls = [
                f"git://127.0.0.1:{(hold if i < held else proxy).port}/r{i}.git"
                for i in range(jobs)
            ]
            await _submit(env, run, urls)

            def through(route: FaultyRelay) -> dict[str, str]:
                return env | {"CLONEGATE_REDIS_URL": f"redis://127.0.0.1:{route.port}/0"}

            impatient = await _worker(
                nursery, through(impatient_route), "-j", "1", "--redis-patience", "2", *flags
            )
            async with open_redis(own_redis.url) as redis:
                queue = RedisWorkQueue(redis)
                while True:  # it runs both its jobs, the first one cloning
                    status = await queue.status(run)
                    assert status is not None
                    if hold.connections and len(status.running) == held:
                        break
                    await trio.sleep(0.02)  # polling the shared state, which has no events
            patient = await _worker(
                nursery, through(patient_route), "-j", "2", "--redis-patience", "600", *flags
            )
            others = [await _worker(nursery, env, "-j", "2", *flags) for _ in range(2)]
            # Both partitioned alike: first silence, then refusal.
            for route in (impatient_route, patient_route):
                route.blackhole()
            for worker in (impatient, patient):
                await worker.printed(GONE)
            for route in (impatient_route, patient_route):
                route.cut()
            await patient_route.wait_refused(1)  # it tried again while cut off...
            patient_route.restore()  # ...and is let back, long before its patience ends
            impatient_code = await impatient.process.wait()  # its patience ran out
            async with open_redis(own_redis.url) as redis:
                queue = RedisWorkQueue(redis)
                while status.done < jobs:
                    for worker in (patient, *others):
                        assert worker.process.returncode is None, worker.stderr.decode()
                    await trio.sleep(0.05)
                    status = await queue.status(run)
                    assert status is not None
            await patient.printed(BACK)
            for worker in (patient, *others):
                worker.process.send_signal(signal.SIGTERM)
            codes = [await worker.process.wait() for worker in (patient, *others)]
            nursery.cancel_scope.cancel()
    reports = await _reports(own_redis.url, run)
    # Every job one report, the impatient worker's by the others, none failed.
    assert sorted(r["index"] for r in reports) == list(range(jobs))
    assert [r for r in reports if r["status"] != "ok"] == []
    assert impatient.name not in {r["by"] for r in reports}
    assert {r["by"] for r in reports if r["index"] < held} <= {w.name for w in [*others, patient]}
    # The impatient one: exit 3, one outage line, one error line last, no traceback.
    text = impatient.stderr.decode()
    assert impatient_code == 3, text
    _assert_quiet(text)
    assert impatient.count(GONE) == 1, text
    errors = [line for line in text.splitlines() if line.startswith("clonegate: error:")]
    assert len(errors) == 1, text
    assert text.splitlines()[-1] == errors[0], text
    assert "no more patience, 2 s" in errors[0], text
    # The patient one rode it out: two lines, still up until SIGTERM.
    text = patient.stderr.decode()
    assert (patient.count(GONE), patient.count(BACK)) == (1, 1), text
    _assert_quiet(text)
    assert codes == [143, 143, 143]

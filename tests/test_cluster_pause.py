"""A paused worker's clones do not outlive its lease (issue 39 item 6, ADR 0015: "A
clone never outlives its lease").

Two `clonegate worker` processes, limit 2, lease 3 s, on a redis-server of the test's
own, cloning through a slow recording proxy in front of `git daemon` (a clone takes
longer than the pause). The victim holds both permits, cloning, when it is stopped
with SIGSTOP (its main process alone, or its whole process group) until the other
worker has been granted the permits and has connected to the server; then SIGCONT.
The proxy records how many clones the server had at once: with the main process
stopped, never more than the limit; with the group stopped, the victim's clones are
frozen with their connections open (they were past their deadline check when the
stop came): only they are over the limit, and when the group resumes, its main
process last, they end unfinished on their own. Both fail on the code before, where
the clones ran on until their parent came back."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from clonegate.cluster import RedisSemaphore, open_redis

from .support.proxy import ThrottlingProxy, _Connection
from .support.redis_log import log_of
from .support.redis_server import RedisServer
from .support.repos import make_repo
from .support.servers import git_daemon

pytestmark = pytest.mark.slow

JOBS = 6
LIMIT = 2
LEASE = 3.0
ROOT = Path(__file__).resolve().parents[1]
WORKER = ("worker", "-j", "2", "--cluster-limit", str(LIMIT), "--lease", f"{LEASE:g}")
SAFETY_NET = 300  # seconds: a bound for a hung run, never the assertion
# A clone takes ~20 s through the proxy: longer than the lease and the pause.
BLOB = 160 * 1024
RATE = 8 * 1024
PAUSED_TRANSFER = 48 * 1024  # what the survivor's clones get while the victim is stopped
FULL_SPEED = 64 * 2**20  # bytes/s, once the victim has resumed


class AttributingProxy(ThrottlingProxy):
    """The proxy, also counting the bytes sent to each connection and when each
    connection is over (as ``_gone``: the server answered all, or a side broke it)."""

    def __init__(self, upstream_port: int, rate: int, chunk: int) -> None:
        super().__init__(upstream_port, rate=rate, chunk=chunk)
        # Keyed by the stream itself, which the dict keeps alive: an id() could be
        # reused by a later connection once a closed one is collected.
        self.clients: set[trio.SocketStream] = set()  # open now
        self.sent: dict[trio.SocketStream, int] = {}
        self.ended = trio.Event()  # set, and replaced, as each connection is over

    async def _handle(self, client: trio.SocketStream) -> None:
        self.clients.add(client)
        self.sent[client] = 0
        await super()._handle(client)

    def _gone(self, connection: _Connection) -> None:
        super()._gone(connection)
        self.clients.discard(connection.client)
        self.ended.set()
        self.ended = trio.Event()

    async def _forward(self, client: trio.SocketStream, data: bytes) -> None:
        await super()._forward(client, data)
        self.sent[client] += len(data)


def overlap(timeline: list[tuple[float, int]], limit: int) -> tuple[int, float]:
    """The most connections the server had at once, and for how long in all it had
    more than ``limit`` (trio seconds, by the proxy's record)."""
    worst, over, since = 0, 0.0, None
    for at, active in timeline:
        worst = max(worst, active)
        if active > limit and since is None:
            since = at
        elif active <= limit and since is not None:
            over, since = over + at - since, None
    return worst, over


async def _wait_until(check: Any) -> None:
    while not await check():  # noqa: ASYNC110
        await trio.sleep(0.02)  # polling the shared state, which has no events


async def _holders(sem: RedisSemaphore, pid: int) -> int:
    """Permits held by the worker whose process id is ``pid`` (acquisition ids are
    ``host:pid:random:n``)."""
    return sum(h.weight for h in (await sem.statistics()).holders if h.id.split(":")[1] == str(pid))


async def _run(
    tmp_path: Path, tmpdir_env: Path, redis_server: RedisServer, group: bool
) -> dict[str, Any]:
    served = tmp_path / "served"
    served.mkdir()
    make_repo(served, "r0", commits=1, files={"blob.bin": os.urandom(BLOB)})
    for i in range(1, JOBS):
        shutil.copytree(served / "r0.git", served / f"r{i}.git")
    env = {**os.environ, "CLONEGATE_REDIS_URL": redis_server.url, "TMPDIR": str(tmpdir_env)}
    run = "pause"
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        proxy = AttributingProxy(daemon.port, RATE, 1024)
        async with trio.open_nursery() as nursery, open_redis(redis_server.url) as redis:
            await nursery.start(proxy.serve)
            urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(JOBS)]
            await trio.run_process(
                [sys.executable, "-m", "clonegate", "submit", "--run", run, *urls],
                capture_stdout=True,
                env=env,
                cwd=ROOT,
            )

            async def worker() -> trio.Process:
                log = tmp_path / f"worker{len(list(tmp_path.glob('worker*.log')))}.log"
                with log.open("wb") as stderr:  # read on a failure
                    return await trio.lowlevel.open_process(
                        [sys.executable, "-m", "clonegate", *WORKER, "--exit-when-done"],
                        stdout=subprocess.DEVNULL,
                        stderr=stderr,
                        env=env,
                        cwd=ROOT,
                        start_new_session=True,  # its own process group, to stop as one
                    )

            sem = RedisSemaphore(redis, "clones", LIMIT)
            victim = await worker()
            try:
                # Both permits the victim's, both its clones connected and transferring.
                await _wait_until(
                    lambda: _both(sem, victim.pid, proxy, lambda: proxy.forwarded > 0)
                )
                survivor = await worker()
                try:
                    frozen = set(proxy.clients)
                    if group:
                        os.killpg(victim.pid, signal.SIGSTOP)
                    else:
                        victim.send_signal(signal.SIGSTOP)
                    # Past the lease: the survivor holds the permits and cloned through them.
                    await _wait_until(
                        lambda: _both(sem, survivor.pid, proxy, lambda: proxy.connections >= 4)
                    )
                    # And stays stopped while the survivor's clones transfer for a while.
                    await proxy.wait_forwarded(proxy.forwarded + PAUSED_TRANSFER)
                    if group:
                        # The group resumes, its main process last: the clones are on
                        # their own, as when a parent is slow to come back.
                        for pid in _group(victim.pid) - {victim.pid}:
                            os.kill(pid, signal.SIGCONT)
                        while frozen & proxy.clients:
                            await proxy.ended.wait()
                    victim.send_signal(signal.SIGCONT)
                    # The stop and its aftermath are over: the clones still to run go
                    # at full speed, which none of the assertions below is about.
                    proxy.rate = FULL_SPEED
                    codes = [await victim.wait(), await survivor.wait()]
                finally:
                    survivor.kill()
            finally:
                victim.kill()
                with contextlib.suppress(ProcessLookupError):  # its stopped zygote, workers
                    os.killpg(victim.pid, signal.SIGCONT)
            reports = [
                json.loads(entry.field_values["report"])
                for entry in await redis.xrange(f"{{clonegate}}:run:{run}:results")
            ]
            log = await log_of(redis, "clones")
            nursery.cancel_scope.cancel()
    return {
        "proxy": proxy,
        "frozen": [proxy.sent[client] for client in frozen],
        "codes": codes,
        "reports": reports,
        "log": log,
        "victim": victim.pid,
        "logs": [log.read_text() for log in sorted(tmp_path.glob("worker*.log"))],
    }


async def _both(sem: RedisSemaphore, pid: int, proxy: ThrottlingProxy, also: Any) -> bool:
    return await _holders(sem, pid) == LIMIT and proxy.active >= LIMIT and also()


def _group(pgid: int) -> set[int]:
    """The processes of process group ``pgid``."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            if int(stat.rsplit(")", 1)[1].split()[2]) == pgid:
                members.add(int(entry.name))
    return members


def _expired(log: list[dict[str, str]], pid: int) -> int:
    return sum(1 for e in log if e["event"] == "expired" and e["id"].split(":")[1] == str(pid))


def _check_reports(outcome: dict[str, Any]) -> None:
    reports = outcome["reports"]
    assert sorted(r["index"] for r in reports) == list(range(JOBS))
    # The victim's stopped clones are its lease's loss, never the repository's failure.
    assert {(r["status"], (r.get("error") or {}).get("kind")) for r in reports} <= {
        ("ok", None),
        ("failed", "lease_lost"),
    }
    assert outcome["codes"] == [0, 0], outcome["logs"]


async def test_a_stopped_main_process_leaves_no_clone_past_its_lease(
    tmp_path: Path, tmpdir_env: Path, own_redis: RedisServer
) -> None:
    outcome = await _run(tmp_path, tmpdir_env, own_redis, group=False)
    proxy: ThrottlingProxy = outcome["proxy"]
    assert _expired(outcome["log"], outcome["victim"]) == LIMIT  # stopped past its lease
    worst, over = overlap(proxy.timeline, LIMIT)
    print(f"main process stopped: worst overlap {worst}, {over:.1f} s over the limit")
    # The clones ended themselves at the lease's local deadline, before Redis ended it.
    assert worst <= LIMIT, proxy.timeline
    _check_reports(outcome)


async def test_a_stopped_process_group_overlaps_by_its_frozen_clones_only(
    tmp_path: Path, tmpdir_env: Path, own_redis: RedisServer
) -> None:
    outcome = await _run(tmp_path, tmpdir_env, own_redis, group=True)
    proxy: ThrottlingProxy = outcome["proxy"]
    assert _expired(outcome["log"], outcome["victim"]) == LIMIT
    worst, over = overlap(proxy.timeline, LIMIT)
    print(f"process group stopped: worst overlap {worst}, {over:.1f} s over the limit")
    # The victim's clones were past their deadline check when frozen: only they are
    # over the limit, and they end when they resume, the main process still stopped,
    # never finishing their transfer (each is a pack of at least BLOB bytes).
    frozen = outcome["frozen"]
    assert len(frozen) == LIMIT
    assert worst <= LIMIT + len(frozen)
    assert all(sent < BLOB for sent in frozen), frozen
    _check_reports(outcome)

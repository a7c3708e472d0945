"""The cluster mode under faults (issue 39): what the git server and Redis recorded.

    python bench/bench_cluster_faults.py              # every scenario, a few minutes
    python bench/bench_cluster_faults.py stop-main    # one or more by name

Each scenario: a redis-server of its own (AOF on), ``JOBS`` copies of a small
repository served by ``git daemon`` through a recording proxy that slows transfers
(so that clones overlap and a fault lands mid-clone), three ``clonegate worker -j 2
--cluster-limit 2`` processes with short leases, and one fault mid-run. Figures: how
many jobs got no report (lost), reports that are not ``ok`` (by kind), clones the
server saw more than once (duplicates), the most clones it saw at once against the
limit and for how long it was above it, worker exit codes and tracebacks printed.
Timings here are figures, never assertions: the tests hold the rules.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from clonegate.cluster import RedisWorkQueue, open_redis
from tests.support.proxy import OnLoopback, ThrottlingProxy
from tests.support.redis_server import RedisServer
from tests.support.repos import make_repo
from tests.support.servers import git_daemon, wait_until_listening

ROOT = Path(__file__).resolve().parents[1]
JOBS = 20
LIMIT = 2
LEASE = 4.0
CLAIM_IDLE = 4.0
RATE = 24 * 1024  # bytes/s per connection
PACK = 96 * 1024  # bytes of incompressible data: a clone takes about 4 s, longer than a lease
WORKER: tuple[str, ...] = (
    "worker",
    "-j",
    "2",
    "--cluster-limit",
    str(LIMIT),
    "--lease",
    str(LEASE),
)
WORKER += ("--claim-idle", str(CLAIM_IDLE), "--max-deliveries", "2")


class AofRedis(RedisServer):
    """A redis-server that keeps its data across a restart (append-only file)."""

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.program, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "yes", "--appendfsync", "always", "--dir", str(self.workdir),
             "--maxmemory-policy", "noeviction"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        wait_until_listening(self.port)


class Partition(OnLoopback):
    """A relay to Redis that can stop forwarding (``blackhole``: connections stay open,
    nothing passes) and drop every connection (``cut``: closed, new ones refused)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.blackhole = False
        self.refusing = False
        self.healed = trio.Event()
        self._scopes: set[trio.CancelScope] = set()

    def cut(self) -> None:
        self.refusing = True
        for scope in self._scopes:
            scope.cancel()

    def heal(self) -> None:
        self.blackhole = self.refusing = False
        self.healed.set()
        self.healed = trio.Event()

    async def _handle(self, client: trio.SocketStream) -> None:
        if self.refusing:
            await client.aclose()
            return
        try:
            upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
        except OSError:  # Redis is down: so is the relayed connection
            await client.aclose()
            return
        with trio.CancelScope() as scope:
            self._scopes.add(scope)
            try:
                async with client, upstream, trio.open_nursery() as nursery:
                    nursery.start_soon(self._pump, client, upstream)
                    nursery.start_soon(self._pump, upstream, client)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                pass
            finally:
                self._scopes.discard(scope)

    async def _pump(self, source: trio.SocketStream, sink: trio.SocketStream) -> None:
        while data := await source.receive_some():
            while self.blackhole:
                await self.healed.wait()
            await sink.send_all(data)
        await sink.send_eof()


@dataclass
class Worker:
    process: trio.Process
    stderr: bytes = b""
    started: trio.Event = field(default_factory=trio.Event)

    async def pump(self) -> None:
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.receive_some():
            self.stderr += chunk
            if b"\n" in self.stderr:
                self.started.set()
        self.started.set()

    @property
    def name(self) -> str:
        return self.stderr.split(b"\n", 1)[0].split()[1].rstrip(b":").decode()


@dataclass
class Run:
    nursery: trio.Nursery
    env: dict[str, str]
    queue: RedisWorkQueue
    run: str
    redis: RedisServer
    proxy: ThrottlingProxy
    partition: Partition
    workers: list[Worker] = field(default_factory=list)

    async def start_worker(self, env: dict[str, str] | None = None) -> Worker:
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", *WORKER, "--exit-when-done"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env or self.env,
            cwd=ROOT,
            start_new_session=True,  # its own group: SIGSTOP of the group stops it alone
        )
        worker = Worker(process)
        self.nursery.start_soon(worker.pump)
        await worker.started.wait()
        self.workers.append(worker)
        return worker

    async def done(self) -> int:
        status = await self.queue.status(self.run)
        return 0 if status is None else status.done

    async def until_done(self, n: int) -> None:
        while await self.done() < n:  # noqa: ASYNC110  (the shared state has no events)
            await trio.sleep(0.05)

    async def running_on(self, worker: Worker) -> None:
        """Until ``worker`` runs a job and a clone is at the server."""
        while True:
            status = await self.queue.status(self.run)
            mine = status and any(r.worker == worker.name for r in status.running)
            if mine and self.proxy.active:
                return
            await trio.sleep(0.02)


async def baseline(run: Run) -> None:
    pass


async def sigkill(run: Run) -> None:
    await run.until_done(6)
    await run.running_on(run.workers[0])
    run.workers[0].process.kill()


async def limit_change(run: Run) -> None:
    for limit, after in (("1", 6), ("3", 14)):
        await run.until_done(after)
        await trio.run_process(
            [sys.executable, "-m", "clonegate", "limit", limit], env=run.env, cwd=ROOT,
            capture_stdout=True,
        )  # fmt: skip


async def _stop(run: Run, group: bool) -> None:
    await run.until_done(6)
    victim = run.workers[0]
    await run.running_on(victim)
    pid = victim.process.pid
    os.killpg(pid, signal.SIGSTOP) if group else os.kill(pid, signal.SIGSTOP)
    await trio.sleep(3 * LEASE)  # past the lease and --claim-idle
    os.killpg(pid, signal.SIGCONT) if group else os.kill(pid, signal.SIGCONT)


async def stop_main(run: Run) -> None:
    await _stop(run, group=False)


async def stop_group(run: Run) -> None:
    await _stop(run, group=True)


async def redis_restart(run: Run) -> None:
    await run.until_done(6)
    run.redis.stop()
    await trio.sleep(3)
    run.redis.start()


async def _partition(run: Run, seconds: float, mode: str) -> None:
    await run.until_done(6)
    relay = run.partition
    if mode == "blackhole":
        relay.blackhole = True
    else:
        relay.cut()
    await trio.sleep(seconds)
    relay.heal()


async def blackhole_short(run: Run) -> None:
    await _partition(run, 5, "blackhole")


async def cut_short(run: Run) -> None:
    await _partition(run, 5, "cut")


async def poison(run: Run) -> None:
    """r0 kills every worker that runs it (as a repository that crashes the machine
    would): each is SIGKILLed once it runs r0, and a new worker replaces it."""
    while True:
        status = await run.queue.status(run.run)
        if status is not None and status.done == status.submitted:
            return
        for running in status.running if status else ():
            if running.key.endswith("/r0"):
                for worker in run.workers:
                    if worker.name == running.worker and worker.process.returncode is None:
                        worker.process.kill()
                        await worker.process.wait()
                        await run.start_worker()
        await trio.sleep(0.05)


SCENARIOS: dict[str, Callable[[Run], Awaitable[None]]] = {
    "baseline": baseline,
    "sigkill": sigkill,
    "limit-1-then-3": limit_change,
    "stop-main": stop_main,
    "stop-group": stop_group,
    "redis-restart": redis_restart,
    "blackhole-5s": blackhole_short,
    "cut-5s": cut_short,
    "poison": poison,
}


def _over_limit(timeline: list[tuple[float, int]], limit: int) -> float:
    seconds, since = 0.0, None
    for at, active in timeline:
        if active > limit and since is None:
            since = at
        elif active <= limit and since is not None:
            seconds, since = seconds + at - since, None
    return seconds


async def scenario(name: str, work: Path) -> dict[str, object]:
    served = work / "served"
    served.mkdir(parents=True)
    test = b"def test_one():\n    pass\n"
    make_repo(served, "r0", files={"tests/test_a.py": test, "blob.bin": os.urandom(PACK)})
    for i in range(1, JOBS):
        shutil.copytree(served / "r0.git", served / f"r{i}.git")
    redis = AofRedis(work / "redis", "redis-server")
    (work / "redis").mkdir()
    redis.start()
    env = {**os.environ, "CLONEGATE_REDIS_URL": redis.url, "TMPDIR": str(work)}
    started = trio.current_time()
    try:
        with git_daemon(served) as daemon:
            proxy = ThrottlingProxy(daemon.port, rate=RATE, chunk=4 * 1024)
            async with trio.open_nursery() as nursery:
                await nursery.start(proxy.serve)
                partition = Partition(redis.port)
                await nursery.start(partition.serve)
                urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(JOBS)]
                await trio.run_process(
                    [sys.executable, "-m", "clonegate", "submit", "--run", "bench", *urls],
                    env=env, cwd=ROOT, capture_stdout=True,
                )  # fmt: skip
                async with open_redis(redis.url, reply_timeout=30) as client:
                    queue = RedisWorkQueue(client)
                    run = Run(nursery, env, queue, "bench", redis, proxy, partition)
                    relayed = env | {"CLONEGATE_REDIS_URL": f"redis://127.0.0.1:{partition.port}/0"}
                    await run.start_worker(relayed)
                    for _ in range(2):
                        await run.start_worker()
                    await SCENARIOS[name](run)
                    with trio.move_on_after(300):
                        for worker in run.workers:
                            await worker.process.wait()
                    if any(w.process.returncode is None for w in run.workers):
                        for w in run.workers:
                            w.process.kill()
                    entries = await client.xrange("{clonegate}:run:bench:results")
                nursery.cancel_scope.cancel()
    finally:
        redis.stop()
    reports = [json.loads(e.field_values["report"]) for e in entries]
    wants = Counter(path for kind, path in proxy.log if kind == "want")
    stderr = b"".join(w.stderr for w in run.workers).decode(errors="replace")
    return {
        "scenario": name,
        "lost": JOBS - len({r["index"] for r in reports}),
        "not ok": dict(
            Counter(
                f"{r['status']}/{(r.get('error') or {}).get('kind')}"
                for r in reports
                if r["status"] != "ok"
            )
        ),
        "duplicate clones": sum(c - 1 for c in wants.values() if c > 1),
        "max at server": proxy.max_active,
        "s above 2": round(_over_limit(proxy.timeline, LIMIT), 1),
        "exits": [w.process.returncode for w in run.workers],
        "tracebacks": stderr.count("Traceback"),
        "redis lines": sum("Redis" in line for line in stderr.splitlines()),
        "makespan s": round(trio.current_time() - started, 1),
    }


async def main(names: list[str]) -> None:
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"faults-{name}-") as work:
            print(json.dumps(await scenario(name, Path(work))), flush=True)


if __name__ == "__main__":
    trio.run(main, sys.argv[1:] or list(SCENARIOS))

"""Poison isolation: a repository that kills every worker that runs it is dead-lettered
alone; the jobs that shared a worker with it are run again and reported ok (ADR 0015,
issue 39 item 7).

`clonegate worker` processes on a redis-server of the test's own; a relay in front of
`git daemon` never answers a request for the poison repository, and holds every other
answer while such a request is open: the worker's other jobs cannot finish before it
dies. The test plays the poison: each time the relay sees its request, it SIGKILLs the
process group of the worker that runs it (status names it), as a machine dies."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import pytest
import trio

from clonegate.cluster import RedisWorkQueue, open_redis

from .support.proxy import OnLoopback
from .support.redis_server import RedisServer
from .support.repos import make_repo
from .support.servers import git_daemon

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
NEIGHBOURS = 2  # with the poison, the three jobs a worker at -j 2 takes at once
WORKER = (
    "worker", "-j", "2", "--claim-idle", "1", "--max-deliveries", "2", "--exit-when-done",
)  # fmt: skip
SAFETY_NET = 300  # seconds: a bound for a hung run, never the assertion


class PoisonRelay(OnLoopback):
    """A git:// relay that never answers a request for ``poison`` (its client waits until
    it dies), and forwards no answer to any other request while one for ``poison`` is
    open. ``requests`` lists every path asked for, in order; ``asked`` is set at each
    request for ``poison``."""

    def __init__(self, upstream_port: int, poison: str) -> None:
        self.upstream_port = upstream_port
        self.poison = poison
        self.requests: list[str] = []
        self.asked = trio.Event()
        self._open_poison = 0
        self._changed = trio.Event()

    async def _handle(self, client: trio.SocketStream) -> None:
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            async with client:
                request = b""
                while not (found := re.search(rb"git-upload-pack (\S+?)\x00", request)):
                    if not (data := await client.receive_some()):
                        return
                    request += data
                path = found.group(1).decode()
                self.requests.append(path)
                if path == self.poison:
                    await self._hang(client)
                else:
                    await self._forward(client, request)

    async def _hang(self, client: trio.SocketStream) -> None:
        self._open_poison += 1
        self.asked.set()
        try:
            while await client.receive_some():  # until its worker is killed
                pass
        finally:
            self._open_poison -= 1
            self._changed.set()
            self._changed = trio.Event()

    async def _forward(self, client: trio.SocketStream, request: bytes) -> None:
        upstream = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
        async with upstream, trio.open_nursery() as nursery:
            # Inside the nursery, or a broken side would come out as an ExceptionGroup
            # that _handle's suppress does not catch: the client is killed mid-answer.
            with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await upstream.send_all(request)
                nursery.start_soon(self._requests, client, upstream)
                while data := await upstream.receive_some():
                    while self._open_poison:
                        await self._changed.wait()
                    await client.send_all(data)
            nursery.cancel_scope.cancel()

    async def _requests(self, client: trio.SocketStream, upstream: trio.SocketStream) -> None:
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await client.receive_some():
                await upstream.send_all(data)
            await upstream.send_eof()


class Worker:
    """A `clonegate worker` process, in a process group of its own (a machine)."""

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

    async def kill(self) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        await self.process.wait()


async def _worker(nursery: trio.Nursery, env: dict[str, str]) -> Worker:
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "clonegate", *WORKER],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    worker = Worker(process)
    nursery.start_soon(worker.pump)
    await worker.started.wait()
    return worker


async def _kill_whoever_runs(
    relay: PoisonRelay, queue: RedisWorkQueue, run: str, key: str, workers: list[Worker]
) -> str:
    """Waits for the poison's next request, then kills the worker that runs it."""
    await relay.asked.wait()
    relay.asked = trio.Event()
    status = await queue.status(run)
    assert status is not None
    [name] = [r.worker for r in status.running if r.key == key]
    [victim] = [w for w in workers if w.name == name]
    await victim.kill()
    return name


async def test_only_the_poison_job_is_dead_lettered_not_its_neighbours(
    tmp_path: Path, tmpdir_env: Path, own_redis: RedisServer
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    names = ["poison", *(f"n{i}" for i in range(NEIGHBOURS))]
    for name in names:
        make_repo(served, name, files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    env = {**os.environ, "CLONEGATE_REDIS_URL": own_redis.url, "TMPDIR": str(tmpdir_env)}
    run = "poison"
    with git_daemon(served) as daemon, trio.fail_after(SAFETY_NET):
        relay = PoisonRelay(daemon.port, "/poison.git")
        async with trio.open_nursery() as nursery, open_redis(own_redis.url) as redis:
            await nursery.start(relay.serve)
            urls = [f"git://127.0.0.1:{relay.port}/{name}.git" for name in names]
            await trio.run_process(
                [sys.executable, "-m", "clonegate", "submit", "--run", run, *urls],
                capture_stdout=True,
                env=env,
                cwd=ROOT,
            )
            queue = RedisWorkQueue(redis)
            poison_key = urls[0].removesuffix(".git")
            # The first worker takes the three jobs (two clone slots, one ahead): the
            # poison and its two neighbours die with it. The second one finds them all
            # to reclaim when it starts, and the third one what the second left.
            workers: list[Worker] = []
            killed = []
            for _ in range(2):
                workers.append(await _worker(nursery, env))
                killed.append(await _kill_whoever_runs(relay, queue, run, poison_key, workers))
            survivor = await _worker(nursery, env)
            code = await survivor.process.wait()
            reports = {
                int(r["index"]): r
                for e in await redis.xrange(f"{{clonegate}}:run:{run}:results")
                for r in [json.loads(e.field_values["report"])]
            }
            dead = [e.field_values["key"] for e in await redis.xrange("{clonegate}:dead")]
            nursery.cancel_scope.cancel()
    assert killed == [w.name for w in workers]
    assert code == 0, survivor.stderr.decode()
    # The poison ran twice (one death in company, one alone), then was dead-lettered.
    assert relay.requests.count("/poison.git") == 2
    assert dead == [poison_key]
    assert sorted(reports) == list(range(len(names)))
    assert reports[0]["error"]["kind"] == "dead_letter"
    assert [reports[i]["status"] for i in range(1, len(names))] == ["ok"] * NEIGHBOURS

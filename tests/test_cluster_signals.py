"""The cluster commands stop cleanly (issue 39, item 10): Ctrl-C exits 130 and SIGTERM
143, with no traceback, for `worker`, `results --follow` and `status`.

Each command runs as a process against a real redis-server. The signal is sent once
the command is known to be working, from events: a clone's connection reaching a git
server that never answers (with a second clone waiting for the host's permit), the
command's XREAD or PING crossing a relay in front of Redis; never from a sleep.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path

import pytest
import trio

from clonegate.cluster import RedisSemaphore, RedisWorkQueue, open_redis

from .support.processes import processes_with
from .support.proxy import RedisRelay
from .support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]
SIGNALS = pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)


async def _stop(
    args: list[str],
    env: dict[str, str],
    running: Callable[[], Awaitable[None]],
    sig: signal.Signals,
) -> tuple[int, str]:
    """Start ``clonegate *args``, send ``sig`` once ``running`` returns: its exit status
    and stderr. No process of it may be left behind."""
    run_id = uuid.uuid4().hex
    process = await trio.lowlevel.open_process(
        [sys.executable, "-m", "clonegate", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**env, "CLONEGATE_TEST_RUN": run_id},
        cwd=ROOT,
    )
    assert process.stderr is not None
    stderr = bytearray()

    async def read_stderr() -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.receive_some():
            stderr.extend(chunk)

    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(read_stderr)
            with trio.fail_after(60):  # a safety net only; events drive the test
                await running()
            process.send_signal(sig)
            with trio.fail_after(60):  # turns a hang into a failure, never the assertion
                await process.wait()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert processes_with(f"CLONEGATE_TEST_RUN={run_id}".encode()) == set()
    assert process.returncode is not None
    return process.returncode, stderr.decode(errors="replace")


def _assert_clean(returncode: int, stderr: str, code: int) -> None:
    assert returncode == code, stderr
    assert "Traceback" not in stderr, stderr
    assert "ExceptionGroup" not in stderr, stderr
    assert "clonegate: error" not in stderr, stderr


@SIGNALS
async def test_a_worker_holding_and_waiting_for_permits_stops_cleanly(
    sig: signal.Signals, code: int, own_redis: RedisServer, tmpdir_env: Path
) -> None:
    accepted = trio.Event()

    async def never_answer(stream: trio.SocketStream) -> None:
        accepted.set()
        async with stream:
            await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        [listener] = await nursery.start(partial(trio.serve_tcp, never_answer, 0, host="127.0.0.1"))
        port = listener.socket.getsockname()[1]
        async with open_redis(own_redis.url) as redis:
            await RedisWorkQueue(redis).submit([f"git://127.0.0.1:{port}/r{i}.git" for i in (0, 1)])

            async def running() -> None:
                # One clone connected, holding the host's only permit; the other waits.
                await accepted.wait()
                async with trio.open_nursery() as own:
                    host = RedisSemaphore(redis, "host:127.0.0.1", 1, nursery=own)
                    while not (await host.statistics()).waiters:  # noqa: ASYNC110
                        await trio.sleep(0.01)  # Redis's state has no event to wait for
                    own.cancel_scope.cancel()

            env = {**os.environ, "CLONEGATE_REDIS_URL": own_redis.url}
            args = ["worker", "-j", "2", "--cluster-limit", "2", "--host-limit", "1"]
            returncode, stderr = await _stop(args, env, running, sig)
            # Every permit was given back as the worker stopped, not a lease later.
            async with trio.open_nursery() as own:
                for name in ("clones", "host:127.0.0.1"):
                    stats = await RedisSemaphore(redis, name, 1, nursery=own).statistics()
                    assert (stats.holders, stats.waiters) == ((), ()), name
                own.cancel_scope.cancel()
        nursery.cancel_scope.cancel()
    _assert_clean(returncode, stderr, code)
    assert "could not leave" not in stderr
    assert list(tmpdir_env.iterdir()) == []


@SIGNALS
@pytest.mark.parametrize(
    ("command", "watch", "hold"),
    [(["results", "--follow", "RUN"], b"XREAD", False), (["status"], b"PING", True)],
    ids=["results-follow", "status"],
)
async def test_results_follow_and_status_stop_cleanly(
    sig: signal.Signals,
    code: int,
    command: list[str],
    watch: bytes,
    hold: bool,
    own_redis: RedisServer,
) -> None:
    async with open_redis(own_redis.url) as redis:
        run, _, _ = await RedisWorkQueue(redis).submit(["git://127.0.0.1:9/never.git"])
    relay = RedisRelay(own_redis.port, watch, hold_at=1 if hold else None)
    async with trio.open_nursery() as nursery:
        await nursery.start(relay.serve)
        env = {**os.environ, "CLONEGATE_REDIS_URL": f"redis://127.0.0.1:{relay.port}/0"}
        args = [run if part == "RUN" else part for part in command]
        returncode, stderr = await _stop(args, env, relay.seen.wait, sig)
        nursery.cancel_scope.cancel()
    _assert_clean(returncode, stderr, code)

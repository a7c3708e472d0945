"""Two `clonegate worker` processes against one throttling host share its adaptive limit
(issue 43, ADR 0019): every repository ok, and once the shared limit has come down to
what the host takes (K), the host never sees more than K + 1 clone requests at once."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from clonegate.cluster import open_redis

from .support.cluster_runs import serve_copies, start_clonegate
from .support.paths import ROOT
from .support.processes import killed_at_exit, stderr_of
from .support.redis_log import log_of, replay
from .support.redis_server import RedisServer
from .support.throttling_http import Request, throttling_http

pytestmark = pytest.mark.slow

REPOSITORIES = 24
K = 3  # requests the host takes at once; a 429 with Retry-After: 1 beyond
HOST = "host:127.0.0.1"


async def _size_at_most(redis: Any, size: int, workers: list[trio.Process]) -> None:
    key = f"{{clonegate:sem:{HOST}}}:config:adaptive"
    while int(await redis.hget(key, "size") or 99) > size:
        assert all(w.returncode is None for w in workers), "a worker exited"
        await trio.sleep(0.01)  # polling the shared state, which has no events


def _most_at_once(requests: list[Request], since: float) -> int:
    """The most requests (admitted or refused) open at once at the server from ``since``."""
    edges = sorted(
        edge
        for r in requests
        if r.ended > since
        for edge in ((max(r.arrived, since), 1), (r.ended, -1))
    )  # at one instant, an end (-1) sorts before a start
    most = current = 0
    for _, change in edges:
        current += change
        most = max(most, current)
    return most


async def test_two_workers_share_the_adaptive_limit_of_a_throttling_host(
    tmp_path: Path, tmpdir_env: Path, own_redis: RedisServer
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    serve_copies(served, REPOSITORIES)
    env = {**os.environ, "CLONEGATE_REDIS_URL": own_redis.url, "TMPDIR": str(tmpdir_env)}
    run = f"ada{tmp_path.name[-6:]}"
    # Each admitted request takes 0.2 s at least: clones of one host overlap as they
    # would on a real forge, so a limit above K meets the host's limit.
    async with throttling_http(served, limit=K, retry_after=1, service_time=0.2) as server:
        urls = [server.url(f"r{i}") for i in range(REPOSITORIES)]
        submitted = await trio.run_process(
            [sys.executable, "-m", "clonegate", "submit", "--run", run, *urls],
            capture_stdout=True, capture_stderr=True, env=env, cwd=ROOT,
        )  # fmt: skip
        assert submitted.returncode == 0
        # The first wave: the K requests admitted wait until released, every other one
        # is refused, so the shared limit comes down from 8 to K (8 -> 6 -> 4 -> 3).
        server.hold()
        common = ("worker", "-j", "8", "--host-limit", "8", "--adaptive", "--retries", "40")
        workers = [await start_clonegate(*common, "--exit-when-done", env=env) for _ in "ab"]
        # Only a safety net: the run takes seconds.
        with trio.fail_after(240), killed_at_exit(workers):
            async with open_redis(own_redis.url) as redis:
                await _size_at_most(redis, K, workers)
                adapted = trio.current_time()
                server.release()
                codes = [await w.wait() for w in workers]
                errors = [await stderr_of(w) for w in workers]
                reports: list[dict[str, Any]] = [
                    json.loads(entry.field_values["report"])
                    for entry in await redis.xrange(f"{{clonegate}}:run:{run}:results")
                ]
                log = await log_of(redis, HOST)
    assert codes == [0, 0], errors
    assert sorted(r["index"] for r in reports) == list(range(REPOSITORIES))
    assert [r["status"] for r in reports] == ["ok"] * REPOSITORIES, [
        (r["index"], r["error"]) for r in reports if r["status"] != "ok"
    ]
    # Both workers cloned from the host (a grant's id names its process).
    pids = {e["id"].split(":")[1] for e in log if e["event"] == "granted"}
    assert len(pids) == 2, pids
    # Redis's record: the first wave's decreases, and each grant within the limit then.
    sizes = [int(e["limit"]) for e in log if e["event"] == "adapted"]
    assert sizes[:3] == [6, 4, 3], sizes
    assert all(held <= limit for _, held, limit in replay(log))
    # The host's record: once adapted, never more than K + 1 of its requests at once
    # (a clone's two requests are one after the other), though 8 were allowed at first.
    assert server.returns(), "the host never pushed back"
    assert _most_at_once(server.requests, adapted) <= K + 1, sizes

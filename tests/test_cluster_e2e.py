"""The cluster mode end to end: `clonegate submit`, three `clonegate worker` processes
sharing a cluster limit of 2 through a real redis-server, a counting proxy in front of
`git daemon`, and one worker SIGKILLed mid-clone (ADR 0015)."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import pytest
import trio

from clonegate import parse_repo_url
from clonegate.cluster import RedisWorkQueue, open_redis
from clonegate.store import open_store

from .support.cluster_runs import serve_copies, start_clonegate
from .support.paths import ROOT
from .support.proxy import ThrottlingProxy
from .support.redis_server import RedisServer
from .support.repos import make_repo
from .support.servers import git_daemon

pytestmark = pytest.mark.slow

REPOSITORIES = 60


async def _first_line(stream: trio.abc.ReceiveStream | None) -> str:
    assert stream is not None
    data = b""
    while b"\n" not in data:
        chunk = await stream.receive_some()
        assert chunk, "the process ended without a line"
        data += chunk
    return data.split(b"\n", 1)[0].decode()


def _open_at_peak(proxy: ThrottlingProxy) -> list[str]:
    """The repositories whose requests were open, by the proxy's log, when the most
    were: what a failure of the limit names (a survivor's clone, or a dead one's). A
    connection counts from its accept and is logged from its request, so a peak may
    hold one more connection than this names."""
    open_now: list[str] = []
    peak: list[str] = []
    for event, path in proxy.log:
        if event == "request":
            open_now.append(path)
        elif event == "closed" and path in open_now:
            open_now.remove(path)
        if len(open_now) > len(peak):
            peak = list(open_now)
    return peak


async def test_three_workers_share_the_limit_and_survive_a_killed_one(
    tmp_path: Path, tmpdir_env: Path, redis_service: RedisServer
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    serve_copies(served, REPOSITORIES)
    env = {**os.environ, "CLONEGATE_REDIS_URL": redis_service.url, "TMPDIR": str(tmpdir_env)}
    prefix = f"e2e{tmp_path.name[-6:]}"
    with git_daemon(served) as daemon:
        # The killed worker's clone ends with it: its socket is closed (or reset, when
        # data it never read was waiting), and the proxy counts the connection closed
        # at once (tests/test_servers.py), seconds before its lease frees its permit.
        # Small chunks, so that a transfer to a dead client also fails at once.
        proxy = ThrottlingProxy(daemon.port, rate=32 * 1024, chunk=2 * 1024)
        async with trio.open_nursery() as nursery:
            await nursery.start(proxy.serve)
            urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(REPOSITORIES)]
            submit = await trio.run_process(
                [sys.executable, "-m", "clonegate", "submit", "--run", prefix, *urls],
                capture_stdout=True,
                capture_stderr=True,
                env=env,
                cwd=ROOT,
            )
            assert submit.stdout.decode().strip() == prefix
            # A lease long beside the moments the victim is stopped before it is killed
            # (its clone worker runs on meanwhile) and beside a loaded machine's late
            # heartbeat: a holder paused past its lease may keep working (ADR 0015),
            # and with 2 s leases (renewed every 0.67 s) two CI runs saw 3 at once.
            worker_args = (
                "worker", "-j", "2", "--cluster-limit", "2", "--lease", "4",
                "--claim-idle", "2", "--exit-when-done",
            )  # fmt: skip
            workers = [await start_clonegate(*worker_args, env=env) for _ in range(3)]
            names = [(await _first_line(w.stderr)).split()[1].rstrip(":") for w in workers]
            async with open_redis(redis_service.url) as redis:
                queue = RedisWorkQueue(redis)
                # Kill the first worker while it runs a job, once the run is under way:
                # stopped first, so that the job seen running cannot finish meanwhile.
                while True:
                    status = await queue.status(prefix)
                    assert status is not None
                    if status.done >= 10 and any(r.worker == names[0] for r in status.running):
                        os.kill(workers[0].pid, signal.SIGSTOP)
                        status = await queue.status(prefix)
                        assert status is not None
                        victim_jobs = [r.key for r in status.running if r.worker == names[0]]
                        if victim_jobs:
                            break
                        os.kill(workers[0].pid, signal.SIGCONT)
                    await trio.sleep(0.01)  # polling the shared state, which has no events
                workers[0].kill()
                await workers[0].wait()
                for survivor in workers[1:]:
                    assert await survivor.wait() == 0
                status = await queue.status(prefix)
                reports = [
                    json.loads(entry.field_values["report"]) | {"by": entry.field_values["worker"]}
                    for entry in await redis.xrange(f"{{clonegate}}:run:{prefix}:results")
                ]
                lost = [  # permits Redis took back from a holder (the victim's, expected)
                    dict(entry.field_values)
                    for entry in await redis.xrange("{clonegate:sem:clones}:log")
                    if entry.field_values["event"] in ("expired", "evicted")
                ]
            nursery.cancel_scope.cancel()
    assert status is not None
    assert (status.submitted, status.done, status.running) == (REPOSITORIES, REPOSITORIES, ())
    # Exactly one report per job, every one ok; the killed worker's job finished elsewhere.
    assert sorted(r["index"] for r in reports) == list(range(REPOSITORIES))
    assert all(r["status"] == "ok" and r["analysis"]["tests"] == 1 for r in reports)
    by_key = {parse_repo_url(r["url"]).key: r for r in reports}
    assert all(by_key[key]["by"] != names[0] for key in victim_jobs)
    # The limit held across the three workers: never more than 2 pack transfers at once.
    assert proxy.max_active <= 2, (
        f"requests open at the peak: {_open_at_peak(proxy)}; permits taken back: {lost}"
    )
    assert proxy.connections >= REPOSITORIES
    # The killed worker's clone directory was swept by the survivors.
    assert list(tmpdir_env.iterdir()) == []


async def test_a_worker_keeps_its_own_store_and_reuses_what_it_found(
    tmp_path: Path, tmpdir_env: Path, redis_service: RedisServer
) -> None:
    # ADR 0016: a worker's --db is its own record and cache; with --incremental it
    # reports a repository it analyzed before at the same commit without cloning it.
    served = tmp_path / "served"
    served.mkdir()
    for i in range(4):
        make_repo(served, f"r{i}", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    db = tmp_path / "worker.db"
    env = {**os.environ, "CLONEGATE_REDIS_URL": redis_service.url, "TMPDIR": str(tmpdir_env)}
    prefix = f"db{tmp_path.name[-6:]}"
    with git_daemon(served) as daemon:
        proxy = ThrottlingProxy(daemon.port)
        async with trio.open_nursery() as nursery:
            await nursery.start(proxy.serve)
            urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(4)]
            for run, extra in ((f"{prefix}a", ()), (f"{prefix}b", ("--incremental",))):
                for command in (
                    ["submit", "--run", run, *urls],
                    ["worker", "--db", str(db), "--exit-when-done", *extra],
                ):
                    await trio.run_process(
                        [sys.executable, "-m", "clonegate", *command],
                        capture_stdout=True,
                        capture_stderr=True,
                        env=env,
                        cwd=ROOT,
                    )
            async with open_redis(redis_service.url) as redis:
                entries = await redis.xrange(f"{{clonegate}}:run:{prefix}b:results")
                again = [json.loads(entry.field_values["report"]) for entry in entries]
            nursery.cancel_scope.cancel()
    assert len(again) == 4
    assert all(r["status"] == "ok" and r["reused"] for r in again)
    # Packs were fetched by the first run only: the second listed each HEAD, no more.
    assert sum(1 for event, _ in proxy.log if event == "want") == 4
    async with open_store(db) as store:
        runs = await store.runs()
        assert len(runs) == 2
        assert [r.status for r in await store.reports(runs[0].id)] == ["ok"] * 4

"""`submit` and `results` as a user meets them (issue 39, item 10): the run id comes
first, a submission stopped half-way leaves its run incomplete (and says so), signals
stop it cleanly, `results` shows the run's elapsed time as Redis recorded it, and
`results --follow` says it waits for workers.

Each command runs as a process against a real redis-server. "Mid-way" is an event: a
relay in front of Redis stops forwarding at the submission's Nth script call, so the
jobs queued before it are known exactly; never a sleep.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from clonegate.cluster import RedisWorkQueue, open_redis

from .support.proxy import RedisRelay
from .support.redis_server import RedisServer

ROOT = Path(__file__).resolve().parents[1]
JOBS = "{clonegate}:jobs"
BATCH = 500  # the queue's SUBMIT_BATCH: jobs per script call
REFUSED = "git://127.0.0.1:1/r{}.git"  # nothing listens: a quick, failed report


def _env(url: str) -> dict[str, str]:
    return {**os.environ, "CLONEGATE_REDIS_URL": url}


async def _open(args: list[str], url: str) -> trio.Process:
    return await trio.lowlevel.open_process(
        [sys.executable, "-m", "clonegate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(url),
        cwd=ROOT,
    )


async def _read_until(stream: trio.abc.ReceiveStream | None, text: bytes) -> bytes:
    assert stream is not None
    data = b""
    while text not in data:
        chunk = await stream.receive_some()
        assert chunk, f"the stream ended without {text!r}: {data!r}"
        data += chunk
    return data


async def _run(args: list[str], url: str) -> subprocess.CompletedProcess[bytes]:
    with trio.fail_after(120):  # a safety net only
        return await trio.run_process(
            [sys.executable, "-m", "clonegate", *args],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=_env(url),
            cwd=ROOT,
        )


async def _stopped_submit(
    redis_server: RedisServer, tmp_path: Path, nth: int, sig: signal.Signals
) -> tuple[int, str, str, int]:
    """`submit` of a big list through a relay holding its ``nth`` script call, stopped
    by ``sig`` there: (exit status, stdout, stderr, jobs in Redis when it was stopped)."""
    urls = tmp_path / "urls.txt"
    urls.write_text("".join(REFUSED.format(i) + "\n" for i in range(20 * BATCH)))
    async with open_redis(redis_server.url) as redis:
        # The submission script, loaded: the process's calls are all EVALSHA.
        await RedisWorkQueue(redis).submit([], "warm-up")
        relay = RedisRelay(redis_server.port, b"EVALSHA", hold_at=nth)
        async with trio.open_nursery() as nursery:
            await nursery.start(relay.serve)
            process = await _open(
                ["submit", "--from-file", str(urls)], f"redis://127.0.0.1:{relay.port}/0"
            )
            with trio.fail_after(60):  # a safety net only; the relay's event drives it
                await relay.held.wait()
            jobs = await redis.xlen(JOBS)
            process.send_signal(sig)
            assert process.stdout is not None
            assert process.stderr is not None
            with trio.fail_after(60):
                out = await _read_all(process.stdout)
                err = await _read_all(process.stderr)
                returncode = await process.wait()
            nursery.cancel_scope.cancel()
    return returncode, out.decode(), err.decode(), jobs


async def _read_all(stream: trio.abc.ReceiveStream) -> bytes:
    data = b""
    while chunk := await stream.receive_some():
        data += chunk
    return data


async def test_the_run_id_is_printed_before_the_first_job_is_queued(
    own_redis: RedisServer, tmp_path: Path
) -> None:
    # Held at its first script call: the run id must already be out, no job queued.
    returncode, out, _, jobs = await _stopped_submit(own_redis, tmp_path, 1, signal.SIGKILL)
    assert returncode == -signal.SIGKILL
    assert jobs == 0
    assert len(out.split()) == 1, out  # the run id, and nothing else yet


async def test_a_killed_submit_leaves_an_incomplete_run(
    own_redis: RedisServer, tmp_path: Path
) -> None:
    # Held at its fourth script call: the opening one and two batches reached Redis.
    returncode, out, _, jobs = await _stopped_submit(own_redis, tmp_path, 4, signal.SIGKILL)
    assert returncode == -signal.SIGKILL
    assert jobs == 2 * BATCH
    [run] = out.split()
    status = await _run(["status", run], own_redis.url)
    assert status.returncode == 0, status.stderr
    line = status.stdout.decode().splitlines()[0]
    assert line.startswith(f"run {run}: {2 * BATCH} jobs: {2 * BATCH} queued"), line
    assert "submission incomplete" in line
    results = await _run(["results", run], own_redis.url)
    assert f"run {run}: its submission did not finish" in results.stderr.decode()
    # Submitting the list again to the same run finishes it.
    urls = tmp_path / "urls.txt"
    again = await _run(["submit", "--run", run, "--from-file", str(urls)], own_redis.url)
    assert again.returncode == 0, again.stderr
    status = await _run(["status", run], own_redis.url)
    assert "incomplete" not in status.stdout.decode()
    assert f"run {run}: {20 * BATCH} jobs" in status.stdout.decode()


@pytest.mark.parametrize(
    ("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)], ids=["ctrl-c", "sigterm"]
)
async def test_a_signal_stops_submit_cleanly_and_says_the_run_is_incomplete(
    sig: signal.Signals, code: int, own_redis: RedisServer, tmp_path: Path
) -> None:
    returncode, out, err, _ = await _stopped_submit(own_redis, tmp_path, 3, sig)
    assert returncode == code, err
    assert "Traceback" not in err, err
    assert "clonegate: error" not in err, err
    [run] = out.split()
    assert f"run {run}: submission stopped, the run is incomplete" in err
    status = await _run(["status", run], own_redis.url)
    assert "submission incomplete" in status.stdout.decode()


async def _worker_until_done(url: str) -> None:
    # No retries and no breaker: a refused port is retried and probed for over a minute
    # otherwise (issue 43), and these tests want the failed reports, not the waits.
    args = ["worker", "-j", "2", "--retries", "0", "--breaker", "0", "--exit-when-done", "-q"]
    worker = await _run(args, url)
    assert worker.returncode == 0, worker.stderr


async def test_results_shows_the_run_elapsed_time_redis_recorded(
    own_redis: RedisServer,
) -> None:
    async with open_redis(own_redis.url) as redis:
        run, _, _ = await RedisWorkQueue(redis).submit([REFUSED.format(i) for i in range(3)])
        await _worker_until_done(own_redis.url)
        got = await _run(["results", run, "--format", "json"], own_redis.url)
        created = int(await redis.hget(f"{{clonegate}}:run:{run}:meta", "created") or 0)
        [last] = await redis.xrevrange(f"{{clonegate}}:run:{run}:results", count=1)
    expected = (int(str(last.identifier).split("-")[0]) - created) / 1000
    assert expected > 0
    assert json.loads(got.stdout)["summary"]["elapsed"] == expected
    table = await _run(["results", run, "--format", "table"], own_redis.url)
    assert f"; {expected:.1f} s" in table.stdout.decode()


async def test_results_follow_says_it_waits_for_workers(own_redis: RedisServer) -> None:
    async with open_redis(own_redis.url) as redis:
        run, _, _ = await RedisWorkQueue(redis).submit([REFUSED.format(i) for i in range(2)])
    follow = await _open(["results", run, "--follow"], own_redis.url)
    try:
        with trio.fail_after(60):  # a safety net only
            waiting = await _read_until(follow.stderr, b"\n")
        assert waiting.decode().startswith(f"run {run}: waiting for workers (2 of 2 jobs"), waiting
        await _worker_until_done(own_redis.url)
        assert follow.stdout is not None
        assert follow.stderr is not None
        with trio.fail_after(60):
            out = await _read_all(follow.stdout)
            err = waiting + await _read_all(follow.stderr)
            await follow.wait()
    finally:
        if follow.returncode is None:
            follow.kill()
            await follow.wait()
    assert follow.returncode == 1, err  # the clones failed: nothing listens there
    reports = [json.loads(line) for line in out.decode().splitlines()]
    assert sorted(r["url"] for r in reports) == [REFUSED.format(i) for i in range(2)]
    assert err.decode().count("waiting for workers") == 1, err


async def test_submit_lists_its_sources_once_and_queues_their_urls(
    own_redis: RedisServer,
) -> None:
    """Sources beside URLs (issue 45): listed once, in `submit`, filtered; the jobs are
    the URLs; a listing that fails mid-way queues what it listed and exits 1."""
    from .support.forges.catalogue import made
    from .support.forges.core import failing_from, json_answer
    from .support.forges.github import GitHubApi
    from .support.forges.threaded import in_a_thread

    repos = made("acme", 250)
    server = GitHubApi(repos, git_base="git://127.0.0.1:1", orgs=["acme"], prefix="/api/v3")
    server.tamper = failing_from(3, json_answer(500, {"message": "down"}))
    with in_a_thread(server):
        source = f"github:org/acme@{server.base_url}"
        got = await _run(["submit", source, REFUSED.format(0), "--skip-forks"], own_redis.url)
    assert got.returncode == 1, got.stderr
    [run] = got.stdout.decode().split()
    err = got.stderr.decode()
    assert f"clonegate: error: {source}: HTTP 500" in err
    assert "Traceback" not in err
    kept = [repo.clone_url("git://127.0.0.1:1") for repo in repos[:200] if not repo.fork]
    assert f"queued {len(kept) + 1} jobs (0 duplicates) as run {run}" in err
    assert len(server.seen) == 3  # each page once: the listing happened here, once
    async with open_redis(own_redis.url) as redis:
        status = await RedisWorkQueue(redis).status(run)
    assert status is not None
    assert (status.submitted, status.complete) == (len(kept) + 1, True)
    async with open_redis(own_redis.url) as redis:
        entries = await redis.xrange(JOBS)
    listings = [
        json.loads(e.field_values["listed"]) for e in entries if e.field_values.get("listed")
    ]
    # Each listed job carries its listing; the URL given as such, none.
    assert sorted(listing["clone_url"] for listing in listings) == sorted(kept)
    assert {listing["forge"] for listing in listings} == {"github"}

"""The cluster mode (issue 17): RedisSemaphore beside WeightedSemaphore, and 1 worker vs
3 workers under the same cluster limit.

    python bench/bench_cluster.py            # about a minute; needs redis-server
    python bench/bench_cluster.py --quick    # fewer rounds and repositories

1. Acquire+release of one permit, sequentially (latency) and by 8 tasks on a limit of 4
   (throughput), RedisSemaphore against a redis-server on loopback, side by side with
   the local WeightedSemaphore.
2. ``clonegate submit`` N copies of a small repository served by ``git daemon`` through
   a proxy at 64 KiB/s per connection; ``clonegate worker -j 2 --cluster-limit 2
   --exit-when-done``, one process, then three: the makespan of each, the most
   transfers the proxy saw at once, and the share of the time both permits were in use
   while repositories were still queued.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import trio

from bench.bench_load import utilisation
from clonegate import WeightedSemaphore
from clonegate.cluster import RedisSemaphore, open_redis
from tests.support.proxy import ThrottlingProxy
from tests.support.redis_server import RedisServer
from tests.support.repos import make_repo
from tests.support.servers import git_daemon


async def semaphores(url: str, rounds: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    local = WeightedSemaphore(4)
    async with open_redis(url) as redis, RedisSemaphore(redis, "bench", 4, lease=30) as shared:
        for name, hold in (("local", local.hold), ("redis", shared.hold)):
            started = time.perf_counter()
            for _ in range(rounds):
                async with hold(1):
                    pass
            figures[f"{name} latency ms"] = (time.perf_counter() - started) / rounds * 1000

            async def task(hold: object = hold) -> None:
                for _ in range(rounds // 8):
                    async with hold(1):  # type: ignore[operator]
                        await trio.lowlevel.checkpoint()

            started = time.perf_counter()
            async with trio.open_nursery() as nursery:
                for _ in range(8):
                    nursery.start_soon(task)
            figures[f"{name} throughput /s"] = (rounds // 8 * 8) / (time.perf_counter() - started)
    return figures


async def makespan(url: str, port: int, count: int, workers: int) -> tuple[float, int, float]:
    proxy = ThrottlingProxy(port, rate=64 * 1024)
    env = {**os.environ, "CLONEGATE_REDIS_URL": url}
    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        urls = [f"git://127.0.0.1:{proxy.port}/r{i}.git" for i in range(count)]
        command = [sys.executable, "-m", "clonegate"]
        await trio.run_process([*command, "submit", *urls], env=env, capture_stdout=True)
        worker = [*command, "worker", "-j", "2", "--cluster-limit", "2", "--exit-when-done"]
        started = time.perf_counter()

        async def one() -> None:
            await trio.run_process(worker, env=env, capture_stderr=True)

        async with trio.open_nursery() as running:
            for _ in range(workers):
                running.start_soon(one)
        elapsed = time.perf_counter() - started
        nursery.cancel_scope.cancel()
    return elapsed, proxy.max_active, utilisation(proxy.timeline, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    rounds, count = (400, 12) if args.quick else (4000, 60)
    with tempfile.TemporaryDirectory() as tmp:
        server = RedisServer(Path(tmp))
        server.start()
        served = Path(tmp) / "served"
        served.mkdir()
        make_repo(served, "r0", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
        for i in range(1, count):
            shutil.copytree(served / "r0.git", served / f"r{i}.git")
        try:
            figures = trio.run(semaphores, server.url, rounds)
            for name, value in figures.items():
                print(f"{name:28} {value:10.3f}")
            latency = figures["redis latency ms"] / figures["local latency ms"]
            throughput = figures["local throughput /s"] / figures["redis throughput /s"]
            print(
                f"latency redis / local {latency:.0f}x, throughput local / redis {throughput:.0f}x"
            )
            with git_daemon(served) as daemon:
                runs = {n: trio.run(makespan, server.url, daemon.port, count, n) for n in (1, 3)}
            for n, (elapsed, most, busy) in runs.items():
                print(f"{n} worker(s): {elapsed:6.2f} s, at most {most} transfers, "
                      f"both permits busy {busy:.0%} of the time")  # fmt: skip
            print(f"makespan 3 workers / 1 worker: {runs[3][0] / runs[1][0]:.2f}x")
        finally:
            server.stop()


if __name__ == "__main__":
    main()

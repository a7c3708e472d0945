"""How to run a clone in a killable process: clonegate's zygote (a fresh fork per job)
vs trio-parallel's reused spawn workers vs a new interpreter per job (trio.run_process).

    python bench/bench_worker.py [--quick]

For each, side by side in one run: the cost of the first job (starting the machinery:
an interpreter that imports dulwich, tree-sitter and clonegate's worker code), the
fixed cost per later job (a process that has all that loaded runs a trivial job and
answers), and the time from cancelling a busy job until the call has returned with
the process dead. ADR 0003 cites the figures.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from pathlib import Path

import trio
import trio_parallel

# Jobs are sent to workers by their module's name; clonegate's workers never import
# this script as __main__, so the jobs come from this file imported as a module.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

READY = "import dulwich.client, dulwich.repo, clonegate._adapters.git.clone_worker"


from bench.worker_jobs import busy_in_worker, ready_in_worker  # noqa: E402


async def per_job_trio_parallel(jobs: int) -> list[float]:
    limiter = trio.CapacityLimiter(1)
    await trio_parallel.run_sync(ready_in_worker, limiter=limiter)  # warm: one worker exists
    times = []
    for _ in range(jobs):
        start = time.perf_counter()
        await trio_parallel.run_sync(ready_in_worker, kill_on_cancel=True, limiter=limiter)
        times.append(time.perf_counter() - start)
    return times


async def per_job_zygote(jobs: int) -> tuple[float, list[float]]:
    from clonegate import _app  # noqa: F401  (sets the zygote's preload list)
    from clonegate._adapters.workers import open_worker_pool, run_in_worker

    async with open_worker_pool() as pool:
        start = time.perf_counter()
        await run_in_worker(pool, ready_in_worker)
        first = time.perf_counter() - start
        times = []
        for _ in range(jobs):
            start = time.perf_counter()
            await run_in_worker(pool, ready_in_worker)
            times.append(time.perf_counter() - start)
    return first, times


async def first_job_trio_parallel() -> float:
    start = time.perf_counter()
    async with trio_parallel.cache_scope():
        await trio_parallel.run_sync(ready_in_worker, limiter=trio.CapacityLimiter(1))
        return time.perf_counter() - start


async def cancel_latency_zygote() -> float:
    from clonegate._adapters.workers import open_worker_pool, run_in_worker

    async with open_worker_pool() as pool:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run_in_worker, pool, busy_in_worker)
            await trio.sleep(1)  # let the job start: the workload, not a synchronization
            start = time.perf_counter()
            nursery.cancel_scope.cancel()
        return time.perf_counter() - start


async def per_job_run_process(jobs: int) -> list[float]:
    times = []
    for _ in range(jobs):
        start = time.perf_counter()
        await trio.run_process([sys.executable, "-c", READY])
        times.append(time.perf_counter() - start)
    return times


async def cancel_latency_trio_parallel() -> float:
    async with trio.open_nursery() as nursery:
        nursery.start_soon(
            lambda: trio_parallel.run_sync(
                busy_in_worker, kill_on_cancel=True, limiter=trio.CapacityLimiter(1)
            )
        )
        await trio.sleep(1)  # let the job start: this is the workload, not a synchronization
        start = time.perf_counter()
        nursery.cancel_scope.cancel()
    return time.perf_counter() - start


async def cancel_latency_run_process() -> float:
    async with trio.open_nursery() as nursery:
        command = [sys.executable, "-c", f"{READY}; import time; time.sleep(30)"]
        nursery.start_soon(functools.partial(trio.run_process, command))
        await trio.sleep(1)
        start = time.perf_counter()
        nursery.cancel_scope.cancel()
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    jobs = 3 if parser.parse_args(argv).quick else 20
    zy_first, zy = trio.run(per_job_zygote, jobs)
    tp_first = trio.run(first_job_trio_parallel)
    tp = trio.run(per_job_trio_parallel, jobs)
    rp = trio.run(per_job_run_process, jobs)
    zy_cancel = trio.run(cancel_latency_zygote)
    tp_cancel = trio.run(cancel_latency_trio_parallel)
    rp_cancel = trio.run(cancel_latency_run_process)
    print(f"median of {jobs} jobs, seconds\n")
    print(
        "| | clonegate zygote (fork per job) | trio-parallel (reused worker) "
        "| trio.run_process (new interpreter) |"
    )
    print("|---|---|---|---|")
    print(
        f"| first job (start-up) | {zy_first:.4f} | {tp_first:.4f} | {statistics.median(rp):.4f} |"
    )
    print(
        f"| fixed cost per clone | {statistics.median(zy):.4f} | {statistics.median(tp):.4f} "
        f"| {statistics.median(rp):.4f} |"
    )
    cancels = f"{zy_cancel:.4f} | {tp_cancel:.4f} | {rp_cancel:.4f}"
    print(f"| cancel a busy job until it is dead | {cancels} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

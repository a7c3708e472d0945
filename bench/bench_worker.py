"""How to run a clone in a killable process: trio-parallel workers vs trio.run_process.

    python bench/bench_worker.py [--quick]

For each, side by side in one run: the fixed cost per clone (start a process that has
dulwich imported and is ready to clone, run a trivial job, get the answer back), and
the time from cancelling a busy job until the call has returned with the process dead.
ADR 0003 cites the figures.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time

import trio
import trio_parallel

READY = "import dulwich.client, dulwich.repo, clonegate._adapters.git.clone_worker"


def ready_in_worker() -> int:
    import dulwich.client
    import dulwich.repo

    import clonegate._adapters.git.clone_worker

    return len(
        dulwich.client.__name__
        + dulwich.repo.__name__
        + clonegate._adapters.git.clone_worker.__name__
    )


def busy_in_worker() -> None:
    time.sleep(30)


async def per_job_trio_parallel(jobs: int) -> list[float]:
    limiter = trio.CapacityLimiter(1)
    await trio_parallel.run_sync(ready_in_worker, limiter=limiter)  # warm: one worker exists
    times = []
    for _ in range(jobs):
        start = time.perf_counter()
        await trio_parallel.run_sync(ready_in_worker, kill_on_cancel=True, limiter=limiter)
        times.append(time.perf_counter() - start)
    return times


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
    tp = trio.run(per_job_trio_parallel, jobs)
    rp = trio.run(per_job_run_process, jobs)
    tp_cancel = trio.run(cancel_latency_trio_parallel)
    rp_cancel = trio.run(cancel_latency_run_process)
    print(f"median of {jobs} jobs, seconds\n")
    print("| | trio-parallel (reused worker) | trio.run_process (new interpreter) |")
    print("|---|---|---|")
    print(f"| fixed cost per clone | {statistics.median(tp):.4f} | {statistics.median(rp):.4f} |")
    print(f"| cancel a busy job until it is dead | {tp_cancel:.4f} | {rp_cancel:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

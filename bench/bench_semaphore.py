"""WeightedSemaphore side by side with trio.Semaphore and trio.CapacityLimiter, in one run.

    python bench/bench_semaphore.py            # full run, prints a markdown table
    python bench/bench_semaphore.py --quick    # tiny sizes: checks the script still works

Each scenario runs every implementation in turn, interleaved, several rounds, and keeps
each one's best time; the targets are ratios, because one machine's seconds mean little.
Targets (issue 2): uncontended and contended within 1.2x of trio.Semaphore; cancelling
all of n blocked waiters linear in n (40k/5k at most 10x).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import trio
import trio.testing

from clonegate import WeightedSemaphore


class Limiter(Protocol):
    async def acquire(self) -> None: ...
    def release(self) -> None: ...


@dataclass(frozen=True)
class Contender:
    name: str
    make: Callable[[int], Limiter]


CONTENDERS = [
    Contender("trio.Semaphore", lambda n: trio.Semaphore(n)),
    Contender("trio.CapacityLimiter", lambda n: _Borrowing(trio.CapacityLimiter(n))),
    Contender("WeightedSemaphore", lambda n: WeightedSemaphore(n)),
]


class _Borrowing:
    """CapacityLimiter with the Semaphore-like interface the scenarios use.

    Its borrower is the current task, so a task may hold at most one token: true of
    every scenario here.
    """

    def __init__(self, limiter: trio.CapacityLimiter) -> None:
        self._limiter = limiter

    async def acquire(self) -> None:
        await self._limiter.acquire()

    def release(self) -> None:
        self._limiter.release()


async def uncontended(make: Callable[[int], Limiter], ops: int) -> float:
    sem = make(1)
    start = time.perf_counter()
    for _ in range(ops):
        await sem.acquire()
        sem.release()
    return time.perf_counter() - start


async def contended(make: Callable[[int], Limiter], ops: int, tasks: int = 100) -> float:
    # Size 1 and many tasks: nearly every release hands the token to a parked waiter.
    sem = make(1)

    async def worker() -> None:
        for _ in range(ops // tasks):
            await sem.acquire()
            await trio.lowlevel.checkpoint()
            sem.release()

    start = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for _ in range(tasks):
            nursery.start_soon(worker)
    return time.perf_counter() - start


async def cancel_all(make: Callable[[int], Limiter], waiters: int, collect: bool = False) -> float:
    """Park n waiters on an empty semaphore, then time cancelling every one of them.

    The time runs from ``cancel()`` (which calls each waiter's abort callback) until the
    last task has finished. Python's cyclic GC is paused while timing unless ``collect``:
    the number of objects each collection visits grows with the heap, which adds a
    superlinear term to any primitive alike and would hide the semaphore's own cost.
    """
    sem = make(1)
    await sem.acquire()
    async with trio.open_nursery() as nursery:
        for _ in range(waiters):
            nursery.start_soon(sem.acquire)
        await trio.testing.wait_all_tasks_blocked()
        gc.collect()
        if not collect:
            gc.disable()
        start = time.perf_counter()
        nursery.cancel_scope.cancel()
    elapsed = time.perf_counter() - start
    gc.enable()
    return elapsed


def best_of(
    rounds: int, scenario: Callable[[Callable[[int], Limiter]], Awaitable[float]]
) -> dict[str, float]:
    best = {c.name: float("inf") for c in CONTENDERS}
    for _ in range(rounds):
        for contender in CONTENDERS:
            seconds = trio.run(scenario, contender.make)
            best[contender.name] = min(best[contender.name], seconds)
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, no targets checked")
    args = parser.parse_args(argv)
    ops, rounds, small, large = (2_000, 1, 50, 400) if args.quick else (200_000, 5, 5_000, 40_000)

    results = {
        f"uncontended acquire+release x{ops:,}": best_of(rounds, lambda m: uncontended(m, ops)),
        f"contended hand-off, 100 tasks, x{ops:,}": best_of(rounds, lambda m: contended(m, ops)),
        f"cancel {small:,} waiters": best_of(rounds, lambda m: cancel_all(m, small)),
        f"cancel {large:,} waiters": best_of(rounds, lambda m: cancel_all(m, large)),
        f"cancel {small:,} waiters, GC on": best_of(rounds, lambda m: cancel_all(m, small, True)),
        f"cancel {large:,} waiters, GC on": best_of(rounds, lambda m: cancel_all(m, large, True)),
    }

    names = [c.name for c in CONTENDERS]
    version = sys.version.split()[0]
    print(f"python {version}, trio {trio.__version__}; best of {rounds} rounds, seconds\n")
    print("| scenario | " + " | ".join(names) + " | Weighted / trio.Semaphore |")
    print("|---" * (len(names) + 2) + "|")
    for scenario, best in results.items():
        ratio = best["WeightedSemaphore"] / best["trio.Semaphore"]
        cells = " | ".join(f"{best[n]:.4f}" for n in names)
        print(f"| {scenario} | {cells} | {ratio:.2f}x |")

    rows = list(results.values())
    scaling = {n: rows[3][n] / rows[2][n] for n in names}
    scaling_gc = {n: rows[5][n] / rows[4][n] for n in names}
    print(
        f"\ncancel scaling {large:,}/{small:,} (linear = {large // small}): "
        + ", ".join(f"{n} {scaling[n]:.1f}" for n in names)
    )
    print(
        "the same with the cyclic GC running: "
        + ", ".join(f"{n} {scaling_gc[n]:.1f}" for n in names)
    )

    if args.quick:
        return 0
    checks = {
        "uncontended within 1.2x": rows[0]["WeightedSemaphore"] / rows[0]["trio.Semaphore"] <= 1.2,
        "contended within 1.2x": rows[1]["WeightedSemaphore"] / rows[1]["trio.Semaphore"] <= 1.2,
        "cancel scaling at most 10 (GC paused)": scaling["WeightedSemaphore"] <= 10,
    }
    for check, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}: {check}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())

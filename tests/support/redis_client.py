"""Another machine, as a child process, for the RedisSemaphore tests.

``python -m tests.redis_client URL NAME LIMIT LEASE hold WEIGHT``: acquires, prints
``held <id>`` and then holds until killed. ``... wait WEIGHT``: starts waiting, prints
``waiting <id>`` once Redis lists it, and waits until killed (or granted: then it
prints ``held <id>``). ``... stress TASKS ROUNDS SEED``: TASKS tasks each take random
weights ROUNDS times, cancelling some of their requests and holds; prints ``done``.
"""

from __future__ import annotations

import random
import sys

import trio

from clonegate.cluster import RedisSemaphore, open_redis


async def main(url: str, name: str, limit: int, lease: float, mode: str, *rest: str) -> None:
    async with open_redis(url) as redis, RedisSemaphore(redis, name, limit, lease=lease) as sem:
        if mode == "hold":
            async with sem.hold(int(rest[0])) as lease_held:
                print("held", lease_held.id, flush=True)
                await trio.sleep_forever()
        elif mode == "wait":
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_announce_waiting, sem)
                async with sem.hold(int(rest[0])) as lease_held:
                    print("held", lease_held.id, flush=True)
                    await trio.sleep_forever()
        elif mode == "stress":
            tasks, rounds, seed = int(rest[0]), int(rest[1]), int(rest[2])
            async with trio.open_nursery() as nursery:
                for task in range(tasks):
                    rng = random.Random(seed * 100 + task)
                    nursery.start_soon(_stress, sem, limit, rounds, rng)
            print("done", flush=True)


async def _announce_waiting(sem: RedisSemaphore) -> None:
    while not (await sem.statistics()).waiters:  # noqa: ASYNC110 (the server's record)
        await trio.sleep(0.005)
    print("waiting", (await sem.statistics()).waiters[-1].id, flush=True)


async def _stress(sem: RedisSemaphore, limit: int, rounds: int, rng: random.Random) -> None:
    for _ in range(rounds):
        weight = rng.randint(1, limit)
        with trio.move_on_after(rng.choice([0.0005, 0.005, 0.05, 10.0])):
            async with sem.hold(weight):
                await trio.sleep(rng.random() * 0.01)


if __name__ == "__main__":
    url, name, limit, lease, mode, *rest = sys.argv[1:]
    trio.run(main, url, name, int(limit), float(lease), mode, *rest)

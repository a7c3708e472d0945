"""The RedisSemaphore's release hints (a pub/sub listener) when a run is stopped: a
signal cancels the listener and the Redis client's connections at once (issue 39)."""

from __future__ import annotations

import trio
from trio.testing import wait_all_tasks_blocked

from clonegate.cluster import RedisSemaphore, open_redis

from .support.redis_server import RedisServer

# trio runs the cancelled tasks in a random order: the listener's clean-up came after
# the connection's end in about half the stops of a worker.
STOPS = 20


async def test_a_cancelled_listener_raises_only_its_cancellation(
    redis_service: RedisServer,
) -> None:
    # coredis's clean-up of the subscription writes to its connection; when the same
    # cancellation closed that connection first, it raised ClosedResourceError, in a
    # group with the Cancelled that escaped the listener: a traceback on SIGTERM.
    for stop_number in range(STOPS):
        with trio.CancelScope() as stop:
            async with open_redis(redis_service.url) as redis, trio.open_nursery() as nursery:
                semaphore = RedisSemaphore(redis, f"hints-stop-{stop_number}", 1, nursery=nursery)
                async with semaphore.hold():
                    pass
                await wait_all_tasks_blocked()  # the listener is subscribed
                stop.cancel()
        assert stop.cancelled_caught

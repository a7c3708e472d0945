"""The cluster mode on a real 3-master Redis Cluster (issue 39, item 8; ADR 0015, "Redis
Cluster and Sentinel"): every command through every node's address, each script's keys
in one slot, pub/sub hints across nodes, and no redirect ever shown raw."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import trio

from clonegate._adapters.redis.url import parse_redis_url
from clonegate.cluster import RedisSemaphore, open_redis

from .support.redis_cluster import redis_cli, redis_cluster
from .support.repos import make_repo
from .support.servers import git_daemon

ROOT = Path(__file__).resolve().parents[1]
SECRET = "ClusterTail"
PASSWORD = f"c@l/u:s%25{SECRET}"  # "@", "/", ":" and "%" (as written: a literal "%25")
REPOSITORIES = 4


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[int]]:
    with redis_cluster(tmp_path_factory.mktemp("cluster"), password=PASSWORD) as ports:
        yield ports


def _url(port: int, *more: int) -> str:
    nodes = ",".join(f"127.0.0.1:{p}" for p in (port, *more))
    return f"redis+cluster://:{quote(PASSWORD, safe='')}@{nodes}"


def test_cluster_and_sentinel_urls_are_parsed_and_never_show_the_password() -> None:
    encoded = quote(PASSWORD, safe="")
    cluster = parse_redis_url(f"redis+cluster://ops:{encoded}@10.0.0.1:7000,[::1],node-c:7002/0")
    assert (cluster.kind, cluster.username, cluster.password) == ("cluster", "ops", PASSWORD)
    assert cluster.nodes == (("10.0.0.1", 7000), ("::1", 6379), ("node-c", 7002))
    assert str(cluster) == "redis+cluster://***@10.0.0.1:7000,[::1],node-c:7002/0"
    sentinel = parse_redis_url(f"redis+sentinel://:{encoded}@s1,s2:26380/main-db/3")
    assert (sentinel.kind, sentinel.service, sentinel.db) == ("sentinel", "main-db", 3)
    assert sentinel.nodes == (("s1", 26379), ("s2", 26380))
    assert (sentinel.password, sentinel.sentinel_auth) == (PASSWORD, True)
    assert not parse_redis_url("redis+sentinel://s1/m?sentinel_auth=none").sentinel_auth
    assert SECRET not in repr(cluster) + repr(sentinel) + str(sentinel)


@pytest.mark.parametrize(
    "url",
    [
        f"redis+cluster://:{SECRET}@h1:7000/2",  # a cluster has only db 0
        f"redis+sentinel://:{SECRET}@h1:26379",  # no service name
        f"redis+sentinel://:{SECRET}@h1:26379/m?sentinel_auth=maybe",
        f"redis+cluster://:{SECRET}@h1:7000?db=1",  # a parameter clonegate does not read
        f"redis+cluster://:{SECRET}@h1:7000,,h2",
        f"redis+cluster://:{SECRET}@h1:99999",
    ],
)
def test_a_malformed_cluster_url_says_why_and_hides_the_password(url: str) -> None:
    with pytest.raises(ValueError, match="the Redis URL redis\\+") as error:
        parse_redis_url(url)
    assert SECRET not in str(error.value)


def _clonegate(*args: str, url: str, code: int = 0) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "clonegate", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "CLONEGATE_REDIS_URL": url},
        cwd=ROOT,
        check=False,
    )
    shown = done.stdout + done.stderr
    assert done.returncode == code, shown
    assert SECRET not in shown
    return shown


@pytest.mark.slow
def test_every_command_works_through_every_node(
    cluster: list[int], tmp_path: Path, tmpdir_env: Path
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    for i in range(REPOSITORIES):
        make_repo(served, f"r{i}", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    with git_daemon(served) as daemon:
        urls = [daemon.url(f"r{i}") for i in range(REPOSITORIES)]
        for node in cluster:
            url, run = _url(node), f"node{node}"
            assert f"queued {REPOSITORIES} jobs" in _clonegate(
                "submit", "--run", run, *urls, url=url
            )
            assert "-> 2," in _clonegate("limit", "2", url=url)
            assert "-> 1," in _clonegate("limit", "--host", "127.0.0.1", "1", url=url)
            _clonegate("worker", "-j", "2", "--cluster-limit", "2", "--host-limit", "1",
                       "--exit-when-done", url=url)  # fmt: skip
            assert _clonegate("results", run, url=url).count('"status": "ok"') == REPOSITORIES
            assert f"{REPOSITORIES} done" in _clonegate("status", run, url=url)
            assert "clones: limit 2" in _clonegate("limit", url=url)
    # The queue, the global limit and the host limit: keys on more than one node, so
    # the commands above were routed, not all served by the node they named.
    holding = [n for n in cluster if int(redis_cli(n, "dbsize", password=PASSWORD)) > 0]
    assert len(holding) >= 2, holding
    for node in cluster:  # each hash tag's keys in one slot: the scripts' rule
        keys = redis_cli(node, "--scan", password=PASSWORD).split()
        tags = {key[: key.index("}") + 1] for key in keys}
        slots = {redis_cli(node, "cluster", "keyslot", key, password=PASSWORD) for key in tags}
        assert len(slots) == len(tags)


@pytest.mark.slow
def test_one_node_named_as_a_plain_server_is_one_clear_line(cluster: list[int]) -> None:
    # Before: through a node owning neither slot, every command printed the raw
    # redirect ("Redis: 2455 127.0.0.1:41853") and exited 3; through the other it
    # "worked" until a host limit's key lived elsewhere.
    for node in cluster:
        plain = f"redis://:{quote(PASSWORD, safe='')}@127.0.0.1:{node}/0"
        shown = _clonegate("status", url=plain, code=3)
        assert "is a node of a Redis Cluster" in shown, shown
        assert "redis+cluster://" in shown
        assert "MOVED" not in shown
        assert shown.count("\n") == 1


async def test_release_hints_reach_waiters_through_other_nodes(cluster: list[int]) -> None:
    # A release PUBLISHes from inside a script on the node owning the semaphore's slot;
    # classic pub/sub is forwarded to every node, so a subscriber on any node hears it.
    for subscriber_node in cluster:
        with trio.fail_after(30):  # a safety net, not the assertion
            await _hint_heard(_url(subscriber_node), f"hint-{subscriber_node}", cluster)


async def _hint_heard(subscriber_url: str, name: str, cluster: list[int]) -> None:
    async with (
        open_redis(subscriber_url) as listener,
        open_redis(_url(*cluster)) as holder,
        trio.open_nursery() as nursery,
    ):
        semaphore = RedisSemaphore(holder, name, 1, nursery=nursery)
        heard = trio.Event()

        async def listen(task_status: trio.TaskStatus[None]) -> None:
            async with listener.pubsub(channels=[semaphore._channel]) as pubsub:
                task_status.started()
                async for _ in pubsub:
                    heard.set()
                    return

        await nursery.start(listen)
        lease = await semaphore.acquire()
        nursery.start_soon(RedisSemaphore(holder, name, 1, nursery=nursery).acquire)
        while not (await semaphore.statistics()).waiters:  # noqa: ASYNC110
            await trio.sleep(0.01)  # the waiter's first poll: state in Redis, no event
        await lease.release()  # grants the waiter: the hint
        await heard.wait()
        nursery.cancel_scope.cancel()

"""Real Redis topologies on 127.0.0.1 for the cluster-mode tests (ADR 0015, "Redis
Cluster and Sentinel"): a 3-master Redis Cluster, and a master with a replica watched by
a sentinel, each started and stopped by the test."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from .server_programs import server_program
from .servers import free_port, wait_until_listening

READY_BOUND = 30.0  # seconds a topology may take to settle on a loaded machine


def _start(
    program: str, workdir: Path, *args: str, config: Path | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    workdir.mkdir(parents=True, exist_ok=True)
    first = [str(config)] if config else []  # a configuration file comes first
    process = subprocess.Popen(
        [program, *first, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(workdir), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    wait_until_listening(port)
    return process, port


def _stopped(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait()


def redis_cli(port: int, *command: str, password: str | None = None) -> str:
    cli = server_program("redis-cli")
    return subprocess.run(
        [cli, "-h", "127.0.0.1", "-p", str(port), *command],
        capture_output=True,
        check=True,
        text=True,
        timeout=READY_BOUND,
        env={**os.environ, "REDISCLI_AUTH": password} if password else None,  # not in `ps`
    ).stdout


def _wait_for(what: str, ready: Callable[[], bool]) -> None:
    # Polling a topology's readiness at start-up, not a test's assertion.
    deadline = time.monotonic() + READY_BOUND
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not ready after {READY_BOUND} s")
        time.sleep(0.05)


@contextmanager
def redis_cluster(
    workdir: Path, masters: int = 3, password: str | None = None
) -> Iterator[list[int]]:
    """A Redis Cluster of ``masters`` nodes and no replica, each asking for ``password``
    if given (the default user's); yields their ports."""
    auth = ("--requirepass", password, "--masterauth", password) if password else ()
    program = server_program("redis-server")
    server_program("redis-cli")
    with ExitStack() as stack:
        ports = []
        for i in range(masters):
            process, port = _start(
                program, workdir / f"node{i}",
                "--cluster-enabled", "yes",
                "--cluster-port", str(free_port()),  # the bus: port + 10000 may not exist
                "--cluster-config-file", "nodes.conf",
                "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction",
                *auth,
            )  # fmt: skip
            stack.callback(_stopped, process)
            ports.append(port)
        addresses = [f"127.0.0.1:{port}" for port in ports]
        redis_cli(ports[0], "--cluster", "create", *addresses,
                  "--cluster-replicas", "0", "--cluster-yes", password=password)  # fmt: skip

        def joined() -> bool:
            return all(
                "cluster_state:ok" in redis_cli(port, "cluster", "info", password=password)
                and redis_cli(port, "cluster", "nodes", password=password).count("connected")
                == masters
                for port in ports
            )

        _wait_for("the cluster", joined)
        yield ports


@contextmanager
def sentinel_watched(
    workdir: Path,
    service: str = "clonegate",
    password: str | None = None,
    sentinel_password: str | None = None,
) -> Iterator[SentinelSetup]:
    """A master, a replica of it and one sentinel watching them as ``service``; the
    servers ask for ``password`` if given, the sentinel for ``sentinel_password``."""
    program = server_program("redis-server")
    sentinel_program = server_program("redis-sentinel")
    plain: tuple[str, ...] = (
        "--save",
        "",
        "--appendonly",
        "no",
        "--maxmemory-policy",
        "noeviction",
        # A replica's first sync (and each after a failover) starts at once, not after
        # the 5 s Redis waits by default for more replicas to share a diskless sync.
        "--repl-diskless-sync-delay",
        "0",
    )
    if password:
        plain += ("--requirepass", password, "--masterauth", password)
    with ExitStack() as stack:
        master, master_port = _start(program, workdir / "master", *plain)
        stack.callback(_stopped, master)
        replica, replica_port = _start(
            program, workdir / "replica", *plain, "--replicaof", "127.0.0.1", str(master_port)
        )
        stack.callback(_stopped, replica)
        _wait_for("the replica", lambda: "master_link_status:up" in redis_cli(
            replica_port, "info", "replication", password=password))  # fmt: skip
        config = workdir / "sentinel.conf"
        config.write_text(
            f"sentinel monitor {service} 127.0.0.1 {master_port} 1\n"
            f"sentinel down-after-milliseconds {service} 1000\n"
            f"sentinel failover-timeout {service} 5000\n"
            + (f'sentinel auth-pass {service} "{password}"\n' if password else "")
            + (f'requirepass "{sentinel_password}"\n' if sentinel_password else "")
        )
        sentinel, sentinel_port = _start(sentinel_program, workdir / "sentinel", config=config)
        stack.callback(_stopped, sentinel)
        setup = SentinelSetup(service, master_port, replica_port, sentinel_port)
        setup.password, setup.sentinel_password = password, sentinel_password
        setup.processes = (master, replica)
        _wait_for("the sentinel", lambda: setup.replicas_known() > 0)
        yield setup


class SentinelSetup:
    def __init__(self, service: str, master: int, replica: int, sentinel: int) -> None:
        self.service = service
        self.ports = (master, replica)
        self.sentinel = sentinel
        self.processes: tuple[subprocess.Popen[bytes], ...] = ()
        self.password: str | None = None
        self.sentinel_password: str | None = None

    def ask_sentinel(self, *command: str) -> str:
        return redis_cli(self.sentinel, "sentinel", *command, password=self.sentinel_password)

    def signal(self, port: int, signum: int) -> None:
        """Send ``signum`` to the server on ``port`` (SIGSTOP pauses it, SIGCONT resumes)."""
        os.kill(self.processes[self.ports.index(port)].pid, signum)

    @property
    def url(self) -> str:
        return f"redis+sentinel://127.0.0.1:{self.sentinel}/{self.service}"

    def master(self) -> int:
        """The port of the master the sentinel names now."""
        reply = self.ask_sentinel("get-master-addr-by-name", self.service)
        return int(reply.split()[1])

    def replicas_known(self) -> int:
        return self.ask_sentinel("replicas", self.service).count("name")

    def failover(self) -> int:
        """Force a failover; returns the new master's port once the sentinel names it."""
        old = self.master()
        # NOGOODSLAVE until the sentinel has a fresh INFO from the replica.
        _wait_for("a replica to promote", lambda: self.ask_sentinel(
            "failover", self.service).startswith("OK"))  # fmt: skip
        _wait_for("the failover", lambda: self.master() != old)
        return self.master()

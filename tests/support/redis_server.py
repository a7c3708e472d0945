"""A real ``redis-server`` on 127.0.0.1 and a random port, that a test can restart
(without persistence: the data is lost, as after a crash of a cache-only Redis; or,
with ``appendonly``, with every acknowledged write kept in its AOF), pause (SIGSTOP)
and resume."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .server_programs import server_program
from .servers import free_port, wait_until_listening


class RedisServer:
    def __init__(
        self, workdir: Path, program: str = "redis-server", *, appendonly: bool = False
    ) -> None:
        self.workdir = workdir
        self.program = program
        self.appendonly = appendonly
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.program,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                # fsync before every reply: a SIGKILL then loses nothing acknowledged.
                "--appendonly", "yes" if self.appendonly else "no",
                "--appendfsync", "always",
                "--dir", str(self.workdir),
                "--maxmemory-policy", "noeviction",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        wait_until_listening(self.port)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGCONT)  # a paused server cannot die
            self.process.kill()
            self.process.wait()

    def restart(self) -> None:
        """Kill and start again on the same port, with nothing kept (but the AOF, if
        ``appendonly``)."""
        self.stop()
        self.start()

    def pause(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGCONT)


@contextmanager
def redis_server(workdir: Path, *, appendonly: bool = False) -> Iterator[RedisServer]:
    program = server_program("redis-server")
    workdir.mkdir(parents=True, exist_ok=True)
    server = RedisServer(workdir, program, appendonly=appendonly)
    server.start()
    try:
        yield server
    finally:
        server.stop()

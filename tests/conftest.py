"""Shared fixtures: fixture repositories and real servers on 127.0.0.1.

A test reaches a server program (sshd, redis-server, redis-cli, redis-sentinel, ssh) only
through these fixtures: each finds it with ``server_program``, which skips the test when
the program is missing and fails it in CI (tests/support/server_programs.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from .support import server_programs
from .support.redis_server import RedisServer, redis_server
from .support.repos import BIG_BLOB_BYTES, FixtureRepo, make_empty_repo, make_repo
from .support.servers import (
    GitDaemon,
    HttpGitServer,
    SshServer,
    git_daemon,
    http_git_server,
    https_git_server,
    ssh_server,
)


@pytest.fixture(scope="session")
def repo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("served")


@pytest.fixture(scope="session")
def repos(repo_root: Path) -> dict[str, FixtureRepo]:
    made = {
        "basic": make_repo(repo_root, "basic"),
        "trunk": make_repo(repo_root, "trunk", commits=5, branch="trunk", other_branches=()),
        # Random bytes do not compress: a transfer long enough to interrupt through a proxy.
        "big": make_repo(
            repo_root, "big", commits=2, files={"blob.bin": os.urandom(BIG_BLOB_BYTES)}
        ),
    }
    make_empty_repo(repo_root, "empty")
    return made


@pytest.fixture(scope="session")
def daemon(repo_root: Path, repos: dict[str, FixtureRepo]) -> Iterator[GitDaemon]:
    with git_daemon(repo_root) as running:
        yield running


@pytest.fixture(scope="session")
def http_server(repo_root: Path, repos: dict[str, FixtureRepo]) -> Iterator[HttpGitServer]:
    with http_git_server(repo_root) as running:
        yield running


@pytest.fixture(scope="session")
def https_server(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[HttpGitServer, Path]]:
    with https_git_server(repo_root, tmp_path_factory.mktemp("tls")) as running:
        yield running


@pytest.fixture(scope="session")
def sshd(
    repos: dict[str, FixtureRepo], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SshServer]:
    with ssh_server(tmp_path_factory.mktemp("sshd")) as running:  # skips without sshd
        yield running


@pytest.fixture
def ssh_servers(tmp_path: Path) -> Iterator[Callable[[str | None], SshServer]]:
    """Starts sshd servers of this test's own (``forced_command`` runs for every
    connection); all stop at the test's end. Skips without sshd (fails in CI)."""
    with contextlib.ExitStack() as stack:
        started: list[SshServer] = []

        def start(forced_command: str | None = None) -> SshServer:
            workdir = tmp_path / f"sshd{len(started)}"
            started.append(stack.enter_context(ssh_server(workdir, forced_command)))
            return started[-1]

        yield start


@pytest.fixture
def server_program() -> Callable[[str], str]:
    """Finds an installed program by name (``ssh``, ``redis-cli``...): its path, or the
    test skipped without it (failed in CI)."""
    return server_programs.server_program


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def tmpdir_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Private clone directories go here, so a test can see that none is left."""
    work = tmp_path / "tmp"
    work.mkdir()
    monkeypatch.setenv("TMPDIR", str(work))
    return work


@pytest.fixture
def work_dir(tmp_path: Path) -> Path:
    """A VCS adapter's work directory, empty, so a test can see what is left in it."""
    path = tmp_path / "work"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def redis_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the session; tests keep apart by their own key names."""
    with redis_server(tmp_path_factory.mktemp("redis")) as running:
        yield running


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of this test's own, to restart or pause."""
    with redis_server(tmp_path / "redis") as running:
        yield running

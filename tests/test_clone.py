"""The dulwich adapter against real servers on 127.0.0.1: what a clone is, and how it fails."""

from __future__ import annotations

import logging
import os
import signal
import stat
import subprocess
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import trio
from dulwich.errors import ChecksumMismatch
from dulwich.object_format import DEFAULT_OBJECT_FORMAT

from clonegate import (
    ClonedSource,
    CloneSettings,
    Credential,
    DulwichVCS,
    ErrorKind,
    InvalidURLError,
    parse_repo_url,
)
from clonegate._adapters.git.pack_intake import _TrailingChecksum
from clonegate._adapters.workers import open_worker_pool
from clonegate.errors import (
    AuthenticationError,
    CloneCancelledError,
    CloneTimeoutError,
    EmptyRepositoryError,
    ProtocolError,
    RepositoryNotFoundError,
    StorageError,
    TransportError,
)

from .support.processes import pid_alive, reported_exit, worker_pids
from .support.proxy import ThrottlingProxy
from .support.repos import BIG_BLOB_BYTES, FixtureRepo, git
from .support.servers import (
    TOKEN,
    GitDaemon,
    HttpGitServer,
    SshServer,
    answer_garbage,
    free_port,
    git_daemon,
    never_answer,
    raw_tcp_server,
)


def _assert_shallow_single_branch(source: ClonedSource, repo: FixtureRepo) -> None:
    path = source.path
    assert source.commit == repo.head
    assert source.branch == repo.branch
    assert git("-C", str(path), "rev-parse", "HEAD") == repo.head
    assert git("-C", str(path), "rev-list", "--count", "HEAD") == "1"
    assert git("-C", str(path), "for-each-ref", "--format=%(refname)").splitlines() == [
        f"refs/heads/{repo.branch}",
        f"refs/remotes/origin/{repo.branch}",
    ]
    assert git("-C", str(path), "config", "remote.origin.fetch") == (
        f"+refs/heads/{repo.branch}:refs/remotes/origin/{repo.branch}"
    )
    assert (path / "shallow").read_text().strip() == repo.head


@pytest.mark.parametrize("transport", ["git", "http"])
async def test_shallow_single_branch_clone(
    transport: str,
    daemon: GitDaemon,
    http_server: HttpGitServer,
    repos: dict[str, FixtureRepo],
    work_dir: Path,
) -> None:
    url = (daemon if transport == "git" else http_server).url("basic")
    source = await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(url)
    try:
        _assert_shallow_single_branch(source, repos["basic"])
        assert source.url == url
        assert source.committed_at == datetime.fromtimestamp(
            repos["basic"].committed_at, timezone(timedelta(hours=2))
        )
        assert source.bytes_on_disk > 0
        assert not source.has_worktree
        assert git("-C", str(source.path), "config", "remote.origin.url") == url
        # The clone lives in a private directory of its own.
        assert source.owned_root is not None
        assert source.owned_root.parent == work_dir
        assert stat.S_IMODE(source.owned_root.stat().st_mode) == 0o700
    finally:
        await source.aclose()
    assert list(work_dir.iterdir()) == []
    await source.aclose()  # idempotent


async def test_the_remote_heads_branch_is_followed(
    daemon: GitDaemon, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    source = await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(daemon.url("trunk"))
    try:
        _assert_shallow_single_branch(source, repos["trunk"])
    finally:
        await source.aclose()


async def test_full_depth_and_checkout(
    daemon: GitDaemon, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    vcs = DulwichVCS(CloneSettings(depth=None, checkout=True, work_dir=work_dir))
    source = await vcs.clone(daemon.url("trunk"))
    try:
        assert source.has_worktree
        assert git("-C", str(source.path), "rev-list", "--count", "HEAD") == "5"
        assert not (source.path / ".git" / "shallow").exists()
        assert (source.path / "file4.txt").read_text() == "commit 4\n"
        assert git("-C", str(source.path), "status", "--porcelain") == ""
    finally:
        await source.aclose()


async def test_clone_into_a_chosen_destination(
    daemon: GitDaemon, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    vcs = DulwichVCS()
    destination = tmp_path / "here"
    source = await vcs.clone(daemon.url("basic"), destination)
    assert source.path == destination
    assert git("-C", str(destination), "rev-parse", "HEAD") == repos["basic"].head
    with pytest.raises(StorageError, match="already exists"):
        await vcs.clone(daemon.url("basic"), destination)
    assert destination.exists()  # a refused clone never touches what was there
    await source.aclose()
    assert not destination.exists()


async def test_local_paths_only_when_allowed(
    repo_root: Path, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    local = str(repo_root / "basic.git")
    for url in (local, f"file://{local}"):
        with pytest.raises(InvalidURLError, match="not allowed"):
            await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(url)
    source = await DulwichVCS(CloneSettings(work_dir=work_dir), allow_local=True).clone(
        f"file://{local}"
    )
    try:
        assert source.commit == repos["basic"].head
        assert source.branch == "main"
    finally:
        await source.aclose()


async def test_empty_repository(daemon: GitDaemon, work_dir: Path) -> None:
    with pytest.raises(EmptyRepositoryError, match="no commits") as caught:
        await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(daemon.url("empty"))
    assert caught.value.kind is ErrorKind.EMPTY
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize("transport", ["git", "http"])
async def test_missing_repository(
    transport: str, daemon: GitDaemon, http_server: HttpGitServer, work_dir: Path
) -> None:
    url = (daemon if transport == "git" else http_server).url("no-such-repo")
    with pytest.raises(RepositoryNotFoundError) as caught:
        await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(url)
    assert str(caught.value).startswith(f"{url}: repository not found")
    assert list(work_dir.iterdir()) == []


# ssh says so only in words ("Connection refused"): worker_errors reads them.
@pytest.mark.parametrize("scheme", ["git", "http", "ssh"])
async def test_connection_refused(
    scheme: str, work_dir: Path, server_program: Callable[[str], str]
) -> None:
    if scheme == "ssh":
        server_program("ssh")
    url = f"{scheme}://127.0.0.1:{free_port()}/x.git"
    with pytest.raises(TransportError, match="connection refused"):
        await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(url)
    assert list(work_dir.iterdir()) == []


# ssh says so only in words ("Could not resolve hostname"): worker_errors reads them.
@pytest.mark.parametrize("scheme", ["git", "https", "ssh"])
async def test_unknown_host(
    scheme: str, work_dir: Path, server_program: Callable[[str], str]
) -> None:
    if scheme == "ssh":
        server_program("ssh")
    with pytest.raises(TransportError, match="unknown host"):
        await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(
            f"{scheme}://no-such-host.invalid/x.git"
        )
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize("scheme", ["git", "http"])
async def test_silent_server_times_out(scheme: str, work_dir: Path) -> None:
    # The message proves the read timeout fired, not some other limit; the generous
    # bound only turns a hang (no read timeout at all) into a failure.
    with (
        raw_tcp_server(never_answer) as port,
        trio.fail_after(60),
        pytest.raises(CloneTimeoutError, match="1 s read timeout"),
    ):
        await DulwichVCS(CloneSettings(read_timeout=1, work_dir=work_dir)).clone(
            f"{scheme}://127.0.0.1:{port}/x.git"
        )
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize("scheme", ["git", "http"])
async def test_garbage_server(scheme: str, work_dir: Path) -> None:
    with raw_tcp_server(answer_garbage) as port, pytest.raises(ProtocolError) as caught:
        await DulwichVCS(CloneSettings(read_timeout=5, work_dir=work_dir)).clone(
            f"{scheme}://127.0.0.1:{port}/x.git"
        )
    assert caught.value.kind is ErrorKind.PROTOCOL
    assert "protocol" in caught.value.reason
    assert "b'" not in caught.value.reason  # words for people, not a Python repr
    assert list(work_dir.iterdir()) == []


async def test_authentication(
    https_server: tuple[HttpGitServer, Path],
    http_server: HttpGitServer,
    repos: dict[str, FixtureRepo],
    work_dir: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    server, ca_bundle = https_server
    vcs = DulwichVCS(CloneSettings(work_dir=work_dir, ca_bundle=ca_bundle))
    url = server.url("basic", private=True)
    host = f"127.0.0.1:{server.port}"
    token = Credential.token(TOKEN, host)
    with pytest.raises(AuthenticationError, match="authentication required") as required:
        await vcs.clone(url)
    with pytest.raises(AuthenticationError, match="authentication failed") as failed:
        await vcs.clone(url, credential=Credential.token("wrong-token-value", host))
    # A token inside the URL is a credential too, and is redacted wherever it is shown.
    in_url = server.url("basic", private=True, userinfo=f"x-access-token:{TOKEN}x")
    with pytest.raises(AuthenticationError) as failed_in_url:
        await vcs.clone(in_url)
    assert "***@" in str(failed_in_url.value)
    # A credential is for its own origin: https, that host, that port. Given for
    # another (here plain http on another port), the adapter refuses it unsent.
    with pytest.raises(InvalidURLError, match=r"bound to https://127\.0\.0\.1:"):
        await vcs.clone(http_server.url("basic", private=True), credential=token)

    source = await vcs.clone(url, credential=token)
    try:
        assert source.commit == repos["basic"].head
        config = (source.path / "config").read_text()
        assert TOKEN not in config
        assert f"url = {url}" in config
    finally:
        await source.aclose()
    with_userinfo = server.url("basic", private=True, userinfo=f"x-access-token:{TOKEN}")
    source = await vcs.clone(with_userinfo)
    try:
        assert TOKEN not in (source.path / "config").read_text()
        assert TOKEN not in repr(source)
        assert TOKEN not in source.url
    finally:
        await source.aclose()

    for error in (required.value, failed.value, failed_in_url.value):
        assert TOKEN not in str(error)
        assert TOKEN not in repr(error.args)
        assert "wrong-token-value" not in str(error)
    assert TOKEN not in caplog.text
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize(
    "url",
    [
        "https://bob:s3cr3t/with/slashes@git.example/org/r.git",
        "https://bob:s3cr3t@git.example:99999/org/r.git",
        "git://bob:s3cr3t with space@host/r.git",
        "https://bob:s3cr3t@",
    ],
)
async def test_secrets_in_invalid_urls_are_not_shown(url: str, work_dir: Path) -> None:
    with pytest.raises(InvalidURLError) as caught:
        await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(url)
    assert "s3cr3t" not in str(caught.value)


def test_scp_like_passwords_are_redacted() -> None:
    repo = parse_repo_url("bob:s3cr3t@github.com:org/r.git")
    assert repo.redacted == "bob:***@github.com:org/r.git"
    assert repo.without_credentials == "bob@github.com:org/r.git"


async def test_server_killed_mid_clone(
    repo_root: Path, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    with git_daemon(repo_root) as doomed:
        proxy = ThrottlingProxy(doomed.port)
        async with trio.open_nursery() as nursery:
            await nursery.start(proxy.serve)

            async def kill_when_transferring() -> None:
                await proxy.wait_forwarded(256 * 1024)
                doomed.kill()
                proxy.cut()  # what the dead server's kernel still held never arrives

            nursery.start_soon(kill_when_transferring)
            with pytest.raises(
                TransportError, match="connection broke during the transfer"
            ) as caught:
                await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(
                    f"git://127.0.0.1:{proxy.port}/big.git"
                )
            nursery.cancel_scope.cancel()
    assert proxy.forwarded < BIG_BLOB_BYTES  # really mid-transfer
    assert caught.value.kind is ErrorKind.CONNECTION_LOST  # a TransportError still
    assert list(work_dir.iterdir()) == []


async def test_on_ready_comes_after_the_worker_starts_and_before_the_clone(
    daemon: GitDaemon, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    proxy = ThrottlingProxy(daemon.port)
    at_ready: list[tuple[set[int], int, int]] = []
    # A pool of its own, not started yet: the clone has to start its zygote.
    async with open_worker_pool() as pool, trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)

        def ready() -> None:
            at_ready.append((worker_pids(), proxy.connections, pool.statistics().workers_started))

        source = await DulwichVCS(CloneSettings(work_dir=work_dir), pool=pool).clone(
            f"git://127.0.0.1:{proxy.port}/basic.git", on_ready=ready
        )
        started = pool.statistics().workers_started
        await source.aclose()
        nursery.cancel_scope.cancel()
    ((workers, connections, started_at_ready),) = at_ready  # called once
    assert len(workers) == 1  # a worker was running when the clone began,
    assert connections == 0  # the clone had not connected yet,
    assert started_at_ready == started == 1  # and it ran in that worker: no other started.
    assert not any(pid_alive(pid) for pid in workers)  # it ended with its job
    assert source.commit == repos["basic"].head
    assert proxy.connections == 1


async def test_clones_share_a_worker_until_one_fails(
    daemon: GitDaemon, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    # A fork and its teardown cost more CPU than a small clone (ADR 0003): clone after
    # clone runs in one served worker, which ends after a failed one.
    async with open_worker_pool() as pool:
        vcs = DulwichVCS(CloneSettings(work_dir=work_dir), pool=pool)
        for name in ("basic", "trunk", "basic"):
            source = await vcs.clone(daemon.url(name))
            assert source.commit == repos[name].head
            await source.aclose()
        (serving,) = worker_pids()
        assert pool.statistics().workers_started == 1
        with pytest.raises(RepositoryNotFoundError):
            await vcs.clone(daemon.url("no-such-repo"))
        await reported_exit(pool, serving)
        source = await vcs.clone(daemon.url("trunk"))
        await source.aclose()
        assert pool.statistics().workers_started == 2
    assert worker_pids() == set()


async def test_cancellation_mid_transfer_kills_the_worker_and_cleans_up(
    daemon: GitDaemon, work_dir: Path
) -> None:
    proxy = ThrottlingProxy(daemon.port)
    busy: set[int] = set()
    async with open_worker_pool() as pool, trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        with trio.fail_after(60), trio.CancelScope() as scope:

            async def cancel_when_transferring() -> None:
                nonlocal busy
                await proxy.wait_forwarded(256 * 1024)
                busy = worker_pids()
                scope.cancel()

            nursery.start_soon(cancel_when_transferring)
            await DulwichVCS(CloneSettings(work_dir=work_dir), pool=pool).clone(
                f"git://127.0.0.1:{proxy.port}/big.git"
            )
        forwarded_at_return = proxy.forwarded
        nursery.cancel_scope.cancel()
    assert scope.cancelled_caught
    # Cancelling stopped the transfer: it did not wait for the clone to finish. (How
    # fast it returns is measured in bench/bench_stop.py, not asserted here.)
    assert forwarded_at_return < BIG_BLOB_BYTES
    assert len(busy) == 1
    assert not any(pid_alive(pid) for pid in busy)
    assert list(work_dir.iterdir()) == []


async def test_worker_killed_from_outside(daemon: GitDaemon, work_dir: Path) -> None:
    proxy = ThrottlingProxy(daemon.port)
    async with open_worker_pool() as pool, trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)

        async def kill_the_busy_worker() -> None:
            await proxy.wait_forwarded(256 * 1024)
            (busy,) = worker_pids()
            os.kill(busy, signal.SIGKILL)

        nursery.start_soon(kill_the_busy_worker)
        with pytest.raises(CloneCancelledError, match="worker process died"):
            await DulwichVCS(CloneSettings(work_dir=work_dir), pool=pool).clone(
                f"git://127.0.0.1:{proxy.port}/big.git"
            )
        nursery.cancel_scope.cancel()
    assert list(work_dir.iterdir()) == []


async def test_unusable_work_dir(daemon: GitDaemon, tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="cannot create a work directory"):
        await DulwichVCS(CloneSettings(work_dir=tmp_path / "missing")).clone(daemon.url("basic"))
    with pytest.raises(StorageError, match="no such directory"):
        await DulwichVCS().clone(daemon.url("basic"), tmp_path / "missing" / "here")


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("", "empty URL"),
        ("ftp://example.com/x.git", "unsupported scheme 'ftp'"),
        ("https://example.com", "no repository path"),
        ("https://example.com:99999/x", "malformed URL"),
        ("http://exa mple.com/x", "whitespace"),
        ("just words", "whitespace"),
    ],
)
async def test_invalid_urls_fail_before_any_work(url: str, reason: str, work_dir: Path) -> None:
    with pytest.raises(InvalidURLError, match=reason):
        await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(url)
    assert list(work_dir.iterdir()) == []


def test_options_are_validated() -> None:
    for bad in ({"depth": 0}, {"depth": True}, {"read_timeout": 0}, {"connect_timeout": -1}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            CloneSettings(**bad)


async def test_https_with_a_private_ca(
    https_server: tuple[HttpGitServer, Path], repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    server, ca_bundle = https_server
    url = server.url("basic", private=True)
    token = Credential.token(TOKEN, f"127.0.0.1:{server.port}")
    with pytest.raises(TransportError, match=r"certificate verification failed") as refused:
        await DulwichVCS(CloneSettings(work_dir=work_dir)).clone(url, credential=token)
    assert "--ca-bundle FILE" in refused.value.reason  # what to do about it (issue 38)
    source = await DulwichVCS(CloneSettings(ca_bundle=ca_bundle, work_dir=work_dir)).clone(
        url, credential=token
    )
    try:
        _assert_shallow_single_branch(source, repos["basic"])
        assert TOKEN not in (source.path / "config").read_text()
    finally:
        await source.aclose()
    assert list(work_dir.iterdir()) == []


async def test_ssh(
    sshd: SshServer, repo_root: Path, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    vcs = DulwichVCS(CloneSettings(ssh_command=sshd.ssh_command, work_dir=work_dir))
    source = await vcs.clone(sshd.url(repo_root, "trunk"))
    try:
        _assert_shallow_single_branch(source, repos["trunk"])
    finally:
        await source.aclose()
    with pytest.raises(RepositoryNotFoundError):
        await vcs.clone(sshd.url(repo_root, "no-such-repo"))
    # No key the server accepts, and BatchMode: a clear failure, never a prompt.
    stranger = DulwichVCS(
        CloneSettings(
            ssh_command=sshd.ssh_command.replace("client_ed25519", "no-such-key"), work_dir=work_dir
        )
    )
    with pytest.raises(AuthenticationError, match="permission denied"):
        await stranger.clone(sshd.url(repo_root, "trunk"))
    # An unknown host key is refused, not accepted blindly.
    trusting_nobody = DulwichVCS(
        CloneSettings(
            ssh_command=sshd.ssh_command.replace("known_hosts", "empty_known_hosts"),
            work_dir=work_dir,
        )
    )
    with pytest.raises(TransportError, match="host key verification failed"):
        await trusting_nobody.clone(sshd.url(repo_root, "trunk"))
    assert list(work_dir.iterdir()) == []


async def test_cancelling_an_ssh_clone_kills_the_ssh_process(
    tmp_path: Path, work_dir: Path
) -> None:
    # A stand-in for ssh that reports its pid through a FIFO, then stalls forever.
    fifo = tmp_path / "pid"
    os.mkfifo(fifo)
    fake_ssh = tmp_path / "fake-ssh"
    fake_ssh.write_text(f"#!/bin/sh\necho $$ > {fifo}\nexec sleep 300\n")
    fake_ssh.chmod(0o755)
    vcs = DulwichVCS(CloneSettings(ssh_command=str(fake_ssh), work_dir=work_dir))
    async with trio.open_nursery() as nursery:
        nursery.start_soon(vcs.clone, "ssh://git@127.0.0.1/repo.git")
        pid = int(await trio.to_thread.run_sync(fifo.read_text))
        assert pid_alive(pid)
        nursery.cancel_scope.cancel()
    # The worker is dead; the kernel kills its ssh child at once (pdeathsig). A pidfd
    # becomes readable when that process exits.
    pidfd = os.pidfd_open(pid)
    try:
        with trio.fail_after(2):
            await trio.lowlevel.wait_readable(pidfd)
    finally:
        os.close(pidfd)
    assert list(work_dir.iterdir()) == []


def test_the_pack_checksum_is_checked_as_the_pack_arrives(repo_root: Path) -> None:
    """Every byte counts, whatever the chunks: one flipped byte fails the check."""
    pack = subprocess.run(
        ["git", "-C", str(repo_root / "big.git"), "pack-objects", "--revs", "--all", "--stdout"],
        input=b"",
        capture_output=True,
        check=True,
    ).stdout
    for corrupt in (False, True):
        data = bytearray(pack)
        if corrupt:
            data[len(data) // 2] ^= 1
        checksum = _TrailingChecksum(DEFAULT_OBJECT_FORMAT)
        for start in range(0, len(data), 7919):  # chunks that split the trailer too
            checksum.update(bytes(data[start : start + 7919]))
        if corrupt:
            with pytest.raises(ChecksumMismatch):
                checksum.verify()
        else:
            checksum.verify()

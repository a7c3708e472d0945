"""``DulwichVCS.remote_head`` against real servers on 127.0.0.1: a remote's HEAD, asked
without cloning (issue 18), under the clone's own rules.

What is asserted comes from the servers' side where it can: the bytes a relay saw
each way (no ``want``, no pack), the requests an https server recorded, whether a
connection was made at all, and which worker processes are still alive.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import CloneSettings, Credential, DulwichVCS, ErrorKind, InvalidURLError
from clonegate._adapters.workers import open_worker_pool
from clonegate._domain.vcs import VCS, RemoteHead
from clonegate.errors import (
    AuthenticationError,
    CloneCancelledError,
    CloneTimeoutError,
    EmptyRepositoryError,
    InvalidRepositoryError,
    RepositoryNotFoundError,
    TooLargeError,
    TooSlowError,
)

from .support.envelope_servers import Counter, envelope_breaker
from .support.hostile_servers import (
    EXPECTED,
    _pkt,
    _read_pkt,
    recording_https,
    renaming_git_daemon,
    tls_contexts,
)
from .support.processes import pid_alive, reported_exit, worker_pids
from .support.proxy import OnLoopback
from .support.repos import FixtureRepo, git
from .support.servers import (
    TOKEN,
    GitDaemon,
    HttpGitServer,
    SshServer,
    git_daemon,
    never_answer,
    raw_tcp_server,
)

MiB = 1 << 20


def served_head(repo_root: Path, name: str) -> str:
    return git("-C", str(repo_root / f"{name}.git"), "rev-parse", "HEAD")


class RecordingRelay(OnLoopback):
    """A TCP relay to ``upstream_port`` in the test's trio loop, keeping every byte.

    Each side's bytes are recorded before they are passed on: whatever the client
    received, ``from_server`` holds, and whatever reached the server, ``from_client``.
    """

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.from_client = bytearray()
        self.from_server = bytearray()
        self.connections = 0
        self.port = 0

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}.git"

    async def _handle(self, client: trio.SocketStream) -> None:
        self.connections += 1
        server = await trio.open_tcp_stream("127.0.0.1", self.upstream_port)
        async with client, server, trio.open_nursery() as nursery:
            nursery.start_soon(self._pipe, client, server, self.from_client)
            nursery.start_soon(self._pipe, server, client, self.from_server)

    @staticmethod
    async def _pipe(source: trio.SocketStream, sink: trio.SocketStream, record: bytearray) -> None:
        try:
            while data := await source.receive_some(65536):
                record += data
                await sink.send_all(data)
            await sink.send_eof()
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass


class StalledListing:
    """A git:// server that sends the first half of a ref advertisement, then nothing.

    ``listing`` is set (in the test's trio loop) once that half is sent: a client is
    then blocked mid-listing. ``closed`` is set when the client's side of the
    connection is gone.
    """

    def __init__(self) -> None:
        self.listing = trio.Event()
        self.closed = threading.Event()
        self._token = trio.lowlevel.current_trio_token()

    def __call__(self, conn: socket.socket) -> None:
        try:
            _read_pkt(conn)  # "git-upload-pack /path\0host=...\0"
            line = _pkt(b"a" * 40 + b" HEAD\0symref=HEAD:refs/heads/main agent=git/2.43\n")
            conn.sendall(line[: len(line) // 2])
            trio.from_thread.run_sync(self.listing.set, trio_token=self._token)
            while conn.recv(65536):
                pass
        except OSError:
            pass
        finally:
            self.closed.set()


@contextmanager
def stalled_listing() -> Iterator[tuple[StalledListing, str]]:
    server = StalledListing()
    with raw_tcp_server(server) as port:
        yield server, f"git://127.0.0.1:{port}/stalled.git"


# --- what a listing returns ---------------------------------------------------------


@pytest.mark.parametrize("name", ["basic", "trunk"])
@pytest.mark.parametrize("transport", ["git", "http", "https", "file", "path"])
async def test_the_head_of_each_transport(
    transport: str,
    name: str,
    daemon: GitDaemon,
    http_server: HttpGitServer,
    https_server: tuple[HttpGitServer, Path],
    repo_root: Path,
    repos: dict[str, FixtureRepo],
    work_dir: Path,
) -> None:
    tls, ca_bundle = https_server
    local = str(repo_root / f"{name}.git")
    url = {
        "git": daemon.url(name),
        "http": http_server.url(name),
        "https": tls.url(name),
        "file": f"file://{local}",
        "path": local,
    }[transport]
    vcs: VCS = DulwichVCS(CloneSettings(ca_bundle=ca_bundle, work_dir=work_dir), allow_local=True)
    head = await vcs.remote_head(url)
    # "trunk" is a repository whose default branch is not main.
    assert head == RemoteHead(branch=repos[name].branch, commit=served_head(repo_root, name))
    assert list(work_dir.iterdir()) == []


async def test_over_ssh(sshd: SshServer, repo_root: Path, repos: dict[str, FixtureRepo]) -> None:
    vcs = DulwichVCS(CloneSettings(ssh_command=sshd.ssh_command))
    head = await vcs.remote_head(sshd.url(repo_root, "trunk"))
    assert head == RemoteHead(branch="trunk", commit=served_head(repo_root, "trunk"))
    with pytest.raises(RepositoryNotFoundError):
        await vcs.remote_head(sshd.url(repo_root, "no-such-repo"))


async def test_a_detached_head_has_no_branch(tmp_path: Path) -> None:
    served = tmp_path / "served"
    served.mkdir()
    bare = served / "detached.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    (work / "f.txt").write_text("x\n")
    git("add", "-A", cwd=work)
    git("commit", "-q", "-m", "one", cwd=work)
    git("push", "-q", str(bare), "main", cwd=work)
    commit = git("rev-parse", "HEAD", cwd=work)
    git("-C", str(bare), "update-ref", "--no-deref", "HEAD", commit)
    with git_daemon(served) as daemon:
        head = await DulwichVCS(allow_local=True).remote_head(daemon.url("detached"))
        local = await DulwichVCS(allow_local=True).remote_head(str(bare))
    assert head == local == RemoteHead(branch="", commit=commit)


@pytest.mark.parametrize(
    ("advertised", "expected"),
    [(b"release/2024", "release/2024"), (b"bad..name", None), (b"topic.lock", None)],
)
async def test_the_branch_is_the_servers_head_symref(
    advertised: bytes, expected: str | None, repo_root: Path, repos: dict[str, FixtureRepo]
) -> None:
    """Over protocol v0 (git upload-pack, relayed), with HEAD's branch renamed in the
    advertisement: a name git would refuse is the repository's fault, as in a clone."""
    with renaming_git_daemon(repo_root / "basic.git", advertised) as port:
        url = f"git://127.0.0.1:{port}/basic.git"
        if expected is None:
            with pytest.raises(InvalidRepositoryError, match="HEAD names an invalid branch"):
                await DulwichVCS().remote_head(url)
            return
        head = await DulwichVCS().remote_head(url)
    assert head == RemoteHead(branch=expected, commit=repos["basic"].head)


# --- no pack, nothing on disk --------------------------------------------------------


async def test_no_pack_is_asked_for_or_sent_over_git(
    daemon: GitDaemon, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    listing, cloning = RecordingRelay(daemon.port), RecordingRelay(daemon.port)
    vcs = DulwichVCS(CloneSettings(work_dir=work_dir))
    async with trio.open_nursery() as nursery:
        await nursery.start(listing.serve)
        await nursery.start(cloning.serve)
        head = await vcs.remote_head(listing.url("basic"))
        # The control: a clone through the same kind of relay does show a want and a
        # pack, so the assertions below can fail.
        source = await vcs.clone(cloning.url("basic"))
        await source.aclose()
        nursery.cancel_scope.cancel()
    assert head.commit == repos["basic"].head
    assert cloning.connections == 1
    assert b"command=fetch" in cloning.from_client or b"want " in cloning.from_client
    assert b"PACK" in cloning.from_server

    assert listing.connections == 1
    # Only HEAD was asked for (protocol v2's ls-refs, as git daemon speaks it)...
    assert b"command=ls-refs" in listing.from_client
    assert b"ref-prefix HEAD" in listing.from_client
    assert repos["basic"].head.encode() in listing.from_server
    # ...and nothing else: no fetch command or want, and not a byte of pack.
    assert b"command=fetch" not in listing.from_client
    assert b"want " not in listing.from_client
    assert b"PACK" not in listing.from_server
    assert len(listing.from_server) < 1024  # the HEAD line, capabilities, flushes
    assert list(work_dir.iterdir()) == []


async def test_no_pack_is_asked_for_over_https(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path, work_dir: Path
) -> None:
    context, ca_file = tls_contexts(tmp_path / "tls")
    vcs = DulwichVCS(CloneSettings(ca_bundle=ca_file, work_dir=work_dir))
    with recording_https(repo_root, context) as server:
        head = await vcs.remote_head(server.url("/trunk.git"))
        listed = [r.path for r in server.requests]
        source = await vcs.clone(server.url("/trunk.git"))  # the control
        await source.aclose()
        cloned = [r.path for r in server.requests[len(listed) :]]
    assert head == RemoteHead(branch="trunk", commit=repos["trunk"].head)
    # The ref advertisement only; the pack would come in answer to a POST to
    # git-upload-pack, as it does for the clone.
    assert listed == ["/trunk.git/info/refs?service=git-upload-pack"]
    assert "/trunk.git/git-upload-pack?" in cloned
    assert list(work_dir.iterdir()) == []


# --- failures, as a clone's ----------------------------------------------------------


@pytest.mark.parametrize("transport", ["git", "http", "path"])
async def test_missing_repository(
    transport: str, daemon: GitDaemon, http_server: HttpGitServer, repo_root: Path
) -> None:
    url = {
        "git": daemon.url("no-such-repo"),
        "http": http_server.url("no-such-repo"),
        "path": str(repo_root / "no-such-repo.git"),
    }[transport]
    with pytest.raises(RepositoryNotFoundError) as caught:
        await DulwichVCS(allow_local=True).remote_head(url)
    assert caught.value.kind is ErrorKind.NOT_FOUND
    assert "repository not found" in str(caught.value)


@pytest.mark.parametrize("transport", ["git", "http", "file"])
async def test_empty_repository(
    transport: str, daemon: GitDaemon, http_server: HttpGitServer, repo_root: Path
) -> None:
    url = {
        "git": daemon.url("empty"),  # protocol v2: HEAD listed "unborn"
        "http": http_server.url("empty"),  # v0: HEAD not listed
        "file": f"file://{repo_root / 'empty.git'}",
    }[transport]
    with pytest.raises(EmptyRepositoryError, match="no commits") as caught:
        await DulwichVCS(allow_local=True).remote_head(url)
    assert caught.value.kind is ErrorKind.EMPTY


async def test_listings_share_a_worker_until_one_fails(
    daemon: GitDaemon, repo_root: Path, repos: dict[str, FixtureRepo]
) -> None:
    # A listing is ~4 ms of work and a fresh worker ~10 ms of CPU: many listings run in
    # one served worker, which ends after a failed one (ADR 0016).
    async with open_worker_pool() as pool:
        vcs = DulwichVCS(pool=pool)
        for _ in range(10):
            head = await vcs.remote_head(daemon.url("basic"))
            assert head.commit == served_head(repo_root, "basic")
        (serving,) = worker_pids()
        assert pool.statistics().workers_started == 1
        with pytest.raises(RepositoryNotFoundError):
            await vcs.remote_head(daemon.url("no-such-repo"))
        await reported_exit(pool, serving)
        assert (await vcs.remote_head(daemon.url("trunk"))).branch == repos["trunk"].branch
        assert pool.statistics().workers_started == 2
    assert worker_pids() == set()


async def test_local_paths_only_when_allowed(repo_root: Path) -> None:
    local = str(repo_root / "basic.git")
    for url in (local, f"file://{local}"):
        with pytest.raises(InvalidURLError, match="not allowed"):
            await DulwichVCS().remote_head(url)


async def test_credentials_follow_the_clones_rules(
    repo_root: Path, repos: dict[str, FixtureRepo], tmp_path: Path
) -> None:
    context, ca_file = tls_contexts(tmp_path / "tls")
    vcs = DulwichVCS(CloneSettings(ca_bundle=ca_file))
    with recording_https(repo_root, context) as server:
        url = server.url("/private/basic.git")
        host = f"127.0.0.1:{server.port}"
        token = Credential.token(TOKEN, host)

        # Bound to another origin (another port): refused before anything is sent.
        elsewhere = Credential.token(TOKEN, f"127.0.0.1:{server.port + 1}")
        with pytest.raises(InvalidURLError, match=r"bound to https://127\.0\.0\.1:") as refused:
            await vcs.remote_head(url, credential=elsewhere)
        assert server.requests == []

        with pytest.raises(AuthenticationError, match="authentication required") as required:
            await vcs.remote_head(url)
        with pytest.raises(AuthenticationError, match="authentication failed") as failed:
            await vcs.remote_head(url, credential=Credential.token("wrong-token-value", host))
        wrong_in_url = server.url("/private/basic.git", userinfo=f"x-access-token:{TOKEN}x")
        with pytest.raises(AuthenticationError) as failed_in_url:
            await vcs.remote_head(wrong_in_url)

        before = len(server.requests)
        head = await vcs.remote_head(url, credential=token)
        with_token = [r.authorization for r in server.requests[before:]]
        right_in_url = server.url("/private/basic.git", userinfo=f"x-access-token:{TOKEN}")
        assert await vcs.remote_head(right_in_url) == head
    assert head == RemoteHead(branch="main", commit=repos["basic"].head)
    assert str(failed_in_url.value).startswith(
        f"https://***@{host}/private/basic.git: authentication failed"
    )
    for error in (refused.value, required.value, failed.value, failed_in_url.value):
        assert TOKEN not in str(error)
        assert TOKEN not in repr(error.args)
        assert "wrong-token-value" not in str(error)
    # Sent only in answer to the server's challenge, as a clone sends them.
    assert with_token == [None, EXPECTED]


async def test_secrets_in_invalid_urls_are_not_shown() -> None:
    with pytest.raises(InvalidURLError) as caught:
        await DulwichVCS().remote_head("https://bob:s3cr3t@git.example:99999/org/r.git")
    assert "s3cr3t" not in str(caught.value)


async def test_too_many_refs_are_refused(work_dir: Path) -> None:
    """3 million refs: stopped at the advertisement's cap on lines (two per allowed ref,
    reached before its 32 MiB), long before the end."""
    counter = Counter()
    with (
        envelope_breaker("refs", counter) as port,
        pytest.raises(TooLargeError, match="list of refs passed 200064 lines") as caught,
    ):
        await DulwichVCS(CloneSettings(work_dir=work_dir)).remote_head(
            f"git://127.0.0.1:{port}/refs.git"
        )
    assert caught.value.kind is ErrorKind.TOO_LARGE
    assert counter.sent < 512 * MiB  # stopped near the limit, not at the end of the list


async def test_too_many_refs_in_a_local_repository_are_counted(tmp_path: Path) -> None:
    """A local listing is complete (no server filters it to HEAD): the count is capped."""
    bare = tmp_path / "many.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    blob = git("-C", str(bare), "hash-object", "-w", "/dev/null")
    refs = 100_001  # one past the envelope's max_advertised_refs
    lines = "".join(f"{blob} refs/tags/t{n:06d}\n" for n in range(refs))
    (bare / "packed-refs").write_text("# pack-refs with: peeled fully-peeled sorted \n" + lines)
    with pytest.raises(TooLargeError, match=f"advertised {refs} refs, more than the limit"):
        await DulwichVCS(allow_local=True).remote_head(str(bare))


async def test_a_trickle_is_too_slow(work_dir: Path) -> None:
    counter = Counter()
    vcs = DulwichVCS(CloneSettings(low_speed_limit=1000, low_speed_time=1.0, work_dir=work_dir))
    with (
        envelope_breaker("trickle", counter) as port,
        pytest.raises(TooSlowError, match="less than 1000 bytes/s") as caught,
    ):
        await vcs.remote_head(f"git://127.0.0.1:{port}/trickle.git")
    assert caught.value.kind is ErrorKind.TOO_SLOW
    assert counter.sent > 0  # it did answer: the low-speed limit stopped it, not a timeout


@pytest.mark.parametrize("scheme", ["git", "http"])
async def test_a_silent_server_times_out(scheme: str) -> None:
    # The message proves the read timeout fired; fail_after only turns a hang into a failure.
    with (
        raw_tcp_server(never_answer) as port,
        trio.fail_after(60),
        pytest.raises(CloneTimeoutError, match="1 s read timeout"),
    ):
        await DulwichVCS(CloneSettings(read_timeout=1)).remote_head(
            f"{scheme}://127.0.0.1:{port}/x.git"
        )


# --- cancellation and killed workers -------------------------------------------------


async def test_cancellation_mid_listing_kills_the_worker(work_dir: Path) -> None:
    busy: set[int] = set()
    with stalled_listing() as (server, url):
        async with open_worker_pool() as pool, trio.open_nursery() as nursery:
            with trio.fail_after(60), trio.CancelScope() as scope:

                async def cancel_when_listing() -> None:
                    await server.listing.wait()
                    busy.update(worker_pids())
                    scope.cancel()

                nursery.start_soon(cancel_when_listing)
                await DulwichVCS(CloneSettings(work_dir=work_dir), pool=pool).remote_head(url)
            # The pool learns of the exit from its zygote: wait for that message.
            while pool.statistics().workers_running:
                await trio.testing.wait_all_tasks_blocked()
            stats = pool.statistics()
        # The worker's end closed the connection, and the server saw it.
        assert await trio.to_thread.run_sync(server.closed.wait, 60)
    assert scope.cancelled_caught
    assert len(busy) == 1
    assert not any(pid_alive(pid) for pid in busy)
    assert stats.workers_started == 1
    assert stats.workers_running == frozenset()
    assert worker_pids() == set()
    assert list(work_dir.iterdir()) == []


async def test_a_worker_killed_from_outside_is_reported(work_dir: Path) -> None:
    with stalled_listing() as (server, url), trio.fail_after(60):
        async with open_worker_pool() as pool, trio.open_nursery() as nursery:

            async def kill_when_listing() -> None:
                await server.listing.wait()
                (busy,) = worker_pids()
                os.kill(busy, signal.SIGKILL)

            nursery.start_soon(kill_when_listing)
            with pytest.raises(CloneCancelledError, match="ref listing's worker process died"):
                await DulwichVCS(CloneSettings(work_dir=work_dir), pool=pool).remote_head(url)
    assert list(work_dir.iterdir()) == []

"""Servers that stop in the middle of their answer: a connection lost, never a protocol error.

A git server killed while it lists its refs ends the stream wherever it was: inside a
pkt-line's length prefix, inside the line, between lines, or before its first byte.
git itself says "the remote end hung up unexpectedly" in each case, and so does
clonegate (``connection_lost``, retried; ``transport`` until issue 43): the server did
not speak another protocol, it stopped speaking. Nor is a silent close a missing
repository: git daemon says so in an ``ERR`` line, and closes without a word when it
is killed or has too many connections.

The servers here send a real ``git upload-pack --advertise-refs`` answer cut at a
chosen byte, so each cut is exact and the same on every run.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from clonegate import CloneError, CloneSettings, DulwichVCS, ErrorKind
from clonegate._adapters.git.worker_errors import classify

from .support.repos import FixtureRepo
from .support.servers import git_daemon, raw_tcp_server, read_request_head

_HUNG_UP = "the server hung up"
_MID_ANSWER = "the connection ended in the middle of the server's answer"
_MID_TRANSFER = "the connection broke during the transfer"


def _advertisement(repo_root: Path) -> bytes:
    return subprocess.run(
        ["git", "upload-pack", "--advertise-refs", str(repo_root / "basic.git")],
        check=True,
        capture_output=True,
        env={"GIT_PROTOCOL": "", "PATH": "/usr/bin:/bin"},  # protocol v0 whatever the caller's
    ).stdout


def _pkt_ends(stream: bytes) -> list[int]:
    """The offset just past each pkt-line of ``stream`` (a flush-pkt is four bytes)."""
    ends, at = [], 0
    while at < len(stream):
        size = int(stream[at : at + 4], 16)
        at += max(size, 4)
        ends.append(at)
    return ends


def _cuts(stream: bytes) -> dict[str, tuple[int, bool]]:
    """Where to cut ``stream``, each with whether the cut is between two pkt-lines."""
    ends = _pkt_ends(stream)
    first, flush = ends[0], ends[-2]  # the last pkt-line before the flush ends at ends[-2]
    return {
        "before the first byte": (0, True),
        "inside the first length prefix": (2, False),
        "after the first length prefix": (4, False),
        "inside the first line": (first - 7, False),
        "after the first line": (first, True),
        "inside the last line": (flush - 5, False),
        "before the flush": (flush, True),
    }


def _drain_and_close(conn: socket.socket) -> None:
    # Read what the client still sends until it closes: closing with unread bytes
    # would reset the connection (an RST), and the cut under test is a clean end.
    conn.shutdown(socket.SHUT_WR)
    while conn.recv(65536):
        pass


def _git_cut(answer: bytes) -> Callable[[socket.socket], None]:
    def serve(conn: socket.socket) -> None:
        try:
            size = int(conn.recv(4, socket.MSG_WAITALL), 16)  # the git:// request line
            conn.recv(size - 4, socket.MSG_WAITALL)
            conn.sendall(answer)
            _drain_and_close(conn)
        except OSError:
            pass

    return serve


def _http_cut(body: bytes, length: int) -> Callable[[socket.socket], None]:
    """Answers the ref listing's GET with ``body`` though the headers promise ``length``
    bytes; any other request (the clone's POST) is closed without a word."""
    head = (
        b"HTTP/1.1 200 OK\r\n"
        b"Content-Type: application/x-git-upload-pack-advertisement\r\n"
        b"Content-Length: %d\r\n\r\n" % length
    )

    def serve(conn: socket.socket) -> None:
        try:
            if read_request_head(conn).startswith(b"GET "):
                conn.sendall(head + body)
            _drain_and_close(conn)
        except OSError:
            pass

    return serve


async def _outcome(vcs: DulwichVCS, op: str, url: str) -> tuple[ErrorKind | None, str]:
    try:
        if op == "clone":
            await vcs.clone(url)
        else:
            await vcs.remote_head(url)
    except CloneError as failure:
        return failure.kind, failure.reason
    return None, "ok"


@pytest.mark.parametrize("op", ["clone", "remote_head"])
async def test_a_git_daemon_that_stops_mid_answer(
    op: str, repo_root: Path, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    advertisement = _advertisement(repo_root)
    vcs = DulwichVCS(CloneSettings(read_timeout=10, work_dir=work_dir))
    seen, expected = {}, {}
    for where, (cut, between_lines) in _cuts(advertisement).items():
        with raw_tcp_server(_git_cut(advertisement[:cut])) as port:
            seen[where] = await _outcome(vcs, op, f"git://127.0.0.1:{port}/basic.git")
        expected[where] = (ErrorKind.CONNECTION_LOST, _HUNG_UP if between_lines else _MID_ANSWER)
    assert seen == expected
    # The whole listing, then nothing: the listing alone succeeds, and proves the
    # bytes cut above are a valid answer; a clone breaks once it asked for objects.
    with raw_tcp_server(_git_cut(advertisement)) as port:
        outcome = await _outcome(vcs, op, f"git://127.0.0.1:{port}/basic.git")
    if op == "clone":
        assert outcome == (ErrorKind.CONNECTION_LOST, _MID_TRANSFER)
    else:
        assert outcome == (None, "ok")
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize("op", ["clone", "remote_head"])
async def test_a_full_git_daemon_is_no_missing_repository(
    op: str, repo_root: Path, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    # git daemon at --max-connections closes a new connection without a word. The
    # holder's request is answered first, so its upload-pack is alive while we ask.
    with (
        git_daemon(repo_root, None, "--max-connections=1") as full,
        socket.create_connection(("127.0.0.1", full.port)) as holder,
    ):
        holder.settimeout(30)  # a daemon that never answers fails the test, not hangs it
        request = b"git-upload-pack /basic.git\0host=127.0.0.1\0"
        holder.sendall(b"%04x" % (len(request) + 4) + request)
        assert holder.recv(65536)
        vcs = DulwichVCS(CloneSettings(read_timeout=10, work_dir=work_dir))
        outcome = await _outcome(vcs, op, full.url("basic"))
    # It closes with the request unread, which resets the connection, unless the
    # request had not arrived yet.
    assert outcome in {
        (ErrorKind.CONNECTION_LOST, "the connection was reset by the server"),
        (ErrorKind.CONNECTION_LOST, _HUNG_UP),
    }


@pytest.mark.parametrize("op", ["clone", "remote_head"])
async def test_an_http_server_that_stops_mid_answer(
    op: str, repo_root: Path, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    body = b"001e# service=git-upload-pack\n0000" + _advertisement(repo_root)
    vcs = DulwichVCS(CloneSettings(read_timeout=10, work_dir=work_dir))
    cuts = {where: (cut + 34, between) for where, (cut, between) in _cuts(body[34:]).items()}
    seen = {}
    for where, (cut, _between_lines) in cuts.items():
        with raw_tcp_server(_http_cut(body[:cut], len(body))) as port:
            seen[where] = await _outcome(vcs, op, f"http://127.0.0.1:{port}/basic.git")
    # Over http the body's length is known: any cut is an answer ended early.
    assert seen == dict.fromkeys(cuts, (ErrorKind.CONNECTION_LOST, _MID_ANSWER))
    with raw_tcp_server(_http_cut(body, len(body))) as port:
        outcome = await _outcome(vcs, op, f"http://127.0.0.1:{port}/basic.git")
    if op == "clone":
        assert outcome[0] is ErrorKind.CONNECTION_LOST, outcome
    else:
        assert outcome == (None, "ok")
    assert list(work_dir.iterdir()) == []


class _Limits:
    connect_timeout = read_timeout = 1.0
    max_memory = max_file_size = 1 << 30


@pytest.mark.parametrize(
    "message",
    [
        # Counts that hold "404" are not a server's "404 Not Found".
        "Length of pkt read 0404 does not match length prefix 0fff",
        "Invalid pkt-line length prefix: b'404'",
        # A prefix cut after a backslash: the quoted bytes end at the second quote.
        "Invalid pkt-line length prefix: b'0\\\\'",
    ],
)
@pytest.mark.parametrize("mid_transfer", [False, True])
def test_dulwichs_words_for_a_cut_stream(message: str, mid_transfer: bool) -> None:
    from dulwich.errors import GitProtocolError

    kind, reason = classify(
        GitProtocolError(message), _Limits(), has_credentials=False, mid_transfer=mid_transfer
    )
    assert kind is ErrorKind.CONNECTION_LOST
    assert reason == (_MID_TRANSFER if mid_transfer else _MID_ANSWER)


@pytest.mark.parametrize(
    "message",
    [
        "Invalid pkt-line length prefix: b'\\x00\\xffth'",
        "Invalid pkt-line length prefix: b'0\\\\1x'",
    ],
)
def test_four_bytes_that_are_no_length_are_a_protocol_error(message: str) -> None:
    from dulwich.errors import GitProtocolError

    kind, reason = classify(
        GitProtocolError(message), _Limits(), has_credentials=False, mid_transfer=False
    )
    assert kind is ErrorKind.PROTOCOL
    assert reason == "git protocol error: Invalid pkt-line length prefix"  # no repr

"""Servers that stop in the middle of their answer: a transport failure, never a protocol one.

A git server killed while it lists its refs ends the stream wherever it was: inside a
pkt-line's length prefix, inside the line, or between lines. git itself says "the
remote end hung up unexpectedly" in each case, and so does clonegate (``transport``):
the server did not speak another protocol, it stopped speaking. Only a server that
closed without a single byte reads as git daemon's answer for a path it does not serve
(``not_found``).

The servers here send a real ``git upload-pack --advertise-refs`` answer cut at a
chosen byte, so each cut is exact and the same on every run.
"""

from __future__ import annotations

import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from clonegate import CloneError, DulwichVCS, ErrorKind

from .servers import FixtureRepo, raw_tcp_server, read_request_head

_HUNG_UP = "the server hung up"
_MID_ANSWER = "the connection ended in the middle of the server's answer"
_MID_TRANSFER = "the connection broke during the transfer"


def _advertisement(repo_root: Path) -> bytes:
    return subprocess.run(
        ["git", "upload-pack", "--advertise-refs", str(repo_root / "basic.git")],
        check=True,
        capture_output=True,
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
    vcs = DulwichVCS(read_timeout=10, work_dir=work_dir)
    seen = {}
    for where, (cut, between_lines) in _cuts(advertisement).items():
        with raw_tcp_server(_git_cut(advertisement[:cut])) as port:
            seen[where] = await _outcome(vcs, op, f"git://127.0.0.1:{port}/basic.git")
        assert seen[where] == (
            ErrorKind.TRANSPORT,
            _HUNG_UP if between_lines else _MID_ANSWER,
        ), where
    # Not a word at all is what git daemon says for a path it does not serve.
    with raw_tcp_server(_git_cut(b"")) as port:
        kind, reason = await _outcome(vcs, op, f"git://127.0.0.1:{port}/basic.git")
    assert kind is ErrorKind.NOT_FOUND, reason
    # The whole listing, then nothing: the listing alone succeeds, and proves the
    # bytes cut above are a valid answer; a clone breaks once it asked for objects.
    with raw_tcp_server(_git_cut(advertisement)) as port:
        outcome = await _outcome(vcs, op, f"git://127.0.0.1:{port}/basic.git")
    if op == "clone":
        assert outcome == (ErrorKind.TRANSPORT, _MID_TRANSFER)
    else:
        assert outcome == (None, "ok")
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize("op", ["clone", "remote_head"])
async def test_an_http_server_that_stops_mid_answer(
    op: str, repo_root: Path, repos: dict[str, FixtureRepo], work_dir: Path
) -> None:
    body = b"001e# service=git-upload-pack\n0000" + _advertisement(repo_root)
    vcs = DulwichVCS(read_timeout=10, work_dir=work_dir)
    cuts = {"before the body": (0, False)} | {
        where: (cut + 34, between) for where, (cut, between) in _cuts(body[34:]).items()
    }
    for where, (cut, _between_lines) in cuts.items():
        # Over http the body's length is known: any cut is an answer ended early.
        with raw_tcp_server(_http_cut(body[:cut], len(body))) as port:
            outcome = await _outcome(vcs, op, f"http://127.0.0.1:{port}/basic.git")
        assert outcome == (ErrorKind.TRANSPORT, _MID_ANSWER), where
    with raw_tcp_server(_http_cut(body, len(body))) as port:
        outcome = await _outcome(vcs, op, f"http://127.0.0.1:{port}/basic.git")
    if op == "clone":
        assert outcome[0] is ErrorKind.TRANSPORT, outcome
    else:
        assert outcome == (None, "ok")
    assert list(work_dir.iterdir()) == []

"""The envelope on the wire (issue 38): what a server sends besides refs and pack data.

Side-band messages count against the repository size limit and never pass for a
live transfer; a compressed ref list is counted as it expands and capped in lines
as well as bytes; an HTTP line too long, a band-3 error, a silent TLS handshake and
an unknown certificate authority each end with a kind and words that say so. The
servers (tests/support/wire_servers.py) are real sockets on 127.0.0.1 that record what they
sent: each test asserts the kind and message, and that the client stopped the server
near the limit (its record), never how long anything took.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from clonegate import CloneError, CloneSettings, DulwichVCS, ErrorKind

from .support.wire_servers import (
    MiB,
    Record,
    gzip_ref_bomb,
    long_header,
    repeated_refs,
    shallow_flood,
    sideband_server,
    sideband_ssh,
    silent_server,
    trickling_handshake,
)

LIMIT = 1 * MiB
# Bytes a server can have sent that the client never read: the kernel's buffers on
# both ends of a loopback connection (a few MiB each at most), generously.
BUFFERS = 16 * MiB
# Where the servers stop on their own: far past LIMIT + BUFFERS, so that a client that
# did not stop them is told apart from one that did.
SAFETY = 64 * MiB


async def _outcome(vcs: DulwichVCS, op: str, url: str) -> tuple[ErrorKind | None, str]:
    try:
        if op == "clone":
            source = await vcs.clone(url)
            await source.aclose()
        else:
            await vcs.remote_head(url)
    except CloneError as failure:
        return failure.kind, failure.reason
    return None, "ok"


async def _ended(record: Record) -> bool:
    """Whether the server's stream under test ended (a safety-net wait: it ends within
    moments of the client going away, or at the server's own cap)."""
    return await trio.to_thread.run_sync(record.ended.wait, 60)


def _vcs(work_dir: Path, **options: object) -> DulwichVCS:
    settings: dict[str, object] = {
        "depth": None,
        "read_timeout": 60,  # far beyond what the envelope allows: never what ends a test
        "max_repo_size": LIMIT,
        "low_speed_limit": 1000,
        "low_speed_time": 1.0,
        "work_dir": work_dir,
    }
    return DulwichVCS(CloneSettings(**(settings | options)))  # type: ignore[arg-type]


@pytest.mark.parametrize("transport", ["git", "http"])
async def test_a_progress_flood_counts_against_the_size_limit(
    transport: str, work_dir: Path
) -> None:
    record = Record()
    with sideband_server(transport, "flood", record, SAFETY) as url:
        kind, reason = await _outcome(_vcs(work_dir), "clone", url)
        assert await _ended(record)
    assert kind is ErrorKind.TOO_LARGE, reason
    assert "more than 1 MiB of pack data and progress messages" in reason
    # The client hung up near the limit, not at the server's safety cap.
    assert record.hung_up
    assert record.sent <= LIMIT + BUFFERS
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize("transport", ["git", "http"])
async def test_an_error_flood_stops_at_its_first_message_shown_escaped(
    transport: str, work_dir: Path
) -> None:
    record = Record()
    with sideband_server(transport, "errors", record, SAFETY) as url:
        kind, reason = await _outcome(_vcs(work_dir), "clone", url)
        assert await _ended(record)
    # A band-3 message is the server's fatal error (as an ERR line): the first one
    # ends the transfer, in the server's words, its escape sequence shown, not sent.
    assert (kind, reason) == (
        ErrorKind.PROTOCOL,
        "the server stopped with an error: \\x1b[31maborting due to possible "
        "repository corruption on the remote side.",
    )
    assert record.hung_up
    assert record.sent <= LIMIT + BUFFERS


@pytest.mark.parametrize("behaviour", ["flood", "errors"])
async def test_side_band_messages_over_ssh_are_counted_and_shown(
    behaviour: str, tmp_path: Path, work_dir: Path
) -> None:
    # Over ssh the side-band arrives through the ssh program's pipes, not a socket:
    # the same reader counts it. A stand-in for ssh speaks for the server.
    vcs = _vcs(work_dir, ssh_command=sideband_ssh(tmp_path, behaviour, SAFETY))
    with trio.fail_after(120):  # a safety net: the assertions are below
        kind, reason = await _outcome(vcs, "clone", "ssh://git@127.0.0.1/repository.git")
    if behaviour == "flood":
        assert kind is ErrorKind.TOO_LARGE, reason
        assert "more than 1 MiB of pack data and progress messages" in reason
    else:
        assert (kind, reason) == (
            ErrorKind.PROTOCOL,
            "the server stopped with an error: \\x1b[31maborting due to possible "
            "repository corruption on the remote side.",
        )
    assert list(work_dir.iterdir()) == []


@pytest.mark.parametrize("transport", ["git", "http"])
async def test_a_progress_trickle_is_too_slow(transport: str, work_dir: Path) -> None:
    # 4000 bytes of progress a second, four times the low-speed limit: none of it
    # moves the clone on. The server gives up after 30 s of it (120 KB).
    record = Record()
    with sideband_server(transport, "trickle", record, 120_000) as url:
        kind, reason = await _outcome(_vcs(work_dir), "clone", url)
        assert await _ended(record)
    assert kind is ErrorKind.TOO_SLOW, reason
    # Not "received 0 bytes": the ref list counts, and on a loaded machine it may
    # arrive inside the first window (121 bytes over git://, more over http).
    assert re.search(r"received \d+ bytes in the last 1 s, less than 1000 bytes/s", reason)
    assert record.hung_up


@pytest.mark.parametrize("op", ["clone", "remote_head"])
async def test_a_gzip_ref_bomb_is_counted_as_it_expands(op: str, work_dir: Path) -> None:
    # The client asks for an uncompressed answer; this server compresses anyway,
    # 65,000-byte ref lines about 300 times, up to 96 MiB expanded (320 KB sent).
    record = Record()
    with gzip_ref_bomb("long", record, 96 * MiB) as url:
        kind, reason = await _outcome(_vcs(work_dir), op, url)
    assert record.accept_encodings[0] == "identity"
    assert kind is ErrorKind.TOO_LARGE, reason
    assert reason.endswith("the server's list of refs passed 32 MiB (the limit)")


async def test_a_gzip_bomb_of_repeated_lines_meets_the_line_cap(work_dir: Path) -> None:
    record = Record()
    with gzip_ref_bomb("short", record, 96 * MiB) as url:
        kind, reason = await _outcome(_vcs(work_dir), "clone", url)
    assert record.accept_encodings[0] == "identity"
    assert kind is ErrorKind.TOO_LARGE, reason
    assert reason.endswith("list of refs passed 200064 lines (the limit for 100000 refs)")


async def test_a_ref_list_of_one_line_repeated_meets_the_line_cap(work_dir: Path) -> None:
    # 400,000 copies of one ref: one distinct ref in 25 MiB, under the byte cap, so
    # neither the count of refs nor the bytes would stop it.
    record = Record()
    with repeated_refs(record, 400_000) as url:
        kind, reason = await _outcome(_vcs(work_dir), "clone", url)
    assert kind is ErrorKind.TOO_LARGE, reason
    assert reason.endswith("list of refs passed 200064 lines (the limit for 100000 refs)")


async def test_lines_before_the_pack_count_against_the_size_limit(work_dir: Path) -> None:
    # Between the ref list and the pack, lines that are neither (shallow lines here,
    # each of another commit, kept in a set) counted against nothing but the
    # low-speed window and the memory cap.
    record = Record()
    with shallow_flood(record, SAFETY) as url:
        kind, reason = await _outcome(_vcs(work_dir, depth=1), "clone", url)
        assert await _ended(record)
    assert (kind, reason) == (
        ErrorKind.TOO_LARGE,
        "the server sent more than 1 MiB before its pack data (the limit per clone)",
    )
    assert record.hung_up
    assert record.sent <= LIMIT + BUFFERS


@pytest.mark.parametrize("op", ["clone", "remote_head"])
async def test_an_http_line_too_long_is_a_protocol_error_that_says_so(
    op: str, work_dir: Path
) -> None:
    record = Record()
    with long_header(record) as url:
        kind, reason = await _outcome(_vcs(work_dir), op, url)
    assert (kind, reason) == (
        ErrorKind.PROTOCOL,
        "the server's HTTP answer has a line too long "
        "(got more than 65536 bytes when reading header line)",
    )


@pytest.mark.parametrize("op", ["clone", "remote_head"])
@pytest.mark.parametrize("scheme", ["https", "ssh"])
async def test_a_silent_handshake_is_a_read_timeout(
    scheme: str, op: str, work_dir: Path, server_program: Callable[[str], str]
) -> None:
    # Connected at once; then nothing. The connect timeout (30 s by default) and the
    # low-speed window (30 s) are not what may end it: the read timeout is.
    if scheme == "ssh":
        server_program("ssh")
    record = Record()
    with silent_server(record) as port:
        vcs = DulwichVCS(CloneSettings(read_timeout=1, work_dir=work_dir))
        with trio.fail_after(120):  # a safety net: the assertions are below
            kind, reason = await _outcome(vcs, op, f"{scheme}://127.0.0.1:{port}/silent.git")
        # The worker that waited is gone, and its connection with it.
        closed = await _ended(record)
    assert (kind, reason) == (
        ErrorKind.TIMEOUT,
        f"no answer to the {'TLS' if scheme == 'https' else 'ssh'} handshake within 1 s "
        "(the read timeout)",
    )
    assert closed
    assert record.received > 0  # the ClientHello or the ssh banner: the handshake began


async def test_a_silent_proxy_is_a_read_timeout(
    monkeypatch: pytest.MonkeyPatch, work_dir: Path
) -> None:
    # The proxy's answer to CONNECT is waited for as the handshake is, and said so.
    record = Record()
    with silent_server(record) as port:
        monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")  # read by the worker
        monkeypatch.setenv("NO_PROXY", "")
        vcs = DulwichVCS(CloneSettings(read_timeout=1, work_dir=work_dir))
        with trio.fail_after(120):  # a safety net: the assertions are below
            kind, reason = await _outcome(vcs, "clone", "https://git.example/x.git")
        closed = await _ended(record)
    assert (kind, reason) == (
        ErrorKind.TIMEOUT,
        "no answer to the proxy's CONNECT or the TLS handshake within 1 s (the read timeout)",
    )
    assert closed
    assert record.received > 0  # the CONNECT request


@pytest.mark.parametrize("scheme", ["https", "ssh"])
async def test_a_handshake_trickled_within_the_read_timeout_is_too_slow(
    scheme: str, work_dir: Path, server_program: Callable[[str], str]
) -> None:
    # The handshake's bound is per read (ssh's ConnectTimeout too, measured): a byte
    # every 0.2 s never meets a 5 s read timeout. What ends it is the low-speed check:
    # handshake bytes are OpenSSL's or the ssh program's own reads, never counted as
    # received, so the window sees nothing arrive.
    if scheme == "ssh":
        server_program("ssh")
    record = Record()
    with trickling_handshake(scheme, record, 600) as port:  # 600 bytes: 2 minutes of it
        vcs = _vcs(work_dir, read_timeout=5)
        kind, reason = await _outcome(vcs, "clone", f"{scheme}://127.0.0.1:{port}/slow.git")
        assert await _ended(record)
    assert kind is ErrorKind.TOO_SLOW, reason
    assert re.search(r"received \d+ bytes in the last 1 s", reason), reason
    assert record.hung_up  # the client stopped it, not the server's cap

"""The test servers record what happened, and other tests' assertions rest on those
records (ADR 0010): here the records are checked against clients whose behaviour is
known exactly."""

from __future__ import annotations

import socket
import struct
from pathlib import Path

import trio

from .support.proxy import ThrottlingProxy
from .support.repos import make_repo
from .support.servers import git_daemon


def _pkt_line(payload: bytes) -> bytes:
    return b"%04x" % (len(payload) + 4) + payload


async def test_a_client_killed_with_unread_data_ends_its_connection(tmp_path: Path) -> None:
    # A killed process's socket with unread data is reset, not half-closed: the git
    # server never sees an end of file and waits for wants that never come. The
    # proxy must count the connection closed anyway, or a cluster test counts a dead
    # worker's clone as running beside the survivors' (3 at once under a limit of 2).
    make_repo(tmp_path, "r")
    with git_daemon(tmp_path) as daemon:
        proxy = ThrottlingProxy(daemon.port)
        # A bound so that a regression fails, not hangs (the server, with no timeout
        # of its own, would wait for ever).
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                await nursery.start(proxy.serve)
                client = await trio.open_tcp_stream("127.0.0.1", proxy.port)
                await client.send_all(_pkt_line(b"git-upload-pack /r.git\0host=127.0.0.1\0"))
                advertisement = b""
                while not advertisement.endswith(b"0000"):  # all of it: the server now waits
                    chunk = await client.receive_some()
                    assert chunk, "the connection ended before the advertisement did"
                    advertisement += chunk
                linger = struct.pack("ii", 1, 0)  # close with a reset, as a killed process's
                client.socket.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                await client.aclose()
                await proxy.wait_idle()
                nursery.cancel_scope.cancel()
    assert proxy.log == [("request", "/r.git"), ("closed", "/r.git")]
    assert (proxy.connections, proxy.max_active, proxy.active) == (1, 1, 0)

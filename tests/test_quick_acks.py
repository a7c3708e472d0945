"""A clone's TCP reads ask for quick ACKs (issue 47).

git daemon writes a fetch answer's first lines as separate small writes, without
TCP_NODELAY: each waits until the one before is ACKed, and Linux delays an ACK up to
40 ms. A depth-1 clone from git daemon waited that long on it (in-process, 55 ms
against 15 with quick ACKs; bench/README.md). Quick-ACK mode does not last, so every
read of a clone's TCP socket asks again; a local socket is left alone.
"""

from __future__ import annotations

import socket

import pytest

from clonegate import CloneSettings
from clonegate._adapters.git import envelope
from clonegate._adapters.git.clone_job import envelope_of

QUICKACK = getattr(socket, "TCP_QUICKACK", None)
pytestmark = pytest.mark.skipif(QUICKACK is None, reason="TCP_QUICKACK is Linux's")


class Recording(socket.socket):
    """A socket that records the options set on it."""

    def __init__(self, *args: int) -> None:
        super().__init__(*args)
        self.options: list[tuple[int, int, int]] = []

    def setsockopt(self, level: int, option: int, value: int | bytes, *rest: object) -> None:  # type: ignore[override]
        assert isinstance(value, int)
        self.options.append((level, option, value))
        super().setsockopt(level, option, value)


def test_each_tcp_read_of_a_clone_asks_for_quick_acks_first() -> None:
    meter = envelope.TransferMeter(envelope_of(CloneSettings()))
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = Recording(socket.AF_INET, socket.SOCK_STREAM)
        with client:
            client.connect(server.getsockname())
            peer, _ = server.accept()
            with peer:
                with envelope._counting_sockets(meter):
                    peer.sendall(b"abc")
                    assert client.recv(1) == b"a"
                    buffer = bytearray(2)
                    assert client.recv_into(buffer) == 2
                assert client.options == [(socket.IPPROTO_TCP, QUICKACK, 1)] * 2
                assert meter.socket_bytes == 3
                # Outside a clone, reads are the socket's own again.
                peer.sendall(b"d")
                assert client.recv(1) == b"d"
                assert len(client.options) == 2


def test_a_local_socket_read_asks_for_nothing() -> None:
    meter = envelope.TransferMeter(envelope_of(CloneSettings()))
    left, right = socket.socketpair()
    mine = Recording(socket.AF_UNIX, socket.SOCK_STREAM, 0, right.detach())
    with left, mine, envelope._counting_sockets(meter):
        left.sendall(b"x")
        assert mine.recv(1) == b"x"
    assert mine.options == []

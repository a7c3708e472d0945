"""git:// servers on 127.0.0.1 made to breach a clone's envelope, counting what they sent.

- ``trickle``: a ref advertisement at 5 bytes a second that never ends.
- ``refs``: an advertisement of ``refs`` refs (3 million by default), as fast as the
  client reads.
- ``endless_pack``: one ref, then a pack stream that never ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

from .hostile_servers import _pkt, _read_pkt
from .servers import raw_tcp_server

HEAD = b"a" * 40
CAPABILITIES = b"side-band-64k ofs-delta symref=HEAD:refs/heads/main agent=git/2.43"


class Counter:
    def __init__(self) -> None:
        self.sent = 0


def _advertisement(refs: int) -> Iterator[bytes]:
    yield _pkt(HEAD + b" HEAD\0" + CAPABILITIES + b"\n")
    batch = []
    for number in range(refs):
        batch.append(_pkt(HEAD + b" refs/heads/branch-%09d\n" % number))
        if len(batch) == 1024:
            yield b"".join(batch)
            batch = []
    yield b"".join(batch) + b"0000"


@contextmanager
def envelope_breaker(kind: str, counter: Counter, refs: int = 3_000_000) -> Iterator[int]:
    """A server of ``kind`` (see the module docstring); yields its port."""
    chunk = _pkt(b"\x01" + os.urandom(65000))

    def send(conn: socket.socket, data: bytes) -> None:
        conn.sendall(data)
        counter.sent += len(data)

    def serve(conn: socket.socket) -> None:
        with contextlib.suppress(OSError, ConnectionError, ValueError):
            _read_pkt(conn)  # "git-upload-pack /path\0host=...\0"
            if kind == "trickle":
                for piece in _advertisement(10**6):
                    for byte in piece:
                        send(conn, bytes([byte]))
                        time.sleep(0.2)  # the trickle itself (5 bytes/s), not a wait
            elif kind == "refs":
                for piece in _advertisement(refs):
                    send(conn, piece)
            elif kind == "endless_pack":
                for piece in _advertisement(0):
                    send(conn, piece)
                while _read_pkt(conn) != b"done\n":
                    pass
                send(conn, _pkt(b"NAK\n") + _pkt(b"\x01PACK\0\0\0\x02\0\0\x10\0"))
                while True:
                    send(conn, chunk)

    with raw_tcp_server(serve) as port:
        yield port

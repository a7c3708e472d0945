"""git:// servers on 127.0.0.1 made to breach a clone's envelope, counting what they sent.

- ``trickle``: a ref advertisement at 5 bytes a second that never ends.
- ``refs``: an advertisement of ``refs`` refs (3 million by default), as fast as the
  client reads.
- ``endless_pack``: one ref, then a pack stream that never ends.

The trickle also comes over the other transports: :func:`trickling_https` (TLS, a
smart-HTTP ref advertisement at 5 bytes a second) and :data:`TRICKLE_SCRIPT`, the
forced command of an sshd that trickles the same way over an ssh channel.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .hostile_servers import _pkt, _read_pkt
from .servers import raw_tcp_server, read_request_head

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


# A ref advertisement at 500 bytes a second (50 every 0.1 s), on stdout, for an sshd's
# forced command. It stops at its first failed write (the client hung up) or after two
# minutes.
TRICKLE_SCRIPT = f"""\
import sys, time
line = b"{HEAD.decode()} HEAD\\0{CAPABILITIES.decode()}\\n"
data = (b"%04x" % (len(line) + 4) + line) * 1000
deadline = time.monotonic() + 120
for start in range(0, len(data), 50):
    if time.monotonic() > deadline:
        break
    sys.stdout.buffer.write(data[start : start + 50])
    sys.stdout.buffer.flush()
    time.sleep(0.1)  # the trickle itself, not a wait
"""


def trickle_command(workdir: Path) -> str:
    """The forced command (for :func:`.servers.ssh_server`) that runs TRICKLE_SCRIPT."""
    script = workdir / "trickle.py"
    script.write_text(TRICKLE_SCRIPT)
    return f"{sys.executable} {script}"


@contextmanager
def trickling_https(context: ssl.SSLContext, counter: Counter) -> Iterator[int]:
    """An https server whose ref advertisement comes at 500 bytes a second; yields its port."""

    def serve(raw: socket.socket) -> None:
        with contextlib.ExitStack() as stack, contextlib.suppress(OSError, ValueError):
            conn = stack.enter_context(context.wrap_socket(raw, server_side=True))
            if not read_request_head(conn):
                return
            conn.sendall(
                b"HTTP/1.1 200 OK\r\n"
                b"Content-Type: application/x-git-upload-pack-advertisement\r\n"
                b"Cache-Control: no-cache\r\nConnection: close\r\n\r\n"
            )
            body = b"".join([_pkt(b"# service=git-upload-pack\n"), b"0000", *_advertisement(10**5)])
            for start in range(0, len(body), 50):
                conn.sendall(body[start : start + 50])
                counter.sent += 50
                time.sleep(0.1)  # the trickle itself (500 bytes/s), not a wait

    with raw_tcp_server(serve) as port:
        yield port

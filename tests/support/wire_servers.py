"""Servers on 127.0.0.1 that attack a clone's envelope on the wire, recording what they did.

- :func:`sideband_server`: one ref, then, once asked for it, a side-band stream made
  of messages only: ``flood`` (progress, band 2, as fast as the client reads),
  ``errors`` (fatal errors, band 3, the same), ``trickle`` (progress at 4000 bytes a
  second, four times the low-speed limit the tests set) or ``rate_limited`` (one
  band-3 message saying so, GitHub's words); over git:// or smart HTTP.
- :func:`gzip_ref_bomb`: smart HTTP whose ref list comes gzip-compressed though the
  client asked for none, and expands about 300 times: long ref lines (the byte cap)
  or short repeated ones (the line cap).
- :func:`repeated_refs`: git://, one ref line repeated a million times, uncompressed.
- :func:`shallow_flood`: git://, a server that takes a depth and answers "done" with
  shallow lines for ever, each naming another commit, before any pack.
- :func:`long_header`: an HTTP answer with a header line past http.client's 64 KiB.
- :func:`silent_server`: accepts a connection and never answers its TLS or ssh handshake.
- :func:`trickling_handshake`: answers a TLS ClientHello or an ssh client one byte at a
  time, each well within the read timeout, a record or banner that never completes.
- :func:`sideband_ssh`: a stand-in for the ssh program, speaking for the server on its
  pipes, so that the side-band is read as over ssh (through pipes, not a socket).

Each stops at a safety cap of its own (``cap`` bytes, or a number of lines), so that a
client that does not stop ends the test instead of hanging it; the tests assert the
client stopped long before (``Record.hung_up``, ``Record.sent``), not how long it took.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .envelope_servers import CAPABILITIES, HEAD, _advertisement
from .hostile_servers import _pkt, _read_pkt
from .servers import raw_tcp_server, read_request_head

MiB = 1 << 20
# The words of git's upload-pack when pack-objects fails, with a terminal escape in front.
CORRUPTION = b"\x1b[31maborting due to possible repository corruption on the remote side."
RATE_LIMITED = b"This request was rate-limited due to too many requests."
_SERVICE = _pkt(b"# service=git-upload-pack\n") + b"0000"
_ADVERTISEMENT_TYPE = b"application/x-git-upload-pack-advertisement"


@dataclass
class Record:
    """What a server saw and did, over all its connections."""

    sent: int = 0  # bytes sent (for the gzip bomb: compressed bytes)
    hung_up: bool = False  # the client closed while the server still had more to send
    accept_encodings: list[str] = field(default_factory=list)  # one per HTTP request
    received: int = 0  # bytes read (silent_tls)
    # Set when the stream under test ended: sent in full, or the client went away.
    ended: threading.Event = field(default_factory=threading.Event)

    def send(self, conn: socket.socket, data: bytes) -> None:
        try:
            conn.sendall(data)
        except OSError:
            self.hung_up = True
            raise
        self.sent += len(data)

    def stream(self, conn: socket.socket, pieces: Iterable[bytes]) -> None:
        """Send ``pieces`` (the stream under test), then set ``ended``."""
        try:
            for piece in pieces:
                self.send(conn, piece)
        finally:
            self.ended.set()


def _messages(behaviour: str, cap: int) -> Iterator[bytes]:
    """The side-band stream of ``behaviour``, up to ``cap`` bytes."""
    if behaviour == "rate_limited":  # GitHub's words, on the error band (issue 43)
        yield _pkt(b"\x03" + RATE_LIMITED + b"\n")
        return
    band = b"\x03" if behaviour == "errors" else b"\x02"
    if behaviour == "trickle":
        piece = _pkt(band + b"Counting objects: 1%\r" * 19)  # 404 bytes
        for _ in range(cap // len(piece)):
            yield piece
            time.sleep(0.1)  # the trickle itself (4000 bytes/s), not a wait
        return
    first = _pkt(band + CORRUPTION + b"\n") if behaviour == "errors" else b""
    chunk = _pkt(band + b"Compressing objects: 100% (1/1)\r" * 2000)
    yield first
    for _ in range((cap - len(first)) // len(chunk)):
        yield chunk


def _header(content_type: bytes, extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: " + content_type + b"\r\n"
        b"Cache-Control: no-cache\r\nConnection: close\r\n" + extra + b"\r\n"
    )


def _accept_encoding(head: bytes, record: Record) -> None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"accept-encoding":
            record.accept_encodings.append(value.strip().decode("latin-1"))
            return
    record.accept_encodings.append("")


def _serving(handler: Callable[[socket.socket], None]) -> Callable[[socket.socket], None]:
    def serve(conn: socket.socket) -> None:
        with contextlib.suppress(OSError, ValueError):
            handler(conn)
        # Close with unread bytes would reset; what the client still sends is drained.
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_WR)
            while conn.recv(65536):
                pass

    return serve


@contextmanager
def sideband_server(transport: str, behaviour: str, record: Record, cap: int) -> Iterator[str]:
    """A server of ``behaviour`` (module docstring) over ``transport`` (``git`` or
    ``http``); yields the repository's URL."""

    def git(conn: socket.socket) -> None:
        _read_pkt(conn)  # "git-upload-pack /path\0host=...\0"
        record.send(conn, b"".join(_advertisement(0)))
        while _read_pkt(conn) != b"done\n":
            pass
        record.send(conn, _pkt(b"NAK\n"))
        record.stream(conn, _messages(behaviour, cap))

    def http(conn: socket.socket) -> None:
        head = read_request_head(conn)
        _accept_encoding(head, record)
        if head.startswith(b"GET "):
            body = _SERVICE + b"".join(_advertisement(0))
            record.send(conn, _header(_ADVERTISEMENT_TYPE) + body)
            return
        # The POST of wants and "done": its body is left unread (drained at the end).
        record.send(conn, _header(b"application/x-git-upload-pack-result") + _pkt(b"NAK\n"))
        record.stream(conn, _messages(behaviour, cap))

    with raw_tcp_server(_serving(git if transport == "git" else http)) as port:
        yield f"{transport}://127.0.0.1:{port}/repository.git"


def _gzip_blocks(line: bytes, block_lines: int) -> tuple[bytes, bytes, int]:
    """(gzip header and the ref list's start, one block of ``line`` repeated, its
    expanded size): each block is flushed in full, so every one compresses the same."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    start = _SERVICE + b"".join(_advertisement(0))[:-4]  # without its flush-pkt
    head = compressor.compress(start) + compressor.flush(zlib.Z_FULL_FLUSH)
    plain = line * block_lines
    block = compressor.compress(plain) + compressor.flush(zlib.Z_FULL_FLUSH)
    return head, block, len(plain)


@contextmanager
def gzip_ref_bomb(lines: str, record: Record, expanded_cap: int) -> Iterator[str]:
    """``lines``: ``long`` (65,000-byte ref names: the byte cap) or ``short`` (one ref
    line repeated: the line cap). Sends gzip data that expands to ``expanded_cap`` bytes,
    then ends the list; yields the URL."""
    if lines == "long":
        line = _pkt(b"a" * 40 + b" refs/heads/" + b"x" * 65_000 + b"\n")
        head, block, size = _gzip_blocks(line, 16)
    else:
        line = _pkt(b"a" * 40 + b" refs/heads/repeated\n")
        head, block, size = _gzip_blocks(line, 20_000)
    tail = zlib.compressobj(9, zlib.DEFLATED, -15)
    end = tail.compress(b"0000") + tail.flush(zlib.Z_SYNC_FLUSH)

    def serve(conn: socket.socket) -> None:
        request = read_request_head(conn)
        _accept_encoding(request, record)
        if not request.startswith(b"GET "):
            return  # the old client's POST, once it took the bomb for a ref list
        header = _header(_ADVERTISEMENT_TYPE, b"Content-Encoding: gzip\r\n")
        record.stream(conn, [header, head, *[block] * (expanded_cap // size), end])

    with raw_tcp_server(_serving(serve)) as port:
        yield f"http://127.0.0.1:{port}/bomb.git"


@contextmanager
def repeated_refs(record: Record, count: int) -> Iterator[str]:
    """git://: HEAD, then ``count`` times the same ref line; yields the URL."""
    line = _pkt(b"a" * 40 + b" refs/heads/repeated\n")
    batch = line * 10_000

    def serve(conn: socket.socket) -> None:
        _read_pkt(conn)
        start = b"".join(_advertisement(0))[:-4]
        record.stream(conn, [start, *[batch] * (count // 10_000), b"0000"])
        while _read_pkt(conn) != b"done\n":
            pass

    with raw_tcp_server(_serving(serve)) as port:
        yield f"git://127.0.0.1:{port}/repeated.git"


@contextmanager
def shallow_flood(record: Record, cap: int) -> Iterator[str]:
    """git://: one ref and the ``shallow`` capability; once the client says "done",
    shallow lines of distinct commits, ``cap`` bytes at most; yields the URL."""
    start = _pkt(HEAD + b" HEAD\0" + CAPABILITIES + b" shallow\n") + b"0000"

    def lines() -> Iterator[bytes]:
        for _ in range(cap // (10_000 * 53)):
            yield b"".join(
                _pkt(b"shallow " + os.urandom(20).hex().encode() + b"\n") for _ in range(10_000)
            )

    def serve(conn: socket.socket) -> None:
        _read_pkt(conn)
        record.send(conn, start)
        while _read_pkt(conn) != b"done\n":
            pass
        record.stream(conn, lines())

    with raw_tcp_server(_serving(serve)) as port:
        yield f"git://127.0.0.1:{port}/shallow.git"


@contextmanager
def long_header(record: Record) -> Iterator[str]:
    """HTTP: a first answer with a 70,000-byte header line; yields the URL."""

    def serve(conn: socket.socket) -> None:
        read_request_head(conn)
        record.send(conn, b"HTTP/1.1 200 OK\r\nX-Filler: " + b"a" * 70_000 + b"\r\n\r\n")

    with raw_tcp_server(_serving(serve)) as port:
        yield f"http://127.0.0.1:{port}/long.git"


@contextmanager
def silent_server(record: Record) -> Iterator[int]:
    """Accepts, reads what the client says first (a TLS ClientHello, an ssh banner) and
    whatever follows, never answers; sets ``record.ended`` when the client closes.
    Yields its port."""

    def serve(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := conn.recv(65536):
                record.received += len(data)
        record.ended.set()

    with raw_tcp_server(serve) as port:
        yield port


@contextmanager
def trickling_handshake(scheme: str, record: Record, cap: int) -> Iterator[int]:
    """``https``: reads the ClientHello, then sends a TLS handshake record's header
    announcing 16 KiB; ``ssh``: the start of a version banner. Then the rest one byte
    every 0.2 s, ``cap`` bytes at most; yields the port."""

    def trickle() -> Iterator[bytes]:
        yield b"\x16\x03\x03\x40\x00" if scheme == "https" else b"SSH-2.0-"
        for _ in range(cap):
            time.sleep(0.2)  # the trickle itself, not a wait
            yield b"\x00" if scheme == "https" else b"x"

    def serve(conn: socket.socket) -> None:
        if scheme == "https":  # an ssh client waits for the server's banner first
            record.received += len(conn.recv(65536))
        record.stream(conn, trickle())

    with raw_tcp_server(_serving(serve)) as port:
        yield port


# The stand-in for ssh: the advertisement, then once the client says "done", the
# side-band stream of _messages on its stdout, until the client goes away (a broken
# pipe ends it) or CAP bytes were written.
_SSH_SERVER = """
import sys
out, given = sys.stdout.buffer, sys.stdin.buffer
def read_pkt():
    size = int(given.read(4), 16)
    return None if size == 0 else given.read(size - 4)
out.write(ADVERTISEMENT)
out.flush()
while read_pkt() != b"done\\n":
    pass
out.write(NAK + FIRST)
sent = 0
while sent < CAP:
    out.write(CHUNK)
    out.flush()
    sent += len(CHUNK)
"""


def sideband_ssh(directory: Path, behaviour: str, cap: int) -> str:
    """The ``ssh_command`` of a server of ``behaviour`` (``flood`` or ``errors``, as
    :func:`sideband_server`), written into ``directory``."""
    first, chunk, *_ = _messages(behaviour, 3 << 20)
    script = directory / "sideband-ssh.py"
    script.write_text(
        f"ADVERTISEMENT, NAK = {b''.join(_advertisement(0))!r}, {_pkt(b'NAK' + bytes([10]))!r}\n"
        f"FIRST, CHUNK, CAP = {first!r}, {chunk!r}, {cap}\n" + _SSH_SERVER
    )
    program = directory / "sideband-ssh"
    program.write_text(f"#!/bin/sh\nexec {sys.executable} {script}\n")
    program.chmod(0o755)
    return str(program)

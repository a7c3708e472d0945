"""A clone's resource envelope, enforced inside its worker process (ADR 0003).

Limits on what a server may make one clone receive and how slowly; the memory cap
is the worker's ``RLIMIT_AS`` (set by the pool) and a file-size cap its
``RLIMIT_FSIZE``. A breach stops the clone with :class:`Breach`, which the worker
reports as the clone's ``too_large`` or ``too_slow`` failure with the figure; the
rest of the batch goes on.

Bytes are counted where they arrive: every ``recv`` of a socket (git://, and
http(s) as TLS hands them over), and, for ssh and local paths only, whatever this
process reads from the ssh child's pipes or from files (its ``rchar``). Only there:
OpenSSL reads its socket with read(), which ``rchar`` counts too, so counting both
for https would count each byte twice and let a server trickling at half the
low-speed limit through. A watchdog thread looks at the count a few times a
second; to stop a clone blocked in a read, it signals the main thread, whose
handler raises :class:`Breach` there: the read is interrupted (EINTR) and the
exception unwinds the clone wherever it is.

What the limits count (issue 38): the repository size limit counts every byte of
the transfer's side-band, progress (band 2) and error (band 3) messages as well as
the pack (band 1), and every line between the ref list and the side-band
(acknowledgements, shallow lines); the low-speed limit counts only what moves the clone on, the
ref list and then the pack, so that an endless progress stream neither grows
without bound nor passes for a live transfer. An http answer the server
compressed is counted as it expands (urllib3 decompresses whatever it is sent),
and the ref list is capped in lines as well as bytes: repeated lines add no
distinct ref, so the count of refs alone never trips.
"""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..._domain.errors import ErrorKind
from ..._domain.sizes import format_size
from ..._domain.urls import visible

# The watchdog looks this often: several times per low-speed window, and at least
# four times a second, so that a breach stops a clone within a fraction of a second.
_TICKS_PER_WINDOW = 8
_LONGEST_TICK = 0.25
# A ref list's lines: each ref, its peeled value (``^{}``) for an annotated tag, and a
# few lines of service, capabilities and (protocol v2) their sections.
_LINES_PER_REF = 2
_OTHER_LINES = 64
# Side-band channels (git's sideband.c): pack data, progress, a fatal error.
_PACK_BAND, _PROGRESS_BAND, _ERROR_BAND = 1, 2, 3


@dataclass(frozen=True, slots=True)
class Envelope:
    """One clone's limits (the defaults are :class:`clonegate.DulwichVCS`'s).

    ``max_repo_bytes`` bounds the pack data and side-band messages received and every
    file written (and the clone's total on disk, checked when it is complete);
    ``max_memory`` the address space the clone may add to its worker's. The ref list
    is bounded by ``max_advertisement_bytes`` (as expanded, if compressed) and
    ``max_advertised_refs``, and in lines by twice that and a few.
    """

    max_repo_bytes: int = 2 << 30
    max_memory: int = 1 << 30
    max_advertised_refs: int = 100_000
    max_advertisement_bytes: int = 32 << 20
    low_speed_bytes_per_second: int = 1000
    low_speed_seconds: float = 30.0


class Breach(BaseException):
    """The clone left its envelope. A BaseException, so that no library's
    ``except Exception`` can swallow it on the way out."""

    def __init__(self, kind: ErrorKind, reason: str) -> None:
        super().__init__(kind, reason)
        self.kind = kind
        self.reason = reason


class TransferMeter:
    """Counts a clone's received bytes and enforces :class:`Envelope`; see the module doc."""

    def __init__(self, envelope: Envelope, *, pipes: bool = False) -> None:
        self.envelope = envelope
        self.pipes = pipes  # ssh: the transfer arrives through a child's pipes
        self.socket_bytes = 0
        self.pack_bytes = 0
        self.message_bytes = 0  # side-band progress and error messages
        self.negotiation_bytes = 0  # pkt-lines after the refs, before the side-band
        self.side_band = False  # the side-band began: its packets are counted by band
        self.advertised_lines = 0
        self.advertising = True  # until the client has heard every ref
        self._heard = 0  # what received() said when the ref list was complete
        # A compressed http answer: its bytes as read from the wire and as expanded.
        self._wire_bytes = self._expanded_bytes = self._expansion_counted = 0
        self._pending: Breach | None = None
        self._armed = False  # whether SIGUSR1 raises the breach (the transfer runs)
        self._stop = threading.Event()
        self._own_reads = 0  # what reading /proc/self/io itself added to rchar
        self._rchar_at_start = 0
        self.ticked: Callable[[], object] | None = None  # each watchdog tick (pack_intake)

    def received(self) -> int:
        """Bytes received so far: on sockets, or read from pipes (ssh)."""
        if not self.pipes:
            return self.socket_bytes
        return self.socket_bytes + max(0, self._rchar() - self._rchar_at_start)

    def _rchar(self) -> int:
        """This process's ``rchar`` (bytes it read with read()), less this method's own reads."""
        fd = os.open("/proc/self/io", os.O_RDONLY)
        try:
            content = os.read(fd, 4096)
        finally:
            os.close(fd)
        value = next(
            (int(line.split()[1]) for line in content.splitlines() if line.startswith(b"rchar:")), 0
        )
        value -= self._own_reads  # earlier reads of this file are in the value already
        self._own_reads += len(content)
        return value

    def useful(self) -> int:
        """Bytes that moved the clone on: the ref list, then pack data (the low-speed
        limit's count; side-band messages are not in it)."""
        return self.received() if self.advertising else self._heard + self.pack_bytes

    def count_pack(self, size: int) -> None:
        """Called with each piece of pack data; raises once past the byte limit."""
        self.pack_bytes += size
        self._check_transfer()

    def count_message(self, size: int) -> None:
        """Called with each side-band progress or error message (its whole pkt-line)."""
        self.message_bytes += size
        self._check_transfer()

    def _check_transfer(self) -> None:
        limit = self.envelope.max_repo_bytes
        if self.pack_bytes + self.message_bytes + self.negotiation_bytes <= limit:
            return
        if not self.side_band:
            what = "before its pack data"
        elif self.message_bytes:
            what = "of pack data and progress messages"
        else:
            what = "of pack data"
        raise Breach(
            ErrorKind.TOO_LARGE,
            f"the server sent more than {format_size(limit)} {what} (the limit per clone)",
        )

    def count_line(self, line: bytes | None) -> None:
        """Called with each pkt-line read: while the refs are listed, a cap on their
        lines; then, until the side-band begins (acknowledgements, shallow lines), their
        bytes count against the size limit, as the side-band's do."""
        if not self.advertising:
            if not self.side_band:
                self.negotiation_bytes += len(line or b"") + 4  # with its length prefix
                self._check_transfer()
            return
        self.advertised_lines += 1
        limit = self.envelope.max_advertised_refs * _LINES_PER_REF + _OTHER_LINES
        if self.advertised_lines > limit:
            raise Breach(
                ErrorKind.TOO_LARGE,
                f"the server's list of refs passed {limit} lines (the limit for "
                f"{self.envelope.max_advertised_refs} refs)",
            )

    def count_expanded(self, wire: int, expanded: int) -> None:
        """Called with each read of a compressed http answer: ``wire`` bytes of it read
        from the connection (counted already, as socket reads) gave ``expanded`` bytes.
        What it expanded to beyond the wire bytes is counted as received."""
        self._wire_bytes += wire
        self._expanded_bytes += expanded
        extra = self._expanded_bytes - self._wire_bytes
        if extra > self._expansion_counted:
            added, self._expansion_counted = extra - self._expansion_counted, extra
            self.count_socket(added)

    def count_socket(self, size: int) -> None:
        """Called with each socket read (main thread): the advertisement's cap, at once."""
        self.socket_bytes += size
        if self.advertising and self.socket_bytes > self.envelope.max_advertisement_bytes:
            raise self._advertisement_too_large()

    def _advertisement_too_large(self) -> Breach:
        limit = format_size(self.envelope.max_advertisement_bytes)
        return Breach(ErrorKind.TOO_LARGE, f"the server's list of refs passed {limit} (the limit)")

    def check_refs(self, count: int) -> None:
        """Called once the advertisement is parsed: a cap on how many refs it held."""
        if self.advertising:
            self._heard = self.received()
        self.advertising = False
        limit = self.envelope.max_advertised_refs
        if count > limit:
            raise Breach(
                ErrorKind.TOO_LARGE,
                f"the server advertised {count} refs, more than the limit of {limit}",
            )

    @contextlib.contextmanager
    def watching(self) -> Iterator[None]:
        """Meter the transfer in the ``with`` block (main thread only)."""
        if self.pipes:
            self._rchar_at_start = self._rchar()
        main = threading.get_ident()
        previous = signal.signal(signal.SIGUSR1, self._raise_pending)
        watchdog = threading.Thread(target=self._watch, args=(main,), daemon=True)
        try:
            with _counting_sockets(self), _counting_git(self):
                self._armed = True
                watchdog.start()
                try:
                    yield
                finally:
                    # Disarmed first: a signal that arrives during the tear-down must not
                    # raise in it and skip the rest (the worker's next clone would keep
                    # this one's hooks and handler, counting into this meter).
                    self._armed = False
                    self._stop.set()
                    watchdog.join()
        finally:
            signal.signal(signal.SIGUSR1, previous)
        if self._pending is not None:  # signalled as the block ended: still a breach
            raise self._pending

    def _raise_pending(self, signum: int, frame: Any) -> None:
        if self._armed and self._pending is not None:
            raise self._pending

    def _watch(self, main: int) -> None:
        envelope = self.envelope
        window = envelope.low_speed_seconds
        samples: collections.deque[tuple[float, int]] = collections.deque()
        start = time.monotonic()
        while not self._stop.wait(min(window / _TICKS_PER_WINDOW, _LONGEST_TICK)):
            now, total = time.monotonic(), self.useful()
            samples.append((now, total))
            while samples and samples[0][0] < now - window:
                samples.popleft()
            breach = None
            if self.advertising and total > envelope.max_advertisement_bytes:
                breach = self._advertisement_too_large()
            elif now - start >= window and samples:
                recent = total - samples[0][1]
                if recent < envelope.low_speed_bytes_per_second * window:
                    breach = Breach(
                        ErrorKind.TOO_SLOW,
                        f"received {recent} bytes in the last {window:g} s, less than "
                        f"{envelope.low_speed_bytes_per_second} bytes/s (the low-speed limit; "
                        "progress messages do not count)",
                    )
            if breach is not None:
                self._pending = breach
                signal.pthread_kill(main, signal.SIGUSR1)
                return
            if self.ticked is not None:
                with contextlib.suppress(OSError):  # the parent gone: the watch goes on
                    self.ticked()


@contextlib.contextmanager
def _counting_sockets(meter: TransferMeter) -> Iterator[None]:
    """Count every byte received by any socket of this process (a worker: one clone),
    each TCP read asking for quick ACKs (:func:`_ack_at_once`)."""

    def counting_bytes(read: Any) -> Any:
        def recv(self: Any, *args: Any) -> bytes:
            _ack_at_once(self)
            data: bytes = read(self, *args)
            meter.count_socket(len(data))
            return data

        return recv

    def counting_size(read_into: Any) -> Any:
        def recv_into(self: Any, *args: Any) -> int:
            _ack_at_once(self)
            size: int = read_into(self, *args)
            meter.count_socket(size)
            return size

        return recv_into

    patches = {
        (socket.socket, "recv"): counting_bytes(socket.socket.recv),
        (socket.socket, "recv_into"): counting_size(socket.socket.recv_into),
        (ssl.SSLSocket, "recv"): counting_bytes(ssl.SSLSocket.recv),
        (ssl.SSLSocket, "recv_into"): counting_size(ssl.SSLSocket.recv_into),
    }
    with _patched(patches):
        yield


# Linux delays an ACK up to 40 ms; a server without TCP_NODELAY (git daemon) holds
# each small write until the one before it is ACKed. git daemon writes a fetch
# answer's first lines (shallow-info, each shallow, packfile) as small writes: a
# depth-1 clone waited ~40 ms on them (in-process 55 ms, 15 with quick ACKs).
# Quick-ACK mode does not last (tcp(7)), so it is asked again before every read.
_QUICKACK = getattr(socket, "TCP_QUICKACK", None)  # Linux only
_TCP = (socket.AF_INET, socket.AF_INET6)


def _ack_at_once(sock: socket.socket) -> None:
    """Ask the kernel to ACK what ``sock`` receives next at once, if it is TCP."""
    if _QUICKACK is not None and sock.family in _TCP:
        # Closed, or not a stream: the read says what is wrong.
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)


@contextlib.contextmanager
def _counting_git(meter: TransferMeter) -> Iterator[None]:
    """Count what dulwich reads: pkt-lines, side-band messages, expanded http answers."""
    import dulwich.client
    import dulwich.protocol
    import urllib3.response

    # Worker-side, as dulwich is: the parent builds an Envelope without them (issue 47).
    from .worker_errors import Failure, rate_limited

    def read_pkt_line(self: Any) -> bytes | None:
        line: bytes | None = read_line(self)
        meter.count_line(line)
        return line

    def read_side_band(pkt_seq: Any) -> Iterator[tuple[int, bytes]]:
        # dulwich's own reader, with messages counted and a fatal error's words kept.
        meter.side_band = True
        for pkt in pkt_seq:
            channel, data = (pkt[0], pkt[1:]) if pkt else (0, b"")
            if channel in (_PROGRESS_BAND, _ERROR_BAND):
                meter.count_message(len(pkt) + 4)  # with its length prefix
            if channel == _ERROR_BAND:
                words = visible(data.decode("utf-8", "replace").strip())[:300]
                if rate_limited(words):  # a forge throttling git:// or ssh (issue 43)
                    raise Failure(
                        ErrorKind.THROTTLED, f"the server asked for fewer requests: {words}"
                    )
                raise Failure(ErrorKind.PROTOCOL, f"the server stopped with an error: {words}")
            yield channel, data

    def read_response(self: Any, *args: Any, **kwargs: Any) -> bytes:
        before = self.tell()
        data: bytes = read_body(self, *args, **kwargs)
        if self.headers.get("Content-Encoding", "identity").strip().lower() != "identity":
            meter.count_expanded(self.tell() - before, len(data))
        return data

    read_line = dulwich.protocol.Protocol.read_pkt_line
    read_body = urllib3.response.HTTPResponse.read
    patches: dict[tuple[Any, str], Any] = {
        (dulwich.protocol.Protocol, "read_pkt_line"): read_pkt_line,
        (dulwich.client, "_read_side_band64k_data"): read_side_band,
        (urllib3.response.HTTPResponse, "read"): read_response,
    }
    with _patched(patches):
        yield


@contextlib.contextmanager
def _patched(patches: dict[tuple[Any, str], Any]) -> Iterator[None]:
    """Each ``(owner, name)`` set to its value for the ``with`` block (this process runs
    one clone at a time: what it patches is its own)."""
    originals = {key: getattr(*key) for key in patches}
    for (owner, name), value in patches.items():
        setattr(owner, name, value)
    try:
        yield
    finally:
        for (owner, name), value in originals.items():
            setattr(owner, name, value)

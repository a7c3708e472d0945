"""Results written by a task of their own, so that a reader who stops reading never
stops the event loop (issue 38).

A write to a pipe nobody reads blocks. Written on the event loop's thread, it held
the whole run: no signal receiver ran, and SIGINT and SIGTERM were ignored. Here the
batch hands each piece of output to a bounded buffer (waiting, at a checkpoint, when
it is full) and a writer task writes it without ever blocking the thread:

- a pipe, a FIFO or a terminal is reopened through ``/proc/self/fd`` as a private,
  non-blocking open file: the shared one (the shell's, the next program's) keeps its
  blocking mode, as trio's ``FdStream`` warns it must;
- a socket is written with ``MSG_DONTWAIT``, which asks the same of one call only;
- a regular file (``-o FILE``, ``> file``) is written in a worker thread: such writes
  finish, so the thread is never left behind.
"""

from __future__ import annotations

import errno
import os
import socket
import stat
from typing import TextIO

import trio

__all__ = ["OutputError", "ResultsWriter", "Sink", "sink_for"]

_BUFFERED = 16  # pieces of output (reports, or a document) waiting to be written


class OutputError(OSError):
    """The results cannot be written (a full disk or device, a closed or broken file):
    not the reader going away, which stays a BrokenPipeError."""


class ResultsWriter:
    """Output for ``stream``, written by :meth:`run` in the order given to :meth:`write`."""

    def __init__(self, stream: TextIO) -> None:
        stream.flush()  # nothing written through the stream may come after ours
        self._encoding = stream.encoding or "utf-8"
        self._errors = stream.errors or "strict"
        self._sink = sink_for(stream)
        self._send, self._receive = trio.open_memory_channel[tuple[bytes, int]](_BUFFERED)
        self._current = memoryview(b"")  # what is left of the piece being written
        self._current_reports = 0

    async def write(self, text: str, reports: int = 0) -> None:
        """Queue ``text`` (holding ``reports`` reports); waits while the buffer is full."""
        await self._send.send((text.encode(self._encoding, self._errors), reports))

    def close(self) -> None:
        """Nothing more to write: :meth:`run` returns once the rest is written."""
        self._send.close()

    async def run(self) -> None:
        """Write until :meth:`close` and everything queued is written. Cancellable at
        any point, and run again afterwards: it goes on where it stopped."""
        while True:
            while self._current:
                try:
                    written = await self._sink.write_some(self._current)
                except BrokenPipeError:
                    raise
                except OSError as exc:
                    raise OutputError(exc.errno, exc.strerror) from None
                self._current = self._current[written:]
            try:
                data, self._current_reports = await self._receive.receive()
            except trio.EndOfChannel:
                return
            self._current = memoryview(data)

    def abandon(self) -> int:
        """Close the file this writer opened; the number of reports queued, or begun,
        and not written."""
        self._sink.close()
        left = self._current_reports if self._current else 0
        while True:
            try:
                left += self._receive.receive_nowait()[1]
            except (trio.WouldBlock, trio.EndOfChannel):
                return left


class Sink:
    """Writes some bytes to a file descriptor without blocking the thread."""

    def __init__(self, fd: int, nonblocking: bool, owned: bool) -> None:
        self._fd = fd
        self._nonblocking = nonblocking
        self._owned = owned  # opened here: closed here

    async def write_some(self, data: memoryview) -> int:
        """Bytes of ``data`` written; a checkpoint, cancellable while it waits."""
        if not self._nonblocking:
            # A regular file: the write finishes, so the thread is never left behind.
            return await trio.to_thread.run_sync(os.write, self._fd, data)
        # The checkpoint comes first: once bytes are written, no cancellation may lose
        # the count of them (they would be written twice).
        await trio.lowlevel.checkpoint()
        while True:
            try:
                return self._write_now(data)
            except BlockingIOError:
                await trio.lowlevel.wait_writable(self._fd)

    def _write_now(self, data: memoryview) -> int:
        return os.write(self._fd, data)

    def try_write(self, data: memoryview) -> int:
        """Bytes of ``data`` written now; BlockingIOError if none can be. Only for a
        sink that never blocks (``nonblocking``)."""
        return self._write_now(data)

    async def wait_writable(self) -> None:
        await trio.lowlevel.wait_writable(self._fd)

    @property
    def nonblocking(self) -> bool:
        return self._nonblocking

    def close(self) -> None:
        if self._owned:
            os.close(self._fd)
            self._owned = False


class _SocketSink(Sink):
    def _write_now(self, data: memoryview) -> int:
        with socket.socket(fileno=self._fd) as sock:
            try:
                return sock.send(data, socket.MSG_DONTWAIT)
            finally:
                sock.detach()  # the descriptor is stdout's, not this object's


class _StreamSink(Sink):
    """A stream with no file descriptor (in memory: a test's): written as it is."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__(-1, nonblocking=True, owned=False)
        self._stream = stream

    def _write_now(self, data: memoryview) -> int:
        self._stream.write(bytes(data).decode(self._stream.encoding or "utf-8"))
        self._stream.flush()
        return len(data)


def sink_for(stream: TextIO) -> Sink:
    """A sink for ``stream``'s file: see the module docstring."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # io.UnsupportedOperation is both
        return _StreamSink(stream)
    mode = os.fstat(fd).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode):
        flags = os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            return Sink(os.open(f"/proc/self/fd/{fd}", flags), nonblocking=True, owned=True)
        except OSError as exc:
            if exc.errno == errno.ENXIO:  # a FIFO whose reader has gone
                raise BrokenPipeError(errno.EPIPE, "the reader has gone") from None
            # No /proc: written from a thread, as a file is.
    if stat.S_ISSOCK(mode):
        return _SocketSink(fd, nonblocking=True, owned=False)
    return Sink(fd, nonblocking=False, owned=False)

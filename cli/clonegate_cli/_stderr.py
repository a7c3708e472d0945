"""stderr that never blocks the event loop while a run is on (issue 38).

Progress lines, warnings and log records are written from synchronous code (event
hooks, logging), so they cannot wait at a checkpoint. When stderr is a pipe or a
socket whose reader stops reading, a blocking write there would hold the event loop,
as stdout's did, and no signal would be received. So, during a run, what cannot be
written at once is kept (up to ``_KEPT`` bytes; past that, whole lines are dropped and
counted) and written by a task as the reader takes it. Outside a run, and for a
terminal or a file, stderr is written as it is: there a write blocks with signals
acting as usual (their default actions, or KeyboardInterrupt).
"""

from __future__ import annotations

import os
import stat
import sys
from typing import TextIO

import trio

from ._writer import Sink, sink_for

__all__ = ["Diagnostics"]

_KEPT = 256 * 1024  # bytes of lines kept for a reader who is behind


class Diagnostics:
    """A text stream for stderr: what a log handler and the progress lines write to."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._given = stream
        self._sink: Sink | None = None  # while a run is on, for a pipe or a socket
        self._kept = bytearray()
        self._more: trio.Event | None = None  # set when there is something to write
        self._progress = trio.Event()  # set, and replaced, as the reader takes some
        self._gone = False
        self.dropped = 0  # lines dropped: the reader was too far behind

    @property
    def _stream(self) -> TextIO:
        # sys.stderr as it is now: while the live display is drawn on a terminal, Rich's
        # stand-in, which prints a line above the display. Written past it, a log line
        # was erased by the next frame, and left the last one's top lines (issue 44).
        return self._given if self._given is not None else sys.stderr

    def write(self, text: str) -> int:
        if self._gone:
            return len(text)
        if self._sink is None:
            self._write_kept()
            return self._stream.write(text)
        data = text.encode(self._stream.encoding or "utf-8", "backslashreplace")
        if len(self._kept) + len(data) > _KEPT:
            self.dropped += text.count("\n") or 1
            return len(text)
        self._kept += data
        self._write_now()
        return len(text)

    def flush(self) -> None:
        if self._sink is None and not self._gone:
            self._write_kept()
            self._stream.flush()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Write what is kept as the reader takes it, until cancelled (the run's end);
        from its start (``nursery.start``) until then, writes never block."""
        self._start()
        task_status.started()
        try:
            while True:
                if self._sink is not None and self._kept:
                    await self._sink.wait_writable()
                    self._write_now()
                else:
                    self._more = trio.Event()
                    await self._more.wait()
        finally:
            self._stop()

    async def drain(self) -> None:
        """Return once what is kept is written (while :meth:`run` runs)."""
        await trio.lowlevel.checkpoint()
        while self._sink is not None and self._kept:
            await self._progress.wait()

    def abandon(self) -> None:
        """Drop what is still kept (its reader did not take it in time), and whatever
        comes later: a stderr nobody reads is written no more."""
        if self._kept:
            self.dropped += self._kept.count(b"\n")
            self._kept.clear()
            self._gone = True

    def _start(self) -> None:
        try:
            mode = os.fstat(self._stream.fileno()).st_mode
        except (OSError, ValueError):
            return
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            self._stream.flush()
            try:
                sink = sink_for(self._stream)
            except OSError:  # the reader has gone: written as it is (and fails there)
                return
            if sink.nonblocking:
                self._sink = sink
            else:
                sink.close()

    def _write_now(self) -> None:
        assert self._sink is not None
        try:
            while self._kept:
                written = self._sink.try_write(memoryview(bytes(self._kept)))
                del self._kept[:written]
        except BlockingIOError:
            if self._more is not None:
                self._more.set()  # the task waits until the reader takes some
        except OSError:  # the reader or the terminal is gone: nothing more to say
            self._kept.clear()
        self._progress.set()  # for drain
        self._progress = trio.Event()

    def _stop(self) -> None:
        # What is still kept is written by the next plain write or flush: after the
        # run's signal receiver has closed, where a blocking write is interrupted by a
        # signal as usual. Not here: a signal could still be waiting to be received.
        sink, self._sink = self._sink, None
        if sink is not None:
            sink.close()

    def _write_kept(self) -> None:
        kept, self._kept = bytes(self._kept), bytearray()
        if kept:
            self._stream.write(kept.decode(self._stream.encoding or "utf-8", "replace"))

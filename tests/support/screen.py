"""clonegate on a pseudo-terminal of a given size, read as a person sees it: the bytes
go through a terminal emulator (pyte), and the screen is kept after every frame the
live display drew (ADR 0021).

Rich begins every redraw of a live display by going back to its first line, a carriage
return and an erase-line (``\\r\\x1b[2K``): the screen just before one is a finished
frame. Everything runs in the test's trio loop, so a test can hold a server, wait for
the frame that shows it, and go on (ADR 0010: no sleeps)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import signal
import struct
import subprocess
import sys
import termios
from collections.abc import Callable
from dataclasses import dataclass, field

import pyte
import trio

_REDRAW = b"\r\x1b[2K"
# The live display's lines (``_frame.py``), found in a screen joined into one line.
_BAR = re.compile(r" (\d+)/(\d+|\?) · (\d+) failed · ")
_STATES = re.compile(
    r"queued (-?\d+) · waiting to retry (\d+) · cloning (\d+) · analyzing (\d+)"
    r" · done (\d+) · failed (\d+)"
)


@dataclass(frozen=True)
class Frame:
    """A screen as it was after one frame: its lines, right-trimmed."""

    lines: tuple[str, ...]

    @property
    def text(self) -> str:
        """The lines joined with spaces: a line Rich wrapped reads whole again."""
        return " ".join(line for line in self.lines if line)

    def states(self) -> dict[str, int] | None:
        """Repositories per state, as the display's states line says; None if none."""
        found = _STATES.search(self.text)
        if found is None:
            return None
        names = ("queued", "waiting to retry", "cloning", "analyzing", "done", "failed")
        return dict(zip(names, map(int, found.groups()), strict=True))

    def bar(self) -> tuple[int, int | None, int] | None:
        """(finished, total or None for "?", failed) from the progress bar's line."""
        found = _BAR.search(self.text)
        if found is None:
            return None
        total = None if found[2] == "?" else int(found[2])
        return int(found[1]), total, int(found[3])

    def slots(self) -> list[str]:
        """The slot rows, as drawn."""
        return [line for line in self.lines if re.match(r"slot \d+ ", line)]


@dataclass
class Terminal:
    """A pseudo-terminal of ``columns`` x ``rows`` running ``python -m clonegate``."""

    columns: int
    rows: int = 40
    piped: bool = False  # stdout is a pipe (``| jq``), read into ``stdout``; stderr is the terminal
    raw: bytearray = field(default_factory=bytearray)  # every byte written to the terminal
    stdout: bytearray = field(default_factory=bytearray)  # what the pipe got, when piped
    frames: list[Frame] = field(default_factory=list)
    process: trio.Process | None = None
    _screen: pyte.Screen = field(init=False)
    _stream: pyte.ByteStream = field(init=False)
    _pending: bytes = b""  # the frame being drawn: fed once the next one begins
    _changed: trio.Event = field(default_factory=trio.Event)
    _ended: bool = False

    def __post_init__(self) -> None:
        self._screen = pyte.Screen(self.columns, self.rows)
        self._stream = pyte.ByteStream(self._screen)

    async def run(self, *args: str, env: dict[str, str]) -> int:
        """Run clonegate to its end; its exit status. Start it in a nursery."""
        leader, follower = pty.openpty()
        size = struct.pack("HHHH", self.rows, self.columns, 0, 0)
        fcntl.ioctl(follower, termios.TIOCSWINSZ, size)
        # The size is the terminal's, as a person's is: not COLUMNS or LINES.
        inherited = {k: v for k, v in os.environ.items() if k not in _SCREEN_VARIABLES}
        try:
            self.process = await trio.lowlevel.open_process(
                [sys.executable, "-m", "clonegate", *args],
                stdin=follower,
                stdout=subprocess.PIPE if self.piped else follower,
                stderr=follower,
                env={**inherited, "TERM": "xterm-256color", **env},
            )
        finally:
            os.close(follower)
        os.set_blocking(leader, False)
        try:
            async with trio.open_nursery() as nursery:
                if self.process.stdout is not None:
                    nursery.start_soon(self._read_pipe, self.process.stdout)
                await self._read(leader)
            return await self.process.wait()
        finally:
            os.close(leader)
            if self.process.returncode is None:  # the test failed or timed out
                self.process.kill()
                with trio.move_on_after(10, shield=True):  # reaped, within a bound
                    await self.process.wait()

    def interrupt(self) -> None:
        """Ctrl-C, as the terminal sends it to the program."""
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)

    async def wait_for(self, seen: Callable[[Frame], bool]) -> Frame:
        """The first frame, from now on, for which ``seen(frame)`` is true."""
        checked = len(self.frames)
        while True:
            for frame in self.frames[checked:]:
                if seen(frame):
                    return frame
            checked = len(self.frames)
            if self._ended:
                raise AssertionError("the program ended before that frame was drawn")
            await self._changed.wait()

    @property
    def rows_as_drawn(self) -> list[str]:
        """The screen's rows now, each as wide as the terminal (spaces included)."""
        return list(self._screen.display)

    @property
    def screen(self) -> Frame:
        """The screen now (the last frame included once the program has ended)."""
        return Frame(tuple(line.rstrip() for line in self._screen.display))

    async def _read(self, leader: int) -> None:
        while True:
            await trio.lowlevel.wait_readable(leader)
            try:
                chunk = os.read(leader, 65536)
            except BlockingIOError:
                continue
            except OSError:  # EIO: every end of the terminal's other side is closed
                chunk = b""
            self.raw += chunk
            self._take(chunk)
            if not chunk:
                self._ended = True
                self._signal()
                return

    async def _read_pipe(self, pipe: trio.abc.ReceiveStream) -> None:
        async with pipe:
            while chunk := await pipe.receive_some():
                self.stdout += chunk

    def _take(self, chunk: bytes) -> None:
        """Feed the emulator every frame that is complete (the next has begun); at the
        end (an empty ``chunk``), the rest."""
        data, start = self._pending + chunk, 0
        while (at := data.find(_REDRAW, start + 1)) != -1:
            self._feed(data[start:at])
            start = at
        self._pending = data[start:]
        if not chunk:
            self._feed(self._pending)
            self._pending = b""
        self._signal()

    def _feed(self, data: bytes) -> None:
        self._stream.feed(data)
        self.frames.append(self.screen)

    def _signal(self) -> None:
        self._changed.set()
        self._changed = trio.Event()


_SCREEN_VARIABLES = {"COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TERM"}

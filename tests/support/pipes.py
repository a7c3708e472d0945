"""A pipe that is already full, for what a program does when its output blocks."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def full_pipe() -> Iterator[tuple[int, int]]:
    """A pipe already full, whose read end is held open and never read: every write to
    it blocks (or would block)."""
    read_end, write_end = os.pipe()
    try:
        os.set_blocking(write_end, False)
        try:
            while True:
                os.write(write_end, b"x" * 65536)
        except BlockingIOError:
            pass
        # The child shares this description: it gets it blocking, as a shell gives it.
        os.set_blocking(write_end, True)
        yield read_end, write_end
    finally:
        os.close(read_end)
        os.close(write_end)

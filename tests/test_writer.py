"""The command line's results writer (issue 38): never blocks the event loop."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TextIO

import trio
import trio.testing

from clonegate_cli._writer import ResultsWriter

from .support.pipes import full_pipe


def _text(fd: int, *, closefd: bool = True) -> TextIO:
    return open(fd, "w", closefd=closefd)  # the caller closes it


async def test_a_full_pipe_holds_the_writer_never_the_loop() -> None:
    with full_pipe() as (_read_end, write_end), _text(write_end, closefd=False) as stream:
        writer = ResultsWriter(stream)
        # The pipe's own open file stays blocking: the shell's, the next program's.
        assert os.get_blocking(write_end)
        queued = 0
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)

            async def produce() -> None:
                nonlocal queued
                while True:
                    await writer.write("x" * 100 + "\n", reports=1)
                    queued += 1

            nursery.start_soon(produce)
            # Everything waits at a checkpoint: the buffer is full, the pipe too.
            await trio.testing.wait_all_tasks_blocked()
            nursery.cancel_scope.cancel()
        assert queued > 0
        assert writer.abandon() == queued  # none of them reached the full pipe


async def test_a_reader_who_reads_gets_everything_in_order() -> None:
    read_end, write_end = os.pipe()
    lines = [f"report {i}\n" for i in range(200)]
    received = b""
    with _text(write_end) as stream:
        writer = ResultsWriter(stream)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            for line in lines:
                await writer.write(line, reports=1)
            writer.close()
            reader = trio.lowlevel.FdStream(read_end)
            while len(received) < len("".join(lines)):
                received += await reader.receive_some()
        assert writer.abandon() == 0
    await reader.aclose()
    assert received.decode() == "".join(lines)


async def test_a_file_is_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "results.jsonl"
    with target.open("w") as stream:
        writer = ResultsWriter(stream)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(writer.run)
            for i in range(50):
                await writer.write(f"{i}\n", reports=1)
            writer.close()
        assert writer.abandon() == 0
    assert target.read_text() == "".join(f"{i}\n" for i in range(50))

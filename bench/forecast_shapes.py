"""Repositories of the shapes whose clones the memory forecasts must track (issue 46).

Each is generated deterministically (a seeded generator, fixed dates) and cached: a
second benchmark run in the same cache directory reuses it.
"""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from tests.support.repos import GIT_ENV, git

# The delta-heavy full history: ~4,000 files, 6,000 commits, ~100k objects.
DELTA_DIRS, DELTA_FILES_PER_DIR, DELTA_COMMITS, DELTA_EDITS = 40, 100, 6000, 7
_LINE = 100  # hexadecimal characters per line of a generated file


def _stream_into(bare: Path, chunks: object) -> None:
    """Feed the fast-import commands ``chunks`` yields, without holding them all."""
    process = subprocess.Popen(
        ["git", "-C", str(bare), "fast-import", "--quiet"],
        stdin=subprocess.PIPE,
        env={**os.environ, **GIT_ENV},
    )
    assert process.stdin is not None
    for chunk in chunks:  # type: ignore[attr-defined]
        process.stdin.write(chunk)
    process.stdin.close()
    if process.wait():
        raise RuntimeError(f"git fast-import failed in {bare}")


def _blob(path: str, lines: list[bytes]) -> bytes:
    body = b"\n".join(lines) + b"\n"
    return f"M 644 inline {path}\ndata {len(body)}\n".encode() + body + b"\n"


def _commit(number: int) -> bytes:
    parent = f"from :{number - 1}\n" if number > 1 else ""
    return (
        f"commit refs/heads/main\nmark :{number}\n"
        f"committer F <f@example.invalid> {1_700_000_000 + number} +0000\ndata 2\nc\n{parent}"
    ).encode()


def make_delta_history(bare: Path, *, commits: int = DELTA_COMMITS, scale: int = 1) -> None:
    """A project's full history: 4,000 text files of 80 lines (in 40 directories), and
    ``commits`` commits that each rewrite 10 lines of 7 files: the pack is mostly
    deltas of blobs and trees on chains of up to 50 (``repack``'s default depth),
    as a real project's is. ``scale`` divides the number of files (a smoke test)."""
    rng = random.Random(46)
    dirs, per_dir = DELTA_DIRS // scale, DELTA_FILES_PER_DIR // scale
    files = {
        f"src/d{d:02}/f{f:03}.txt": [rng.randbytes(_LINE // 2).hex().encode() for _ in range(80)]
        for d in range(dirs)
        for f in range(per_dir)
    }
    names = sorted(files)

    def chunks() -> object:
        yield _commit(1)
        for name in names:
            yield _blob(name, files[name])
        for number in range(2, commits + 1):
            yield _commit(number)
            for name in rng.sample(names, DELTA_EDITS):
                lines = files[name]
                start = rng.randrange(0, 70)
                for i in range(start, start + 10):
                    lines[i] = rng.randbytes(_LINE // 2).hex().encode()
                yield _blob(name, lines)

    git("init", "-q", "--bare", "-b", "main", str(bare))
    _stream_into(bare, chunks())
    # fast-import stores most versions whole: deltas found again, as a host packs.
    git("-C", str(bare), "repack", "-adfq", "--window=10", "--depth=50")


def make_many_small_files(bare: Path, *, files: int = 30_000) -> None:
    """Three commits of ``files`` small distinct files: a depth-1 clone of it is a
    pack of whole objects, one per file (and few deltas, from the last commit)."""
    rng = random.Random(47)

    def chunks() -> object:
        for number in range(1, 4):
            yield _commit(number)
            for f in range(files if number == 1 else files // 100):
                body = [f"# file {f} v{number}".encode(), rng.randbytes(40).hex().encode()]
                yield _blob(f"pkg{f % 300:03}/m{f}.py", body)

    git("init", "-q", "--bare", "-b", "main", str(bare))
    _stream_into(bare, chunks())
    git("-C", str(bare), "repack", "-adq")

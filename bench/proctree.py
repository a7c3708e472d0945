"""Peak resident memory of a whole process tree, sampled from /proc (Linux)."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from types import TracebackType


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def _rss_bytes(pid: int) -> int:
    try:
        for line in (Path("/proc") / str(pid) / "status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def tree_rss(root: int, exclude: frozenset[int] = frozenset()) -> int:
    """The summed RSS of ``root`` and all its descendants, now, less the ``exclude`` subtrees."""
    tree = _children()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        if pid in exclude:
            continue
        total += _rss_bytes(pid)
        stack.extend(tree.get(pid, ()))
    return total


class PeakTreeRSS:
    """``with PeakTreeRSS() as peak: ...`` then ``peak.bytes``: sampled every ``interval`` s."""

    def __init__(
        self, root: int | None = None, interval: float = 0.01, exclude: frozenset[int] = frozenset()
    ) -> None:
        self.root = root if root is not None else os.getpid()
        self.exclude = exclude
        self.interval = interval
        self.bytes = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> PeakTreeRSS:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while True:
            self.bytes = max(self.bytes, tree_rss(self.root, self.exclude))
            if self._stop.wait(self.interval):
                return

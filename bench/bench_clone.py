"""20 shallow clones from loopback `git daemon`, two at a time: clonegate vs the git CLI.

    python bench/bench_clone.py            # the issue-3 benchmark (about a minute)
    python bench/bench_clone.py --quick    # 4 clones of a small repository: a smoke test

Contenders, run alternately in the same process, best of ``--rounds``:
- ``xargs -P 2 git clone --depth 1 --single-branch`` (with checkout, git's default),
  and the same with ``--bare``;
- clonegate: ``WeightedSemaphore(2)`` around ``DulwichVCS().clone`` (bare: the analyzer
  reads the object store), and the same with ``checkout=True`` for a like-for-like view.
Reported: wall time, its ratio to git (target at most 1.5x), and the peak RSS summed
over the whole process tree (this process and its workers, or xargs and its gits).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import trio

from bench.proctree import PeakTreeRSS
from clonegate import CloneSettings, DulwichVCS, WeightedSemaphore
from tests.support.repos import git, make_large_repo
from tests.support.servers import git_daemon

LIMIT = 2


def git_cli(bare: bool) -> Callable[[str, int, Path], int]:
    extra = ["--bare"] if bare else []
    return lambda url, clones, into: _xargs_git(url, clones, into, extra)


def _xargs_git(url: str, clones: int, into: Path, extra: list[str]) -> int:
    git_clone = ["git", "clone", "-q", "--depth", "1", "--single-branch", *extra]
    command = ["xargs", "-P", str(LIMIT), "-I{}", *git_clone, url, str(into / "{}")]
    with (
        subprocess.Popen(command, stdin=subprocess.PIPE, text=True) as xargs,
        PeakTreeRSS(xargs.pid) as peak,
    ):
        xargs.communicate("\n".join(str(i) for i in range(clones)))
    if xargs.returncode:
        raise RuntimeError(f"git clone failed: exit {xargs.returncode}")
    return peak.bytes


def clonegate(checkout: bool, server_pid: int) -> Callable[[str, int, Path], int]:
    def run(url: str, clones: int, into: Path) -> int:
        async def main() -> None:
            gate = WeightedSemaphore(LIMIT)
            vcs = DulwichVCS(CloneSettings(checkout=checkout, work_dir=into))

            async def one() -> None:
                async with gate:
                    source = await vcs.clone(url)
                await source.aclose()

            async with trio.open_nursery() as nursery:
                for _ in range(clones):
                    nursery.start_soon(one)

        # This process and its workers; not the server, which this process started.
        with PeakTreeRSS(exclude=frozenset({server_pid})) as peak:
            trio.run(main)
        return peak.bytes

    return run


def measure(contender: Callable[[str, int, Path], int], url: str, clones: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as into:
        start = time.perf_counter()
        peak = contender(url, clones, Path(into))
        return time.perf_counter() - start, peak


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    clones, files, commits = (4, 50, 10) if args.quick else (20, 2000, 500)
    rounds = 1 if args.quick else args.rounds
    with tempfile.TemporaryDirectory() as served:
        make_large_repo(Path(served), "mid", files=files, commits=commits)
        pack = git("count-objects", "-vH", cwd=Path(served) / "mid.git")
        size = next(line for line in pack.splitlines() if line.startswith("size-pack"))
        with git_daemon(Path(served)) as daemon:
            contenders = {
                "git clone (xargs -P 2)": git_cli(bare=False),
                "git clone --bare (xargs -P 2)": git_cli(bare=True),
                "clonegate, bare (default)": clonegate(False, daemon.process.pid),
                "clonegate, with checkout": clonegate(True, daemon.process.pid),
            }
            url = daemon.url("mid")
            contenders["clonegate, bare (default)"](url, 2, Path(served))  # start the workers
            best: dict[str, tuple[float, int]] = {}
            for _ in range(rounds):
                for name, contender in contenders.items():
                    seconds, rss = measure(contender, url, clones)
                    old = best.get(name, (float("inf"), 0))
                    best[name] = (min(old[0], seconds), max(old[1], rss))
    trio_parallel_note = "clonegate's trio-parallel workers are reused across clones"
    pack_size = size.split(":")[1].strip()
    print(
        f"{clones} clones of a repository with {files} files and {commits} commits "
        f"(pack {pack_size}), limit {LIMIT}; best of {rounds}; {trio_parallel_note}\n"
    )
    print("| contender | wall s | vs git | peak RSS of the process tree |")
    print("|---|---|---|---|")
    base = best["git clone (xargs -P 2)"][0]
    for name, (seconds, rss) in best.items():
        print(f"| {name} | {seconds:.2f} | {seconds / base:.2f}x | {rss / 2**20:.0f} MiB |")
    if args.quick:
        return 0
    bare_ratio = best["clonegate, bare (default)"][0] / best["git clone --bare (xargs -P 2)"][0]
    print(f"\nclonegate bare vs git --bare: {bare_ratio:.2f}x")
    ratio = best["clonegate, bare (default)"][0] / base
    verdict = "PASS" if ratio <= 1.5 else "FAIL"
    print(f"\n{verdict}: clonegate (default) within 1.5x of git: {ratio:.2f}x")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    sys.exit(main())

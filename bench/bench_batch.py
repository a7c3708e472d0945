"""Whole `clonegate analyze` runs against git itself, side by side (issue 14).

    python bench/bench_batch.py             # about three minutes
    python bench/bench_batch.py --quick     # small repositories: a smoke test

Every contender is a fresh command, as a user runs it, against repositories served by
`git daemon` on 127.0.0.1 under distinct names (one symlink per clone, so that
clonegate's duplicate detection does not skip any). Contenders run alternately; best
of ``--rounds``.

- 20 shallow clones at two at a time, of a real repository (``--bundle``, default the
  requests bundle of tests/fixtures/corpus) and of a generated one (2,000 files, 500
  commits): ``clonegate analyze -j 2`` (clone *and* analysis, start-up and exit) vs
  ``xargs -P 2 git clone --bare --depth 1``.
- 24 shallow clones of the generated repository: ``-j 8`` vs ``-j 2``.
- Peak RSS of the command's process tree (sampled every 10 ms): 8 full-history clones
  of a large generated repository at ``-j 1`` vs one alone.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.installed import compile_sources
from bench.proctree import PeakTreeRSS
from tests.support.repos import git, make_large_repo
from tests.support.servers import git_daemon

ROOT = Path(__file__).resolve().parents[1]

REQUESTS_BUNDLE = ROOT / "tests" / "fixtures" / "corpus" / "requests.bundle"


def serve_copies(served: Path, name: str, copies: int) -> list[str]:
    """``copies`` names for ``name.git`` (symlinks), as repository paths."""
    names = [f"{name}-{i}" for i in range(copies)]
    for copy in names:
        (served / f"{copy}.git").symlink_to(served / f"{name}.git")
    return names


def run(command: list[str], stdin: str | None = None) -> tuple[float, int]:
    """Seconds and peak RSS of the process tree of ``command``, which must succeed."""
    start = time.perf_counter()
    with (
        subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            text=True,
        ) as process,
        PeakTreeRSS(process.pid) as peak,
    ):
        process.communicate(stdin)
    elapsed = time.perf_counter() - start
    if process.returncode:
        raise RuntimeError(f"{command[:4]} failed: exit {process.returncode}")
    return elapsed, peak.bytes


def clonegate(urls: list[str], *options: str) -> tuple[float, int]:
    command = [sys.executable, "-m", "clonegate", "analyze", "--format", "jsonl", *options]
    return run([*command, *urls])


def xargs_git(urls: list[str], into: Path, jobs: int) -> tuple[float, int]:
    # One target directory per URL, named after its line number by a tiny shell.
    clone = f'git clone -q --bare --depth 1 --single-branch "$1" "{into}/$$-$RANDOM"'
    command = ["xargs", "-P", str(jobs), "-n", "1", "sh", "-c", clone, "sh"]
    return run(command, "\n".join(urls))


def best_of(rounds: int, contenders: dict[str, object]) -> dict[str, tuple[float, int]]:
    best: dict[str, tuple[float, int]] = {}
    for _ in range(rounds):
        for name, contender in contenders.items():
            seconds, peak = contender()  # type: ignore[operator]
            old = best.get(name, (float("inf"), 0))
            best[name] = (min(old[0], seconds), max(old[1], peak))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--bundle", type=Path, default=REQUESTS_BUNDLE)
    args = parser.parse_args(argv)
    compile_sources()  # measured as installed (bench/installed.py)
    quick = args.quick
    rounds = 1 if quick else args.rounds
    clones, wide, full = (4, 4, 2) if quick else (20, 24, 8)
    mid_size = (50, 10) if quick else (2000, 500)
    large_size = (200, 50) if quick else (20_000, 3_000)
    with tempfile.TemporaryDirectory() as tmp:
        served, into = Path(tmp) / "served", Path(tmp) / "into"
        served.mkdir()
        make_large_repo(served, "mid", files=mid_size[0], commits=mid_size[1])
        make_large_repo(served, "large", files=large_size[0], commits=large_size[1])
        git("clone", "-q", "--bare", str(args.bundle), str(served / "real.git"))
        with git_daemon(served) as daemon:
            real = [daemon.url(n) for n in serve_copies(served, "real", clones)]
            mid = [daemon.url(n) for n in serve_copies(served, "mid", wide)]
            large = [daemon.url(n) for n in serve_copies(served, "large", full)]
            clonegate(real[:1])  # the first run of a fresh tree pays for nothing twice

            def fresh() -> Path:
                subprocess.run(["rm", "-rf", str(into)], check=True)
                into.mkdir()
                return into

            results = best_of(
                rounds,
                {
                    "real: clonegate -j 2": lambda: clonegate(real, "-j", "2"),
                    "real: xargs git": lambda: xargs_git(real, fresh(), 2),
                    "generated: clonegate -j 2": lambda: clonegate(mid[:clones], "-j", "2"),
                    "generated: xargs git": lambda: xargs_git(mid[:clones], fresh(), 2),
                    "24 clones: -j 8": lambda: clonegate(mid, "-j", "8"),
                    "24 clones: -j 2": lambda: clonegate(mid, "-j", "2"),
                    "full clones: 8 at -j 1": lambda: clonegate(large, "-j", "1", "--depth", "0"),
                    "full clones: one": lambda: clonegate(large[:1], "--depth", "0"),
                },
            )
    print(f"best of {rounds}; {os.cpu_count()} CPUs\n")
    print("| contender | wall s | peak tree RSS |")
    print("|---|---|---|")
    for name, (seconds, peak) in results.items():
        print(f"| {name} | {seconds:.3f} | {peak / 2**20:.0f} MiB |")

    def ratio(a: str, b: str, index: int = 0) -> str:
        return f"{results[a][index] / results[b][index]:.2f}x"

    print()
    print(
        f"- {clones} shallow clones, real repository, vs git: "
        f"{ratio('real: clonegate -j 2', 'real: xargs git')} (target <= 1.10x)"
    )
    print(
        f"- {clones} shallow clones, generated repository, vs git: "
        f"{ratio('generated: clonegate -j 2', 'generated: xargs git')} (target <= 1.10x)"
    )
    print(
        f"- {wide} clones, -j 8 / -j 2: {ratio('24 clones: -j 8', '24 clones: -j 2')} "
        "(target <= 1.0x)"
    )
    print(
        f"- peak tree RSS, {full} full clones at -j 1 / one: "
        f"{ratio('full clones: 8 at -j 1', 'full clones: one', 1)} (target <= 1.3x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a memory budget costs where memory is plentiful (issue 46): `clonegate analyze`
without a budget against the same command with one, alternating, in pairs.

    python bench/bench_budget_cost.py               # 10 pairs of each shape
    python bench/bench_budget_cost.py --pairs 20
    python bench/bench_budget_cost.py --before DIR  # a tree of the code before, beside
    python bench/bench_budget_cost.py --quick       # two pairs, small repositories

Shapes, those of ``bench_batch.py`` and ``bench_first_result.py``: 20 shallow clones at
``-j 2`` of the requests bundle (tests/fixtures/corpus) and of a generated repository
(2,000 files, 500 commits), and the first result of one tiny repository. Each round
runs every contender once, in turn, as fresh commands; the machine is shared, so only
medians of the ratios within a round are compared, with the load average beside them.
``--before DIR`` (a directory holding ``clonegate/`` and ``cli/clonegate_cli/``) runs
that tree's code with the budget too, so a change is measured in the same rounds.
Peak RSS of each command's process tree is sampled every 10 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_batch import REQUESTS_BUNDLE, serve_copies
from bench.bench_first_result import before_environment
from bench.installed import compile_sources
from bench.proctree import PeakTreeRSS
from tests.support.repos import git, make_large_repo, make_repo
from tests.support.servers import git_daemon

ROOT = Path(__file__).resolve().parents[1]
OFF, ON = ("--memory-budget", "off"), ("--memory-budget", "auto")


def this_tree() -> dict[str, str]:
    """The environment that runs this tree's code (never an installed copy)."""
    return {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'cli'}"}


def timed(urls: list[str], options: tuple[str, ...], env: dict[str, str]) -> tuple[float, int]:
    """Seconds and peak RSS of the command's process tree (sampled every 10 ms)."""
    command = [sys.executable, "-m", "clonegate", "analyze", "--format", "jsonl", *options]
    start = time.perf_counter()
    # Out of the tree: sys.path[0] of `-m` is the working directory.
    with (
        subprocess.Popen(
            [*command, *urls],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tempfile.gettempdir(),
        ) as process,
        PeakTreeRSS(process.pid) as peak,
    ):
        process.wait()
    if process.returncode:
        raise RuntimeError(f"{command[:4]} failed: exit {process.returncode}")
    return time.perf_counter() - start, peak.bytes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--before", type=Path, help="a tree of the code before, run beside")
    parser.add_argument("--off", default="off", help="how the tree spells no budget")
    args = parser.parse_args(argv)
    pairs = 2 if args.quick else args.pairs
    clones, mid_size = (4, (50, 10)) if args.quick else (20, (2000, 500))
    compile_sources()
    here = this_tree()
    contenders: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
        "off": (("--memory-budget", args.off) if args.off else (), here),
        "auto": (ON, here),
    }
    if args.before is not None:
        contenders["auto, before"] = (ON, before_environment(args.before.resolve()))
    times: dict[tuple[str, str], list[float]] = {}
    peaks: dict[tuple[str, str], list[int]] = {}
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "served"
        served.mkdir()
        make_large_repo(served, "mid", files=mid_size[0], commits=mid_size[1])
        make_repo(served, "tiny", files={"test_a.py": b"def test_a():\n    pass\n"})
        git("clone", "-q", "--bare", str(REQUESTS_BUNDLE), str(served / "real.git"))
        with git_daemon(served) as daemon:
            shapes = {
                f"{clones} shallow clones of requests, -j 2": [
                    daemon.url(n) for n in serve_copies(served, "real", clones)
                ],
                f"{clones} shallow clones, generated, -j 2": [
                    daemon.url(n) for n in serve_copies(served, "mid", clones)
                ],
                "first result, one tiny repository": [daemon.url("tiny")],
            }
            for run in range(pairs + 1):  # the first round warms the page cache: not kept
                for shape, urls in shapes.items():
                    jobs = ("-j", "2") if len(urls) > 1 else ()
                    for name, (options, env) in contenders.items():
                        taken, peak = timed(urls, (*jobs, *options), env)
                        if run:
                            times.setdefault((shape, name), []).append(taken)
                            peaks.setdefault((shape, name), []).append(peak)
                if run:
                    loads.append(os.getloadavg()[0])
    print(f"{pairs} alternating rounds, load average {min(loads):.1f}-{max(loads):.1f}\n")
    print(
        "| shape | contender | median | best | median of its ratios to off, same round "
        "| peak tree RSS, median |"
    )
    print("|---|---|---|---|---|---|")
    for (shape, name), seconds in times.items():
        off = times[shape, "off"]
        ratios = [mine / theirs for mine, theirs in zip(seconds, off, strict=True)]
        print(
            f"| {shape} | {name} | {statistics.median(seconds):.3f} s | {min(seconds):.3f} s "
            f"| {statistics.median(ratios):.3f}x "
            f"| {statistics.median(peaks[shape, name]) / 2**20:.0f} MiB |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

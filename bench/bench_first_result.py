"""The first result, as a user gets it: the installed ``clonegate`` script against
``git clone --bare --depth 1``, one tiny repository from ``git daemon`` on 127.0.0.1.

    python bench/bench_first_result.py               # 20 alternating pairs
    python bench/bench_first_result.py --pairs 40
    python bench/bench_first_result.py --before DIR  # a tree of the code before, beside

Each pair runs git, then clonegate (and the code before, with ``--before``: a directory
holding ``clonegate/`` and ``cli/clonegate_cli/``, put first on ``PYTHONPATH``), as
fresh commands. The machine is shared: only medians of paired ratios are compared,
with the load average printed beside them. The sources are compiled first, as a
wheel install does (``bench/installed.py``).
"""

from __future__ import annotations

import argparse
import compileall
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.installed import compile_sources
from tests.support.repos import make_repo
from tests.support.servers import git_daemon

SCRIPT = Path(sys.executable).with_name("clonegate")  # the console script, as installed


def timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    # Not in the tree: sys.path[0] of a script is its own directory, never this one.
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=tempfile.gettempdir())
    return time.perf_counter() - start


def before_environment(tree: Path) -> dict[str, str]:
    """The environment that runs the code in ``tree`` through the same script."""
    for package in (tree / "clonegate", tree / "cli" / "clonegate_cli"):
        if not compileall.compile_dir(package, quiet=1):
            raise RuntimeError(f"could not compile {package}")
    return {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'cli'}"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="two pairs: a smoke test")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--before", type=Path, help="a tree of the code before, run beside")
    args = parser.parse_args(argv)
    pairs = 2 if args.quick else args.pairs
    if pairs < 1:
        parser.error("--pairs must be at least 1")
    compile_sources()
    contenders = {"clonegate": None} | (
        {"before": before_environment(args.before.resolve())} if args.before else {}
    )
    times: dict[str, list[float]] = {name: [] for name in ("git", *contenders)}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "served"
        served.mkdir()
        make_repo(served, "tiny", files={"test_a.py": b"def test_a():\n    pass\n"})
        with git_daemon(served) as daemon:
            url = daemon.url("tiny")
            analyze = [str(SCRIPT), "analyze", "--format", "json", url]
            for run in range(pairs + 1):  # the first round warms the page cache: not kept
                clone = ["git", "clone", "-q", "--bare", "--depth", "1", url, f"{tmp}/{run}.git"]
                round_ = {"git": timed(clone)}
                round_ |= {name: timed(analyze, env) for name, env in contenders.items()}
                if run:
                    for name, taken in round_.items():
                        times[name].append(taken)
                    loads.append(os.getloadavg()[0])
    print(f"{pairs} alternating rounds, load average {min(loads):.1f}-{max(loads):.1f}\n")
    print("| contender | median | best | median of its ratios to git in the same round |")
    print("|---|---|---|---|")
    for name, seconds in times.items():
        ratios = [mine / theirs for mine, theirs in zip(seconds, times["git"], strict=True)]
        print(
            f"| {name} | {statistics.median(seconds):.3f} s | {min(seconds):.3f} s "
            f"| {statistics.median(ratios):.2f}x |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

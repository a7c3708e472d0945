"""The whole CLI under load: 100 and 1,000 URLs, 10% bad, limit 2 (issue 7).

    python bench/bench_load.py            # about two minutes
    python bench/bench_load.py --quick    # 20 and 40 URLs, one limit: a smoke test

Ten real repositories served by loopback ``git daemon`` under distinct names, and bad
URLs of four kinds (refused port, missing repository, silent server, garbage server),
run through ``clonegate analyze -j 2 --clone-timeout 3``. Reported: wall time, peak
RSS of the CLI's whole process tree (sampled every 10 ms), the 1,000/100 ratio of
that peak (target: flat, within 10%), and the mean worker set-up and clone time of
the healthy repositories (``timings.setup`` and ``timings.clone``).

Then the limit as the server sees it: 12 copies of a 300-file repository, served
through a proxy at 256 KiB/s, at ``-j 1``, ``2`` and ``3``: the most connections ever
open, and the share of the time all slots were busy while repositories were still
queued (until the last one connected). The suite asserts the limit from the server's
log (ADR 0010); this share is a figure, not a test.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from bench.installed import compile_sources
from bench.proctree import PeakTreeRSS
from tests.support.load import load_scenario
from tests.support.proxy import ThrottlingProxy
from tests.support.repos import make_large_repo
from tests.support.servers import git_daemon


def run(total: int) -> tuple[float, int, int, float, float]:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / "tmp"
        work.mkdir()
        with load_scenario(Path(scratch) / "served", total) as scenario:
            listing = Path(scratch) / "urls.txt"
            listing.write_text("\n".join(scenario.urls) + "\n")
            start = time.perf_counter()
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "clonegate",
                    "analyze",
                    "--from-file",
                    str(listing),
                    "-j",
                    "2",
                    "--clone-timeout",
                    "3",
                    "--quiet",
                ],
                stdout=subprocess.PIPE,
                env={**os.environ, "TMPDIR": str(work)},
            )
            with PeakTreeRSS(process.pid) as peak:
                stdout, _ = process.communicate()
            wall = time.perf_counter() - start
    ok = [r["timings"] for r in map(json.loads, stdout.splitlines()) if r["status"] == "ok"]
    setup = sum(t["setup"] for t in ok) / len(ok)
    clone = sum(t["clone"] for t in ok) / len(ok)
    return wall, peak.bytes, process.returncode, setup, clone


async def limit_use(root: Path, work: Path, limit: int, copies: int) -> tuple[int, float]:
    """Most connections open at once, and the share of the queued time at the limit."""
    with git_daemon(root) as daemon:
        proxy = ThrottlingProxy(daemon.port, rate=256 * 1024)
        async with trio.open_nursery() as nursery:
            await nursery.start(proxy.serve)
            urls = [f"git://127.0.0.1:{proxy.port}/copy{n:02}.git" for n in range(copies)]
            await trio.run_process(
                [sys.executable, "-m", "clonegate", "analyze", "-j", str(limit), *urls],
                stdout=subprocess.DEVNULL,
                env={**os.environ, "TMPDIR": str(work)},
            )
            nursery.cancel_scope.cancel()
    return proxy.max_active, utilisation(proxy.timeline, limit)


def utilisation(timeline: list[tuple[float, int]], limit: int) -> float:
    """The share of the time ``limit`` connections were open, from the first connection
    to the last one's start (while work was still queued); ``timeline`` is a
    ThrottlingProxy's (time, connections open after the change)."""
    starts = [t for (_, before), (t, n) in itertools.pairwise(timeline) if n > before]
    window_end = max([timeline[0][0], *starts])
    busy = total = 0.0
    for (t, active), (t_next, _) in itertools.pairwise(timeline):
        if t >= window_end:
            break
        span = min(t_next, window_end) - t
        total += span
        busy += span if active == limit else 0.0
    return busy / total if total else 1.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    quick = parser.parse_args(argv).quick
    compile_sources()  # measured as installed (bench/installed.py)
    sizes = (20, 40) if quick else (100, 1000)
    results = {n: run(n) for n in sizes}
    print("| URLs | wall s | peak RSS of the tree | exit | mean set-up s | mean clone s |")
    print("|---|---|---|---|---|---|")
    for n, (wall, peak, code, setup, clone) in results.items():
        print(
            f"| {n:,} | {wall:.1f} | {peak / 2**20:.0f} MiB | {code} | {setup:.3f} | {clone:.3f} |"
        )
    small, large = sizes
    print(
        f"\npeak RSS {large:,} / {small:,} URLs: {results[large][1] / results[small][1]:.2f}x "
        "(target within 1.10x)\n"
    )
    copies = 4 if quick else 12
    with tempfile.TemporaryDirectory() as scratch:
        root, work = Path(scratch) / "served", Path(scratch) / "tmp"
        root.mkdir()
        work.mkdir()
        make_large_repo(root, "mid", files=300, commits=5)
        for n in range(copies):
            os.symlink("mid.git", root / f"copy{n:02}.git")
        print(f"| {copies} clones at 256 KiB/s | most connections | at the limit while queued |")
        print("|---|---|---|")
        for limit in (2,) if quick else (1, 2, 3):
            most, share = trio.run(limit_use, root, work, limit, copies)
            print(f"| -j {limit} | {most} | {share:.0%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

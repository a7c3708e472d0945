"""The whole CLI under load: 100 and 1,000 URLs, 10% bad, limit 2 (issue 7).

    python bench/bench_load.py            # about a minute
    python bench/bench_load.py --quick    # 20 and 40 URLs: a smoke test

Ten real repositories served by loopback ``git daemon`` under distinct names, and bad
URLs of four kinds (refused port, missing repository, silent server, garbage server),
run through ``clonegate analyze -j 2 --clone-timeout 1``. Reported: wall time, peak
RSS of the CLI's whole process tree (sampled every 10 ms), and the 1,000/100 ratio of
that peak (target: flat, within 10%).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.proctree import PeakTreeRSS  # noqa: E402
from tests.load import load_scenario  # noqa: E402


def run(total: int) -> tuple[float, int, int]:
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
                    "1",
                    "--quiet",
                ],
                stdout=subprocess.DEVNULL,
                env={**os.environ, "TMPDIR": str(work)},
            )
            with PeakTreeRSS(process.pid) as peak:
                code = process.wait()
            return time.perf_counter() - start, peak.bytes, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    sizes = (20, 40) if parser.parse_args(argv).quick else (100, 1000)
    results = {n: run(n) for n in sizes}
    print("| URLs | wall s | peak RSS of the tree | exit |")
    print("|---|---|---|---|")
    for n, (wall, peak, code) in results.items():
        print(f"| {n:,} | {wall:.1f} | {peak / 2**20:.0f} MiB | {code} |")
    small, large = sizes
    print(
        f"\npeak RSS {large:,} / {small:,} URLs: {results[large][1] / results[small][1]:.2f}x "
        "(target within 1.10x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

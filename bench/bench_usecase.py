"""The AnalyzeUseCase pipeline: throughput and memory with fakes, makespan with real clones.

    python bench/bench_usecase.py             # the issue-5 benchmark (about a minute)
    python bench/bench_usecase.py --quick     # small sizes: a smoke test

1. A fake instant VCS and analyzer: repositories per second through ``analyze_many``
   for 10,000 URLs (target at least 2,000/s), and the peak RSS of a fresh process
   running 1,000 against 10,000 URLs (target: flat). Each size runs in its own
   subprocess so one run's garbage cannot hide in the other's peak.
2. Real clones of 12 repositories from loopback ``git daemon``, limit 2: the batch's
   makespan against the ideal, the sum of the clone times divided by the limit
   (target at most 1.10x).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import trio

from clonegate import (
    ANALYZER_VERSION,
    AnalysisReport,
    AnalyzeUseCase,
    ClonedSource,
    CloneSettings,
    Credential,
    Inventory,
    RemoteHead,
    RepositoryFacts,
    RepositoryStatus,
    with_keep_clones,
    with_max_concurrent_clones,
)
from clonegate._adapters.clones import discard
from clonegate._app import compose
from tests.support.repos import make_large_repo
from tests.support.servers import git_daemon

WHEN = datetime(2024, 1, 1, tzinfo=UTC)


class InstantVCS:
    # The VCS port's figures (ADR 0017): a shallow clone, the default cap, no forecasts.
    depth: int | None = 1
    max_memory = 1 << 30
    opening_memory: int | None = None
    reports_progress = False
    idle_memory = 0  # keeps no worker between clones

    async def clone(
        self,
        url: str,
        destination: Path | None = None,
        *,
        credential: Credential | None = None,
        on_ready: Callable[[], object] | None = None,
        on_memory: Callable[[int], Awaitable[object]] | None = None,
        on_progress: Callable[[int], object] | None = None,
        keep_worker: bool = False,
    ) -> ClonedSource:
        if on_ready is not None:
            on_ready()
        await trio.lowlevel.checkpoint()
        return ClonedSource(
            url, Path("/nonexistent"), "main", "a" * 40, WHEN, 0, False, None, remove=discard
        )

    async def remote_head(self, url: str, *, credential: Credential | None = None) -> RemoteHead:
        raise NotImplementedError(f"{type(self).__name__} lists no remote HEAD")


class InstantAnalyzer:
    version: str | None = None  # states none: an incremental run refuses it
    processes: int | None = None

    async def analyze(self, source: ClonedSource) -> AnalysisReport:
        await trio.lowlevel.checkpoint()
        facts = RepositoryFacts(source.branch, source.commit, WHEN, 0, 0, 0)
        return AnalysisReport(facts, Inventory(), ANALYZER_VERSION)


def fake_run(count: int) -> dict[str, float]:
    """Run ``count`` URLs through the pipeline with fakes; clones are kept (nothing to remove)."""

    async def main() -> tuple[float, int]:
        uc = AnalyzeUseCase(
            with_keep_clones(),
            vcs=InstantVCS(),
            analyzer=InstantAnalyzer(),
        )
        urls = (f"https://git.example/org/repo{i}.git" for i in range(count))
        ok = 0
        start = time.perf_counter()
        async with uc.analyze_many(urls) as batch:
            async for report in batch:
                ok += report.status is RepositoryStatus.OK
        return time.perf_counter() - start, ok

    seconds, ok = trio.run(main)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"count": count, "seconds": seconds, "ok": ok, "peak_mib": peak_kib / 1024}


def fake_in_subprocess(count: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--fake", str(count)], capture_output=True, text=True, check=True
    )
    result: dict[str, float] = json.loads(out.stdout)
    return result


def real_makespan(repositories: int, limit: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as served:
        for i in range(repositories):
            # Sizes differ, as real batches do: 200 to 1,300 files.
            make_large_repo(Path(served), f"repo{i}", files=200 + 100 * i, commits=20)
        with git_daemon(Path(served)) as daemon:

            async def main() -> tuple[float, float]:
                uc = compose(
                    with_max_concurrent_clones(limit),
                    clone=CloneSettings(work_dir=Path(served)),
                    pool=None,
                )
                urls = [daemon.url(f"repo{i}") for i in range(repositories)]
                async with uc.analyze_many(urls[:2]) as warm:  # start the workers
                    [r async for r in warm]
                clone_seconds = 0.0
                start = time.perf_counter()
                async with uc.analyze_many(urls) as batch:
                    async for report in batch:
                        assert report.status is RepositoryStatus.OK, report.error
                        # A slot is held for the set-up (the worker) and the clone.
                        clone_seconds += report.timings.setup + report.timings.clone
                        last_clone_done = time.perf_counter()
                return last_clone_done - start, clone_seconds

            makespan, clone_sum = trio.run(main)
    return {"makespan": makespan, "clone_sum": clone_sum, "ideal": clone_sum / limit}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--fake", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.fake:
        print(json.dumps(fake_run(args.fake)))
        return 0
    small, large, repositories = (100, 1000, 3) if args.quick else (1000, 10_000, 12)
    runs = {n: fake_in_subprocess(n) for n in (small, large)}
    throughput = large / runs[large]["seconds"]
    growth = runs[large]["peak_mib"] / runs[small]["peak_mib"]
    print(
        f"fake instant VCS and analyzer, {large:,} URLs: {throughput:,.0f} repositories/s "
        "(target >= 2,000/s)"
    )
    print(
        f"peak RSS: {runs[small]['peak_mib']:.1f} MiB at {small:,} URLs, "
        f"{runs[large]['peak_mib']:.1f} MiB at {large:,} URLs ({growth:.2f}x; target flat)"
    )
    real = real_makespan(repositories, limit=2)
    ratio = real["makespan"] / real["ideal"]
    print(
        f"real clones, {repositories} repositories, limit 2: makespan {real['makespan']:.2f} s, "
        f"ideal (sum of clone times / 2) {real['ideal']:.2f} s: {ratio:.2f}x (target <= 1.10x)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A host that takes three clones at once, side by side (issue 43).

    python bench/bench_throttle.py             # 200 repositories, about three minutes
    python bench/bench_throttle.py --quick     # 40 repositories: a smoke test

The throttling smart-HTTP server of the tests (tests/support/throttling_http.py) in
front of tiny repositories: at most K = 3 requests in flight, a 429 with
``Retry-After: 1`` beyond that, 5% of pack answers reset mid-pack (seeded: the same
repositories every run), each request held ``SERVICE`` seconds (a clone of a real
forge takes a while; a tiny one here would not overlap). Each contender is the
library (DulwichVCS in its worker processes, the analyzer) against a fresh server,
one after the other in this process:

- ``-j 8 --adaptive``: the default; the host's limit finds K;
- ``-j 3``: the oracle, a fixed limit that knows K;
- ``-j 8 --no-adaptive``: retries alone;
- ``-j 8 --no-adaptive --retries 0``: clonegate before issue 43.

Figures: makespan and its ratio to the oracle's (target: adaptive <= 1.25x with every
repository ok), repositories ok and each failure's kind, the 429s and resets the
server recorded, the share of time after the first 429 during which more than K
clone attempts were open (from the server's records), and the adaptive limit's
timeline. Resets are retried once the retried kinds cover them (issue 43, W2): until
then a reset repository fails ``transport`` in every contender.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import trio

from bench.installed import compile_sources
from clonegate import (
    CloneSettings,
    Option,
    open_analyzer,
    with_adaptive,
    with_max_concurrent_clones,
    with_retries,
)
from clonegate._domain.adaptive import AdaptiveLimitStatistics
from tests.support.throttle_figures import attempts_of, many_repositories, share_above
from tests.support.throttling_http import throttling_http

K = 3
SERVICE = 0.2  # seconds each admitted request is held
RESETS = 0.05
SEED = 43
CONTENDERS: dict[str, list[Option]] = {
    "-j 8 --adaptive": [with_max_concurrent_clones(8)],
    "-j 3 (oracle)": [with_max_concurrent_clones(3), with_adaptive(False)],
    "-j 8 --no-adaptive": [with_max_concurrent_clones(8), with_adaptive(False)],
    "-j 8 --no-adaptive --retries 0": [
        with_max_concurrent_clones(8),
        with_adaptive(False),
        with_retries(0),
    ],
}


@dataclass
class Figures:
    seconds: float
    ok: int
    failed: Counter[str]
    throttled: int
    resets: int
    above_k: float  # share of the time after the first 429 with more than K attempts open
    limit: AdaptiveLimitStatistics | None


async def contender(base: Path, work: Path, names: list[str], options: list[Option]) -> Figures:
    clone = CloneSettings(work_dir=work, read_timeout=60)
    settings = {"limit": K, "retry_after": 1.0, "reset_fraction": RESETS, "seed": SEED}
    async with (
        throttling_http(base, service_time=SERVICE, **settings) as server,
        open_analyzer(*options, clone=clone) as uc,
    ):
        started = time.perf_counter()
        async with uc.analyze_many(server.url(name) for name in names) as batch:
            reports = [report async for report in batch]
        seconds = time.perf_counter() - started
        hosts = uc.host_statistics()
    failed = Counter(r.error.kind if r.error else r.status for r in reports if r.status != "ok")
    attempts = attempts_of(server)
    since = attempts.first_refusal
    return Figures(
        seconds=seconds,
        ok=sum(1 for r in reports if r.status == "ok"),
        failed=failed,
        throttled=sum(1 for r in server.requests if r.status == 429),
        resets=len(server.resets()),
        above_k=share_above(attempts.spans, K, since) if since is not None else 0.0,
        limit=next(iter(hosts.values()), None),
    )


def timeline_text(limit: AdaptiveLimitStatistics, width: int = 60) -> str:
    """The limit's size over the run: each change (seconds from the start: size), and
    one character per slice of the run, the size at its end."""
    changes = limit.timeline
    start, end = changes[0].time, changes[-1].time
    steps = " ".join(f"{c.time - start:.1f}:{c.size}" for c in changes[:40])
    more = f" ... ({len(changes) - 40} more)" if len(changes) > 40 else ""
    strip = ""
    for i in range(width):
        at = start + (end - start) * (i + 1) / width
        strip += str(next(c.size for c in reversed(changes) if c.time <= at))
    return f"changes (s:size): {steps}{more}\nsize over the run: {strip}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 repositories")
    args = parser.parse_args()
    compile_sources()  # measured as installed (bench/installed.py)
    count = 40 if args.quick else 200
    results: dict[str, Figures] = {}
    with tempfile.TemporaryDirectory(prefix="bench-throttle-") as tmp:
        base = Path(tmp) / "served"
        base.mkdir()
        names = many_repositories(base, count)
        for label, options in CONTENDERS.items():
            work = Path(tmp) / f"work-{len(results)}"
            work.mkdir()
            results[label] = trio.run(contender, base, work, names, options)
    oracle = results["-j 3 (oracle)"].seconds
    print(
        f"{count} repositories, K = {K}, {RESETS:.0%} resets (seed {SEED}), {SERVICE} s a request"
    )
    print()
    columns = ["contender", "makespan s", "/ oracle", "ok", "failed (kind)", "429s", "resets"]
    print("| " + " | ".join([*columns, "> K after 1st 429"]) + " |")
    print("|---|---|---|---|---|---|---|---|")
    for label, f in results.items():
        failed = ", ".join(f"{n} {kind}" for kind, n in sorted(f.failed.items())) or "0"
        print(
            f"| {label} | {f.seconds:.1f} | {f.seconds / oracle:.2f}x | {f.ok}/{count} | "
            f"{failed} | {f.throttled} | {f.resets} | {f.above_k:.1%} |"
        )
    adaptive = results["-j 8 --adaptive"].limit
    if adaptive is not None:
        print()
        print(
            f"adaptive host limit: {adaptive.decreases} decreases, {adaptive.increases} "
            f"increases, {adaptive.ignored_signals} signals ignored, final {adaptive.size}"
        )
        print(timeline_text(adaptive))


if __name__ == "__main__":
    main()

"""Fixed clone limits against the memory budget, in a real memory cgroup (issue 15).

    python bench/bench_memory.py            # about five minutes
    python bench/bench_memory.py --quick    # small repositories: a smoke test

For each batch, one full-history clone of its repository is first measured alone (the
command's whole tree, in a memory cgroup of its own); the batch then runs, side by
side and alternately, in a cgroup limited to 1.3 times that peak (v1 ``memory``
controller, no swap), as ``clonegate analyze --depth 0`` with ``-j 1``, ``-j 2``,
``-j 4`` (each with ``--memory-budget off``: a fixed count), ``--memory-budget auto``
(with the default ``-j 2`` as its ceiling),
``-j 4 --memory-budget auto``, and ``--memory-budget auto --db`` on a result store
that an earlier run of the same batch filled (untimed, in the same group): the
nightly re-run, whose budget starts from each repository's measured clone instead
of one clone alone:

- **data file**: 4 clones of a repository holding a 96 MiB data file and its edited
  version, one stored as a delta of the other (a 57 MB pack): resolving that delta
  holds both whole, so a clone needs far more memory than its pack for a while;
- **long history**: 8 clones of a repository of 111,000 small objects (a 57 MB
  pack, 500 commits of 200 random files): a clone's memory is its index, and its
  pack is mostly page cache, which the kernel can reclaim.
- **delta-heavy history** (issue 46): 4 clones of a project's full history, 4,000
  files and 6,000 commits, 103,085 objects of which 85,647 deltas (a 52 MB pack,
  ``bench/forecast_shapes.py``): a clone's memory is its records, the pack's pages
  its delta walk reads, and the chains in flight.
- **30,000 small files, depth 1**: 8 shallow clones of one commit of 30,000 small
  files (a 3 MB pack of whole objects).

``--contenders`` runs a subset (separated by semicolons), e.g. the issue's
``"-j 1;-j 2;-j 4;-j 4, budget auto"``. ``--factor`` sizes the cgroup (times one
clone alone; repeatable), ``--cache`` keeps the repositories, ``--before DIR`` runs
each budget contender from that source tree too, alternating in the same run.

Reported per contender: makespan (best of ``--rounds``), the group's peak charge
(``memory.max_usage_in_bytes``, processes and page cache), OOM kills and failed
clones (totals over the rounds). The target: the budget has no OOM kill, and its
makespan is at most 1.1x that of the fastest fixed limit with no OOM kill in any
round.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from bench.forecast_shapes import make_delta_history, make_many_small_files
from bench.installed import ROOT, compile_sources
from tests.support.cgroup import cgroup_unavailable, make_memory_heavy_repo, memory_cgroup
from tests.support.repos import fast_import, git
from tests.support.servers import git_daemon

MiB = 1 << 20
CONTENDERS = {
    "-j 1": ["-j", "1", "--memory-budget", "off"],  # a fixed count: the budget off
    "-j 2": ["-j", "2", "--memory-budget", "off"],
    "-j 4": ["-j", "4", "--memory-budget", "off"],
    "budget auto": ["--memory-budget", "auto"],  # as a user types it: -j 2 by default
    "-j 4, budget auto": ["-j", "4", "--memory-budget", "auto"],  # the budget decides more
    # + a primed store; no analysis cache, so that only the budget differs
    "budget auto, re-run": ["--memory-budget", "auto", "--cache-size", "0", "--db"],
}
# name, title, clones, depth (0: the full history)
BATCH_SHAPES = (
    ("data", "data file", 4, 0),
    ("history", "long history", 8, 0),
    ("delta", "delta-heavy history", 4, 0),
    ("small", "30,000 small files, depth 1", 8, 1),
)
BATCHES = tuple(shape[0] for shape in BATCH_SHAPES)
BUDGETS = ("budget auto", "-j 4, budget auto", "budget auto, re-run")


def _make_batches(served: Path, only: str | None, quick: bool) -> None:
    """The batches' repositories in ``served``, unless there from an earlier run."""
    data_mib, files, commits = (8, 20, 20) if quick else (96, 200, 500)
    makers: dict[str, Callable[[], object]] = {
        "data": lambda: make_memory_heavy_repo(served, "data", blob_mib=data_mib),
        "history": lambda: make_long_history_repo(served, "history", files=files, commits=commits),
        "delta": lambda: make_delta_history(
            served / "delta.git", **({"scale": 10, "commits": 200} if quick else {})
        ),
        "small": lambda: make_many_small_files(
            served / "small.git", **({"files": 3_000} if quick else {})
        ),
    }
    for name, make in makers.items():
        if only not in (None, name):
            continue
        if not any((served / f"{name}.git" / "objects" / "pack").glob("*.pack")):
            make()
        for i in range(8):
            link = served / f"{name}-{i}.git"
            if not link.exists():
                link.symlink_to(served / f"{name}.git")


def make_long_history_repo(root: Path, name: str, *, files: int, commits: int) -> None:
    """``commits`` commits each rewriting ``files`` files of 512 random bytes."""
    bare = root / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    rng = random.Random(15)
    stream = []
    for c in range(commits):
        stream.append(
            f"commit refs/heads/main\nmark :{c + 1}\n"
            f"committer F <f@example.invalid> {1_700_000_000 + c} +0000\ndata 2\nc\n"
            + (f"from :{c}\n" if c else "")
        )
        for f in range(files):
            stream.append(f"M 644 inline d{f % 20}/f{f}.bin\ndata 512\n")
            stream.append(rng.randbytes(256).hex() + "\n")
    fast_import(bare, "".join(stream).encode())


@dataclass
class Tally:
    seconds: list[float] = field(default_factory=list)
    peak: int = 0
    oom_kills: int = 0
    failed: int = 0
    stopped: int = 0  # runs killed after the stop time
    thrashed: int = 0  # runs that warned "memory thrashes" (ADR 0014)


def analyze(
    urls: list[str],
    options: list[str],
    limit: int | None,
    tmp: Path,
    stop: float = 3600,
    code: Path | None = None,
    depth: int = 0,
) -> Tally:
    """One run in a fresh cgroup; its makespan, peak charge, OOM kills and failures.
    A run still going after ``stop`` seconds (thrashing) is killed: every clone it
    had not reported counts as failed, and its makespan as ``stop``. ``code``: a
    source tree of clonegate to run instead of this one (the code before a change)."""
    command = [sys.executable, "-m", "clonegate", "analyze", "--depth", str(depth), *options, *urls]
    env = {**os.environ, "TMPDIR": str(tmp)}
    # ``-m`` puts the working directory first on the path, before PYTHONPATH: each
    # tree runs from its own root.
    code = code or ROOT
    env["PYTHONPATH"] = f"{code}{os.pathsep}{code / 'cli'}"
    with memory_cgroup(limit) as group:
        start = time.perf_counter()
        try:
            done = group.run(command, env=env, timeout=stop, cwd=code)
            output = done.stdout
        except subprocess.TimeoutExpired as expired:
            output = expired.stdout.decode() if isinstance(expired.stdout, bytes) else ""
            errors = expired.stderr.decode() if isinstance(expired.stderr, bytes) else ""
            reports = [json.loads(line) for line in output.splitlines()]
            ok = sum(r["status"] == "ok" for r in reports)
            failed = len(urls) - ok
            return Tally([stop], group.peak, group.oom_kills, failed, 1, _thrashed(errors))
        seconds = time.perf_counter() - start
        reports = [json.loads(line) for line in output.splitlines()]
        if len(reports) != len(urls):
            raise RuntimeError(f"{options}: {len(reports)} reports of {len(urls)}")
        failed = sum(r["status"] != "ok" for r in reports)
        return Tally([seconds], group.peak, group.oom_kills, failed, 0, _thrashed(done.stderr))


def _thrashed(stderr: str) -> int:
    """1 if the run's thrash watch warned (ADR 0014, "No silent thrash"), else 0."""
    return int("memory thrashes" in stderr)


def batch(
    name: str,
    urls: list[str],
    rounds: int,
    tmp: Path,
    contenders: dict[str, list[str]],
    factor: float = 1.3,
    before: Path | None = None,
    depth: int = 0,
    patience: float = 2.0,
) -> None:
    """``contenders`` side by side, alternately, in a cgroup of ``factor`` times one
    clone alone; with ``before`` (a source tree), each budget contender also runs
    that code, as ``before: <contender>``."""
    alone = analyze(urls[:1], [], None, tmp, depth=depth)
    limit = int(alone.peak * factor)
    if before is not None:
        contenders = {
            **contenders,
            **{f"before: {c}": o for c, o in contenders.items() if c in BUDGETS},
        }
    stop = max(30.0, patience * alone.seconds[0] * len(urls))  # one at a time, times that
    tallies = {contender: Tally() for contender in contenders}
    store = str(tmp / f"{name.replace(' ', '-')}.db")
    if "budget auto, re-run" in contenders:
        rerun = [*CONTENDERS["budget auto, re-run"], store]
        primed = analyze(urls, rerun, limit, tmp, stop, depth=depth)
        if primed.oom_kills or primed.failed or primed.stopped:  # partial figures: say so
            print(f"priming the store: {primed.oom_kills} OOM kills, {primed.failed} failed")
    for _ in range(rounds):
        for contender, options in contenders.items():
            with_store = [*options, store] if options[-1] == "--db" else options
            code = before if contender.startswith("before: ") else None
            run = analyze(urls, with_store, limit, tmp, stop, code, depth)
            tally = tallies[contender]
            tally.seconds += run.seconds
            tally.peak = max(tally.peak, run.peak)
            tally.oom_kills += run.oom_kills
            tally.failed += run.failed
            tally.stopped += run.stopped
            tally.thrashed += run.thrashed
    print(
        f"\n### {name}: {len(urls)} clones; one alone peaks at {alone.peak / MiB:.0f} MiB, "
        f"limit {limit / MiB:.0f} MiB ({factor}x); a run is stopped after {stop:.0f} s\n"
    )
    print(
        "| contender | makespan s (best) | all rounds s | peak MiB | OOM kills | failed | stopped "
        "| thrash warnings |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for contender, t in tallies.items():
        rounds_text = " / ".join(f"{s:.1f}" for s in t.seconds)
        print(
            f"| {contender} | {min(t.seconds):.2f} | {rounds_text} | {t.peak / MiB:.0f} "
            f"| {t.oom_kills} | {t.failed} | {t.stopped} | {t.thrashed} |"
        )
    safe = [
        c
        for c, t in tallies.items()
        if c.removeprefix("before: ") not in BUDGETS and t.oom_kills == t.failed == t.stopped == 0
    ]
    if safe:
        fastest = min(safe, key=lambda c: min(tallies[c].seconds))
        for name in (c for c in tallies if c.removeprefix("before: ") in BUDGETS):
            budget = tallies[name]
            ratio = min(budget.seconds) / min(tallies[fastest].seconds)
            print(
                f"\n{name} / fastest fixed limit with no OOM kill and no failure "
                f"({fastest}): **{ratio:.2f}x**; its OOM kills: {budget.oom_kills}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only", choices=BATCHES, help="run one batch")
    parser.add_argument(
        "--factor",
        type=float,
        action="append",
        help="the cgroup's limit, times one clone alone (repeatable; 1.3 by default)",
    )
    parser.add_argument("--before", type=Path, help="a source tree to run the budgets of too")
    parser.add_argument("--cache", type=Path, help="keep the generated repositories here")
    parser.add_argument(
        "--patience",
        type=float,
        default=2.0,
        help="stop a run after this many times one clone alone per clone (2 by default)",
    )
    parser.add_argument(
        "--contenders",
        help="a subset of these, separated by semicolons: " + "; ".join(CONTENDERS),
        default=";".join(CONTENDERS),
    )
    args = parser.parse_args(argv)
    contenders = {c: CONTENDERS[c] for c in args.contenders.split(";")}
    compile_sources()  # measured as installed (bench/installed.py)
    reason = cgroup_unavailable()
    if reason is not None:
        print(f"skipped: {reason}")
        return 0
    rounds = 1 if args.quick else args.rounds
    with tempfile.TemporaryDirectory() as tmp:
        served, work = args.cache or Path(tmp) / "served", Path(tmp) / "work"
        served.mkdir(exist_ok=True)
        work.mkdir()
        _make_batches(served, args.only, args.quick)
        with git_daemon(served) as daemon:
            print(f"{os.cpu_count()} CPUs; best of {rounds}")
            for name, title, count, depth in BATCH_SHAPES:
                if args.only not in (None, name):
                    continue
                urls = [daemon.url(f"{name}-{i}") for i in range(count)]
                for factor in args.factor or [1.3]:
                    batch(
                        title,
                        urls,
                        rounds,
                        work,
                        contenders,
                        factor,
                        args.before,
                        depth,
                        args.patience,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

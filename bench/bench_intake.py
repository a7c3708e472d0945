"""Full-history clones and start-up, side by side: clonegate vs git, and the pack intake
of issue 14 vs dulwich's own ``fetch``.

    python bench/bench_intake.py            # a 20,000-file, 3,000-commit repository
    python bench/bench_intake.py --quick    # a small one: a smoke test
    python bench/bench_intake.py --repository ~/src/sqlalchemy   # a real one (its HEAD)

Contenders, run alternately, best of ``--rounds``, against ``git daemon`` on 127.0.0.1:
- ``git clone --bare --single-branch`` (full history);
- clonegate's ``DulwichVCS(depth=None)`` (pack written once, indexed in one pass);
- the same clone through dulwich's ``client.fetch`` (spool, copy, index, complete);
- and the first result for a tiny repository: ``clonegate analyze`` (a fresh process:
  interpreter, zygote, clone, analysis) vs ``git clone --bare --depth 1``, alternating
  ``--first-runs`` times after the rounds above (best and median);
- ``clonegate --version``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from bench.installed import compile_sources
from clonegate import CloneSettings, DulwichVCS
from tests.support.repos import git, make_large_repo, make_repo
from tests.support.servers import git_daemon


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - start


def clonegate_clone(url: str) -> float:
    async def clone() -> float:
        vcs = DulwichVCS(CloneSettings(depth=None))
        await vcs.clone(url.replace("large", "tiny"))  # the pool's zygote is started
        start = time.perf_counter()
        source = await vcs.clone(url)
        elapsed = time.perf_counter() - start
        await source.aclose()
        return elapsed

    return trio.run(clone)


def dulwich_fetch(url: str, into: Path) -> float:
    """The same clone with dulwich's own fetch (the intake before issue 14), in-process."""
    from dulwich.client import get_transport_and_path
    from dulwich.repo import Repo

    target = into / "dulwich.git"
    start = time.perf_counter()
    repo = Repo.init_bare(str(target), mkdir=True)
    client, path = get_transport_and_path(url)
    client.fetch(path, repo, determine_wants=lambda refs, depth=None: [refs[b"HEAD"]])
    repo.close()
    elapsed = time.perf_counter() - start
    subprocess.run(["rm", "-rf", str(target)], check=True)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--first-runs", type=int, default=20, help="first results, alternating")
    parser.add_argument("--repository", type=Path, help="a local repository to serve instead")
    args = parser.parse_args(argv)
    if args.first_runs < 1:
        parser.error("--first-runs must be at least 1")
    compile_sources()  # measured as installed (bench/installed.py)
    files, commits = (200, 50) if args.quick else (20_000, 3_000)
    rounds = 1 if args.quick else args.rounds
    first_runs = 2 if args.quick else args.first_runs
    with tempfile.TemporaryDirectory() as tmp:
        served = Path(tmp) / "served"
        served.mkdir()
        if args.repository:
            source = str(args.repository.resolve())
            git("clone", "-q", "--bare", "--single-branch", source, str(served / "large.git"))
        else:
            make_large_repo(served, "large", files=files, commits=commits)
        make_repo(served, "tiny", files={"test_a.py": b"def test_a():\n    pass\n"})
        pack = sum(p.stat().st_size for p in (served / "large.git").rglob("*.pack"))
        best = dict.fromkeys(("git", "clonegate", "dulwich fetch"), 1e9)
        with git_daemon(served) as daemon:
            url, tiny = daemon.url("large"), daemon.url("tiny")
            for round_ in range(rounds):
                into = Path(tmp) / f"round{round_}"
                into.mkdir()
                git_bare = ["git", "clone", "-q", "--bare", "--single-branch"]
                best["git"] = min(best["git"], timed([*git_bare, url, str(into / "git.git")]))
                best["clonegate"] = min(best["clonegate"], clonegate_clone(url))
                best["dulwich fetch"] = min(best["dulwich fetch"], dulwich_fetch(url, into))
            # The first result on its own, alternating with git: not right after a
            # large clone (whose page cache and written files the next command pays for).
            first: dict[str, list[float]] = {"git": [], "cg": []}
            first_git = ["git", "clone", "-q", "--bare", "--depth", "1", tiny]
            analyze = [sys.executable, "-m", "clonegate", "analyze", "--format", "json", tiny]
            for run in range(first_runs):
                first["git"].append(timed([*first_git, str(Path(tmp) / f"first{run}.git")]))
                first["cg"].append(timed(analyze))
        version = min(timed([sys.executable, "-m", "clonegate", "--version"]) for _ in range(5))
    what = args.repository or f"{files} files, {commits} commits"
    print(f"pack {pack / 2**20:.1f} MiB ({what}); best of {rounds}\n")
    print("| measure | clonegate | git | ratio |")
    print("|---|---|---|---|")
    ratio = best["clonegate"] / best["git"]
    print(f"| full-history clone | {best['clonegate']:.3f} | {best['git']:.3f} | {ratio:.2f}x |")
    old = best["dulwich fetch"] / best["git"]
    print(f"| the same, dulwich's own fetch | {best['dulwich fetch']:.3f} | | {old:.2f}x |")
    for name, pick in (("best", min), ("median", statistics.median)):
        cg, gi = pick(first["cg"]), pick(first["git"])
        print(
            f"| first result, tiny repository (whole command), {name} of {first_runs} "
            f"| {cg:.3f} | {gi:.3f} | {cg / gi:.2f}x |"
        )
    print(f"| `python -m clonegate --version` | {version:.3f} | | |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

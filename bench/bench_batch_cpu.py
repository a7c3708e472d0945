"""Batches against git, wall and CPU side by side, and where clonegate's CPU goes (issue 47).

    python -m bench.bench_batch_cpu                 # 10 alternating pairs per shape
    python -m bench.bench_batch_cpu --pairs 12 --shape mid
    python -m bench.bench_batch_cpu --before TREE   # and the code before, in each round
    python -m bench.bench_batch_cpu --quick         # one round of 4 clones: a smoke test

Shapes, 20 shallow clones each at two at a time, served by ``git daemon`` on 127.0.0.1
under one name per clone: ``mid``, the generated mid-size repository (1,991 files, 100
pytest files); ``bare``, the same with its test files renamed away (``module_N.py``:
no candidate); ``real``, the requests bundle (48 pytest files); ``distinct``, 20
different mid-size repositories (no blob shared between them). Each round runs
``xargs -P2 git clone --bare --depth 1`` and the installed ``clonegate analyze -j 2``
(then the code before, with ``--before``) as fresh commands, alternating.

Per command: wall, CPU of its process tree (its rusage once reaped) and of the git
daemon's children (the server's side, the same for both), and the ideal on two cores,
max(wall of git's clones, CPU / 2). For clonegate, each process's CPU is written by
``bench/job_clock/sitecustomize.py``: the zygote's preloads and the rest of its life,
each worker's start and its jobs by name; the parent is the rest of the tree's CPU.
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_first_result import before_environment
from bench.installed import compile_sources
from tests.support.repos import git, make_test_suite_repo
from tests.support.servers import git_daemon

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = Path(sys.executable).with_name("clonegate")
REQUESTS_BUNDLE = ROOT / "tests" / "fixtures" / "corpus" / "requests.bundle"
CLOCK = Path(__file__).resolve().parent / "job_clock"
CLONES = 20
SHAPES = ("mid", "bare", "real", "distinct")


def mid_size(served: Path, name: str) -> None:
    """The issue's mid-size shape: 100 pytest files among 1,991 files."""
    make_test_suite_repo(served, name, test_files=100, other_files=1890, kinds=("python",))


def renamed_away(served: Path, name: str, work: Path) -> None:
    """``name``, a copy of ``mid`` with each ``test_module_N.py`` renamed ``module_N.py``."""
    git("clone", "-q", str(served / "mid.git"), str(work))
    for test in sorted(work.glob("tests/*/test_module_*.py")):
        git("-C", str(work), "mv", str(test), str(test.with_name(test.name[len("test_") :])))
    git("-C", str(work), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "renamed")
    git("clone", "-q", "--bare", str(work), str(served / f"{name}.git"))


def serve(served: Path, tmp: Path, shapes: list[str], clones: int) -> dict[str, list[str]]:
    """Each shape's repository names (symlinks to one repository, or distinct ones)."""
    mid_size(served, "mid")
    renamed_away(served, "bare", tmp / "work")
    git("clone", "-q", "--bare", str(REQUESTS_BUNDLE), str(served / "real.git"))
    names: dict[str, list[str]] = {}
    for shape in ("mid", "bare", "real"):
        names[shape] = [f"{shape}-{i}" for i in range(clones)]
        for copy in names[shape]:
            (served / f"{copy}.git").symlink_to(served / f"{shape}.git")
    names["distinct"] = [f"distinct-{i}" for i in range(clones)]
    for name in names["distinct"] if "distinct" in shapes else ():
        # The mid-size shape, each repository's files its own (a salt in each).
        make_test_suite_repo(
            served, name, test_files=100, other_files=1890, kinds=("python",), salt=name
        )
    return names


def daemon_cpu(pid: int) -> float:
    """CPU of the daemon's reaped children (its forks and their upload-pack), seconds.
    ``git daemon`` runs ``git-daemon`` as its child: that child's are counted."""
    children = (Path("/proc") / str(pid) / "task" / str(pid) / "children").read_text().split()
    pid = int(children[0]) if children else pid
    fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")


def measure(command: list[str], stdin: str | None, daemon: int, env: dict[str, str] | None):  # type: ignore[no-untyped-def]
    """Wall, tree CPU and server CPU of ``command``, which must succeed."""
    served_before = daemon_cpu(daemon)
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    if stdin is not None:
        assert process.stdin is not None
        process.stdin.write(stdin)
    assert process.stdin is not None
    process.stdin.close()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise RuntimeError(f"{command[:3]} failed: exit {process.returncode}")
    time.sleep(0.05)  # the daemon reaps its last child: a measure's settling, not a sync
    return wall, usage.ru_utime + usage.ru_stime, daemon_cpu(daemon) - served_before


def where(log: Path, tree_cpu: float) -> dict[str, float]:
    """The CPU of each part of one clonegate run, from the job clock's lines."""
    parts: dict[str, float] = collections.defaultdict(float)
    workers_total = zygote_self = 0.0
    starts: dict[str, float] = {}
    for line in log.read_text().splitlines():
        kind, pid, *rest = line.split()
        if kind == "zygote":
            started, ready, ended, workers = map(float, rest)
            parts["zygote: preloads"] += ready - started
            parts["zygote: serving"] += ended - ready
            zygote_self, workers_total = ended, workers
        else:
            name, before, spent = rest[0], float(rest[1]), float(rest[2])
            parts[f"job: {name}"] += spent
            parts[f"jobs: {name} (count)"] += 1
            starts.setdefault(pid, before)  # the first job's "before" is the worker's start
    parts["workers: start (to first job)"] = sum(starts.values())
    parts["workers: count"] = len(starts)
    jobs = sum(v for k, v in parts.items() if k.startswith("job: "))
    parts["workers: rest (exit, between jobs)"] = workers_total - jobs - sum(starts.values())
    parts["parent (command line)"] = tree_cpu - zygote_self - workers_total
    return dict(parts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="one round of 4 clones")
    parser.add_argument("--pairs", type=int, default=10)
    parser.add_argument("--shape", action="append", choices=SHAPES)
    parser.add_argument("--before", type=Path, help="a tree of the code before, run beside")
    args = parser.parse_args(argv)
    shapes = args.shape or (["mid", "real"] if args.quick else list(SHAPES))
    pairs, clones = (1, 4) if args.quick else (args.pairs, CLONES)
    compile_sources()
    contenders: dict[str, dict[str, str] | None] = {"clonegate": None}
    if args.before:
        contenders["before"] = before_environment(args.before.resolve())
    rows: dict[tuple[str, str], list[tuple[float, float, float]]] = collections.defaultdict(list)
    split: dict[tuple[str, str], list[dict[str, float]]] = collections.defaultdict(list)
    loads: list[float] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        served, into, log = tmp / "served", tmp / "into", tmp / "clock.log"
        served.mkdir()
        names = serve(served, tmp, shapes, clones)
        with git_daemon(served) as daemon:
            pid = daemon.process.pid
            for round_ in range(pairs + 1):  # the first round warms caches: dropped
                for shape in shapes:
                    urls = [daemon.url(n) for n in names[shape]]
                    subprocess.run(["rm", "-rf", str(into)], check=True)
                    into.mkdir()
                    clone = f'git clone -q --bare --depth 1 "$1" "{into}/$$-$RANDOM"'
                    xargs = ["xargs", "-P", "2", "-n", "1", "sh", "-c", clone, "sh"]
                    results = {"git": measure(xargs, "\n".join(urls), pid, None)}
                    for name, env in contenders.items():
                        log.unlink(missing_ok=True)
                        environment = {**(env or os.environ), "CLONEGATE_JOB_CLOCK": str(log)}
                        path = environment.get("PYTHONPATH")
                        environment["PYTHONPATH"] = (
                            f"{CLOCK}{os.pathsep}{path}" if path else str(CLOCK)
                        )
                        command = [str(SCRIPT), "analyze", "--format", "jsonl", "-j", "2", *urls]
                        results[name] = measure(command, None, pid, environment)
                        if round_ and log.exists():
                            split[shape, name].append(where(log, results[name][1]))
                    if round_:
                        for name, result in results.items():
                            rows[shape, name].append(result)
                loads.append(os.getloadavg()[0])
    report(shapes, ["git", *contenders], rows, split, loads)
    return 0


def report(shapes, names, rows, split, loads) -> None:  # type: ignore[no-untyped-def]
    median = statistics.median
    print(f"{len(loads) - 1} rounds, load average {min(loads):.1f}-{max(loads):.1f}\n")
    print(
        "| shape | contender | wall s | tree CPU s | server CPU s | wall / git (paired) "
        "| wall / ideal (paired) |"
    )
    print("|---|---|---|---|---|---|---|")
    for shape in shapes:
        git_rows = rows[shape, "git"]
        for name in names:
            mine = rows[shape, name]
            ratios = [m[0] / g[0] for m, g in zip(mine, git_rows, strict=True)]
            # Two cores: the ideal is the later of git's clone wall and all the CPU / 2.
            ideal = [
                m[0] / max(g[0], (m[1] + m[2]) / 2) for m, g in zip(mine, git_rows, strict=True)
            ]
            print(
                f"| {shape} | {name} | {median(m[0] for m in mine):.3f} "
                f"| {median(m[1] for m in mine):.2f} | {median(m[2] for m in mine):.2f} "
                f"| {median(ratios):.2f}x | {median(ideal):.2f}x |"
            )
    for (shape, name), runs in split.items():
        print(f"\n{shape}, {name}: CPU s per part, median of {len(runs)}")
        for part in sorted({p for run in runs for p in run}):
            print(f"- {part}: {median(run.get(part, 0.0) for run in runs):.3f}")


if __name__ == "__main__":
    sys.exit(main())

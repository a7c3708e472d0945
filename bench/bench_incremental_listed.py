"""An incremental re-run fed by a listing (issue 45, ADR 0023): what trusting an unmoved
``pushed_at`` saves against today's check of each remote's HEAD, side by side.

    python bench/bench_incremental_listed.py            # 200 repositories, 5 rounds
    python bench/bench_incremental_listed.py --quick    # 40 repositories, 1 round

N tiny repositories (12 test files, 30 other files) served by ``git daemon`` on
127.0.0.1 behind a proxy that counts connections. A full incremental run of them all
(as ``Listed`` records, as a forge's listing gives them) fills a real SQLite store;
then 10% get a new commit. Each round re-runs twice, each from a copy of the store as
the full run left it, in-process (``AnalyzeUseCase`` composed as ``analyze`` does):

- *ref check*: the same records with ``pushed_at`` not said (today's behaviour, and a
  line given as a URL): every remote's HEAD is listed, the changed ones are cloned;
- *pushed_at skip*: the records as the listing would give them now (the changed ones'
  ``pushed_at`` moved): the unmoved ones are reused with no connection at all.

Printed per round: seconds, CPU-seconds of this process tree (the git daemon's
excluded: the server's work), connections made, repositories reused; then the
medians and their ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import trio

from bench.bench_incremental import _files, change, make
from bench.proctree import _children
from clonegate import with_incremental, with_max_concurrent_clones, with_result_store
from clonegate._app import compose
from clonegate._domain.listed import Listed
from clonegate._domain.sources import Forge
from clonegate.store import open_store
from tests.support.proxy import ThrottlingProxy
from tests.support.servers import git_daemon

PUSHED = datetime(2026, 11, 1, tzinfo=UTC)


def listed(port: int, i: int, pushed_at: datetime | None) -> Listed:
    return Listed(
        full_name=f"bench/r{i}",
        clone_url=f"git://127.0.0.1:{port}/r{i}.git",
        forge_id=str(10_000 + i),
        default_branch="main",
        pushed_at=pushed_at,
        forge=Forge.GITHUB,
    )


async def run(db: Path, lines: list[Listed]) -> tuple[float, float, int]:
    """Seconds, CPU-seconds (this process and its children), and repositories reused,
    of one incremental run over ``lines``."""
    async with open_store(db) as store:
        options = (with_max_concurrent_clones(2), with_result_store(store), with_incremental())
        started, cpu = time.perf_counter(), _cpu()
        async with compose(*options, pool=None).analyze_many(lines) as batch:
            reports = [report async for report in batch]
        elapsed, cpu = time.perf_counter() - started, _cpu() - cpu
    assert all(r.status == "ok" for r in reports), [r.error for r in reports if r.error]
    return elapsed, cpu, sum(r.reused for r in reports)


def _cpu() -> float:
    """CPU-seconds of this process and its descendants (the worker pool), the git
    daemon's tree excepted, from /proc: the pool's workers live on, so the rusage of
    waited-for children alone would miss them."""
    tree, ticks, stack = _children(), 0, [os.getpid()]
    while stack:
        pid = stack.pop()
        if pid in SERVERS:
            continue
        try:
            fields = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # utime, stime, and cutime, cstime: what its children used that it has
        # waited for (a worker that ended mid-run is counted there, not lost).
        ticks += sum(int(field) for field in fields[11:15])
        stack.extend(tree.get(pid, []))
    return ticks / os.sysconf("SC_CLK_TCK")


SERVERS: set[int] = set()  # the git daemon: the server's work, not the client's


async def main(count: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "served"
        root.mkdir()
        for i in range(count):
            make(root, f"r{i}", _files(i, 12, 30))
        changed = set(range(0, count, 10))  # 10%
        with git_daemon(root) as daemon:
            SERVERS.add(daemon.process.pid)
            proxy = ThrottlingProxy(daemon.port, rate=1 << 30)
            async with trio.open_nursery() as nursery:
                await nursery.start(proxy.serve)
                port = proxy.port
                full = Path(tmp) / "full.db"
                seconds, _, _ = await run(full, [listed(port, i, PUSHED) for i in range(count)])
                print(f"full run of {count}: {seconds:.2f} s, {proxy.connections} connections")
                for i in changed:
                    change(root, f"r{i}", i)
                later = PUSHED + timedelta(hours=1)
                now = [listed(port, i, later if i in changed else PUSHED) for i in range(count)]
                unsaid = [listed(port, i, None) for i in range(count)]
                figures: dict[str, list[float]] = {"ref check": [], "pushed_at skip": []}
                cpus: dict[str, list[float]] = {"ref check": [], "pushed_at skip": []}
                for number in range(rounds):
                    for name, lines in (("ref check", unsaid), ("pushed_at skip", now)):
                        db = Path(tmp) / f"{number}-{name}.db"
                        shutil.copy(full, db)
                        before = proxy.connections
                        seconds, cpu, reused = await run(db, lines)
                        made = proxy.connections - before
                        figures[name].append(seconds)
                        cpus[name].append(cpu)
                        print(
                            f"round {number + 1}, {name}: {seconds:.2f} s, {cpu:.2f} CPU-s, "
                            f"{made} connections, {reused} reused"
                        )
                check, skip = (statistics.median(figures[k]) for k in figures)
                check_cpu, skip_cpu = (statistics.median(cpus[k]) for k in cpus)
                print(
                    f"median: ref check {check:.2f} s ({check_cpu:.2f} CPU-s), pushed_at skip "
                    f"{skip:.2f} s ({skip_cpu:.2f} CPU-s): {skip / check:.3f}x time, "
                    f"{skip_cpu / check_cpu:.3f}x CPU"
                )
                nursery.cancel_scope.cancel()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 repositories, one round")
    arguments = parser.parse_args()
    trio.run(main, 40 if arguments.quick else 200, 1 if arguments.quick else 5)

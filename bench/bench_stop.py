"""How fast clonegate stops: a cancelled clone, and the CLI after SIGINT or SIGTERM.

    python bench/bench_stop.py            # 5 rounds of each
    python bench/bench_stop.py --quick    # 1 round: a smoke test

A repository holding a 4 MiB random blob is served by loopback ``git daemon`` through a
proxy that forwards 256 KiB/s. Once 256 KiB went through (128 KiB for the CLI), the
library call to ``DulwichVCS.clone`` is cancelled, or ``clonegate analyze`` is sent the
signal. Reported: seconds from the cancel or signal to the return or exit (median and
worst of the rounds), with the exit code. Tests used to assert "within 2 s"; they now
assert what happened, and the figure lives here (ADR 0010).
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import trio

from clonegate import CloneSettings, DulwichVCS
from clonegate._adapters.workers import open_worker_pool
from tests.support.proxy import ThrottlingProxy
from tests.support.repos import BIG_BLOB_BYTES, make_repo
from tests.support.servers import git_daemon


async def cancelled_clone(port: int, work: Path) -> float:
    """Seconds from cancelling a clone mid-transfer to ``clone()`` returning."""
    proxy = ThrottlingProxy(port)
    cancelled_at = 0.0
    async with open_worker_pool() as pool, trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        with trio.CancelScope() as scope:

            async def cancel_mid_transfer() -> None:
                nonlocal cancelled_at
                await proxy.wait_forwarded(256 * 1024)
                cancelled_at = trio.current_time()
                scope.cancel()

            nursery.start_soon(cancel_mid_transfer)
            await DulwichVCS(CloneSettings(work_dir=work), pool=pool).clone(
                f"git://127.0.0.1:{proxy.port}/big.git"
            )
        returned_at = trio.current_time()
        nursery.cancel_scope.cancel()
    return returned_at - cancelled_at


async def signalled_cli(port: int, work: Path, sig: signal.Signals) -> tuple[float, int]:
    """Seconds from ``sig`` to the exit of ``clonegate analyze`` mid-clone, and its code."""
    proxy = ThrottlingProxy(port, rate=64 * 1024)
    async with trio.open_nursery() as nursery:
        await nursery.start(proxy.serve)
        process = await trio.lowlevel.open_process(
            [sys.executable, "-m", "clonegate", "analyze", f"git://127.0.0.1:{proxy.port}/big.git"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "TMPDIR": str(work)},
        )
        await proxy.wait_forwarded(128 * 1024)
        process.send_signal(sig)
        signalled = trio.current_time()
        code = await process.wait()
        elapsed = trio.current_time() - signalled
        nursery.cancel_scope.cancel()
    return elapsed, code


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    rounds = 1 if parser.parse_args(argv).quick else 5
    with tempfile.TemporaryDirectory() as scratch:
        root, work = Path(scratch) / "served", Path(scratch) / "tmp"
        root.mkdir()
        work.mkdir()
        make_repo(root, "big", commits=2, files={"blob.bin": os.urandom(BIG_BLOB_BYTES)})
        with git_daemon(root) as daemon:
            rows: dict[str, list[float]] = {}
            codes: dict[str, set[int]] = {}
            for _ in range(rounds):
                seconds = trio.run(cancelled_clone, daemon.port, work)
                rows.setdefault("library: cancel a clone mid-transfer", []).append(seconds)
                for sig in (signal.SIGINT, signal.SIGTERM):
                    name = f"CLI: {sig.name} mid-clone"
                    seconds, code = trio.run(signalled_cli, daemon.port, work, sig)
                    rows.setdefault(name, []).append(seconds)
                    codes.setdefault(name, set()).add(code)
            left = list(work.iterdir())
    print(f"| stop ({rounds} rounds) | median s | worst s | exit codes |")
    print("|---|---|---|---|")
    for name, values in rows.items():
        exits = ", ".join(map(str, sorted(codes.get(name, ())))) or "-"
        print(f"| {name} | {statistics.median(values):.3f} | {max(values):.3f} | {exits} |")
    print(f"\nleft in the work directory: {len(left)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

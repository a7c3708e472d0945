"""What a clone forecasts against what it uses, per phase, on five shapes (issue 46).

    python bench/bench_forecast.py                 # generates ~1 minute the first time
    python bench/bench_forecast.py --cache DIR     # where the repositories are kept

Each clone runs the worker's own code (``clone_worker.clone_in_worker``, bare, as
``analyze`` clones) in a fresh process of its own, served by ``git daemon`` on
127.0.0.1. Its questions to the parent (``ask_parent``) are answered at once and
recorded; at each question and at the end of the first pass the kernel's high-water
mark of resident memory (``VmHWM``) is read and reset (``/proc/self/clear_refs``), so
each phase's peak is its own: *opening* (connecting, refs, the pack streamed to
disk), *first pass* (``pack_index._first_pass``) and *walk* (the delta walk, the
index written). A peak is above the resident size once dulwich is imported, as a
worker's is above the zygote's (without the few MiB of the zygote's pages a worker
writes to, ADR 0014).

Shapes: the issue's delta-heavy full history (4,000 files, 6,000 commits, ~103k
objects, a 53 MB pack of deltas on chains of up to 50); a long history without deltas
(bench_memory's, 111,000 objects); one 96 MiB data file stored as a delta; 30,000
small files at depth 1; and a real repository's full history (pallets/click, where a
mirror of it is on this machine: ``--real PATH``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.bench_memory import make_long_history_repo
from bench.forecast_shapes import make_delta_history, make_many_small_files
from tests.support.cgroup import make_memory_heavy_repo
from tests.support.servers import git_daemon

MiB = 1 << 20
PHASES = ("opening", "first pass", "walk")
REAL = Path("/work/.mirror/pallets+click/repo")


def _hwm_then_reset() -> int:
    """Bytes of the high-water mark of resident memory since the last reset; reset."""
    with open("/proc/self/status") as status:
        hwm = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    return hwm * 1024


def measure(url: str, depth: int | None) -> dict[str, Any]:
    """One clone of ``url`` in this process: forecasts and peaks per phase (bytes)."""
    from clonegate._adapters.git import clone_job, clone_worker, pack_index
    from clonegate._adapters.git.envelope import Envelope

    forecasts: dict[str, int] = {}
    pages: dict[str, int] = {}  # of each forecast, the pack's pages: not reserved
    peaks: dict[str, int] = {}
    phase = ["opening"]
    counts: dict[str, int] = {}

    def ask(question: object) -> bool:
        assert isinstance(question, tuple)
        # The bytes, the pack's pages among them; a third item: wanted at once (granted).
        nbytes, mapped = question[:2]
        now = "walk" if phase[0] == "after first pass" else "first pass"
        peaks[phase[0]] = max(peaks.get(phase[0], 0), _hwm_then_reset() - start)
        if phase[0] == "after first pass":
            peaks["first pass"] = max(peaks["first pass"], peaks.pop("after first pass"))
        phase[0] = now
        forecasts[now] = max(forecasts.get(now, 0), int(nbytes))
        pages[now] = int(mapped)
        return True

    first_pass = pack_index._first_pass

    def timed_first_pass(*args: object, **kwargs: object) -> object:
        result = first_pass(*args, **kwargs)  # type: ignore[call-overload]
        if result is None:  # refused past its records: never here, every answer is yes
            return result
        peaks["first pass"] = max(peaks.get("first pass", 0), _hwm_then_reset() - start)
        counts["objects"], counts["deltas"] = result.announced, len(result.deltas)
        counts["named"] = len(result.sizes._named)
        phase[0] = "after first pass"
        return result

    # The worker's own code, its questions and its first pass watched (this process
    # runs this one clone: what it patches is its own).
    setattr(clone_worker, "ask_parent", ask)  # noqa: B010
    setattr(pack_index, "_first_pass", timed_first_pass)  # noqa: B010
    with tempfile.TemporaryDirectory() as tmp:
        job = clone_job.CloneJob(
            url=url,
            shown_url=url,
            username=None,
            password=None,
            target=f"{tmp}/clone",
            bare=True,
            depth=depth,
            connect_timeout=30,
            read_timeout=300,
            envelope=Envelope(max_memory=4 << 30, max_repo_bytes=8 << 30),
            ask_memory=True,
        )
        _hwm_then_reset()
        with open("/proc/self/statm") as statm:
            start = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        outcome = clone_worker.clone_in_worker(job)
        last = "walk" if phase[0] == "walk" else "first pass"
        if phase[0] == "after first pass":
            phase[0] = "first pass"
        peaks[last] = max(peaks.get(last, 0), _hwm_then_reset() - start)
        pack = sum(p.stat().st_size for p in Path(tmp, "clone").rglob("*.pack"))
    if outcome.error_kind is not None:
        raise RuntimeError(f"{url}: {outcome.error_kind}: {outcome.error_reason}")
    return {"forecasts": forecasts, "pages": pages, "peaks": peaks, "pack": pack, **counts}


def _shapes(cache: Path, real: Path | None) -> dict[str, tuple[str, int | None]]:
    """Each shape's repository under ``cache`` (made if missing): name -> (path, depth)."""
    makers: dict[str, tuple[str, int | None, Callable[[Path], object]]] = {
        "delta-heavy history": ("delta", None, make_delta_history),
        "long history, no deltas": (
            "history",
            None,
            lambda bare: make_long_history_repo(bare.parent, "history", files=200, commits=500),
        ),
        "96 MiB file as a delta": (
            "data",
            None,
            lambda bare: make_memory_heavy_repo(bare.parent, "data", blob_mib=96),
        ),
        "30,000 small files, depth 1": ("small", 1, make_many_small_files),
    }
    shapes = {}
    for shape, (name, depth, make) in makers.items():
        bare = cache / f"{name}.git"
        if not (bare / "objects" / "pack").exists() or not any(
            (bare / "objects" / "pack").glob("*.pack")
        ):
            make(bare)
        shapes[shape] = (name, depth)
    if real is not None and real.is_dir():
        link = cache / "real.git"
        if not link.exists():
            link.symlink_to(real)
        shapes[f"real: {real.parent.name.replace('+', '/')}, full"] = ("real", None)
    return shapes


def _row(shape: str, result: dict[str, Any]) -> str:
    forecasts: dict[str, int] = result["forecasts"]
    peaks: dict[str, int] = result["peaks"]
    from clonegate._adapters.git.pack_forecast import FIRST_PASS_BASE

    forecasts = {"opening": FIRST_PASS_BASE, **forecasts}
    cells = []
    for phase in PHASES:
        if phase not in peaks or phase not in forecasts:
            cells.append("-")
            continue
        f, p = forecasts[phase] / MiB, peaks[phase] / MiB
        reserved = f - result.get("pages", {}).get(phase, 0) / MiB
        cells.append(f"{f:.1f} / {p:.1f} ({f / max(p, 0.1):.2f}x), reserves {reserved:.1f}")
    # The whole clone: its peak against the forecast in force in that phase.
    top = max(peaks, key=peaks.__getitem__)
    overall = forecasts.get(top, 0) / MiB, peaks[top] / MiB
    return (
        f"| {shape} | {result['objects']:,} / {result['deltas']:,} ({result['named']:,} by id) | "
        f"{int(result['pack']) / MiB:.0f} | " + " | ".join(cells) + " | "
        f"{overall[0]:.0f} / {overall[1]:.0f} ({overall[0] / overall[1]:.2f}x) |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir(), "cg-forecast"))
    parser.add_argument("--real", type=Path, default=REAL, help="a bare repository to clone")
    parser.add_argument("--only", help="shapes whose name contains this")
    parser.add_argument("--measure", nargs=2, metavar=("URL", "DEPTH"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:  # the child: one clone, its figures as JSON
        url, depth = args.measure
        print(json.dumps(measure(url, int(depth) or None)))
        return 0
    args.cache.mkdir(parents=True, exist_ok=True)
    shapes = _shapes(args.cache, args.real)
    print(
        "| shape | objects / deltas | pack MiB | opening MiB: forecast / peak | "
        "first pass | after it (the walk) | whole clone |"
    )
    print("|---|---|---|---|---|---|---|")
    with git_daemon(args.cache) as daemon:
        for shape, (name, depth) in shapes.items():
            if args.only and args.only not in shape:
                continue
            command = [sys.executable, "-m", "bench.bench_forecast", "--measure"]
            child = subprocess.run(
                [*command, daemon.url(name), str(depth or 0)],
                capture_output=True,
                text=True,
                check=False,
            )
            if child.returncode:
                print(f"| {shape} | failed: {child.stderr.strip().splitlines()[-1:]} |")
                continue
            print(_row(shape, json.loads(child.stdout)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

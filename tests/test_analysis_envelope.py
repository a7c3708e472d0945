"""The analysis's envelope with real workers and repositories served on loopback
(issue 38): a time limit that kills the workers of hostile analyses and frees the CPUs
for the repositories queued behind them, and a memory cap that a big file cannot pass
without failing its own repository only."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio
import trio.testing
from trio.testing import wait_all_tasks_blocked

from clonegate import (
    AnalysisSettings,
    Event,
    EventKind,
    RepositoryReport,
    RepositoryStatus,
    TestInventoryAnalyzer,
    with_analysis_time_limit,
    with_event_hook,
    with_max_concurrent_clones,
    with_repository_timeout,
)
from clonegate._app import compose
from clonegate._domain.inventory import ScanError
from clonegate.workers import open_worker_pool

from .support.processes import pid_alive
from .support.repos import fast_import, git
from .support.servers import GitDaemon, git_daemon
from .support.worker_gate import HOLD_MARK, WorkerGate

PLAIN_TEST = b"def test_a():\n    pass\n"
# Lists of 450,000 numbers (900 KB): fewer tokens than a scan refuses to parse, and
# a parse that needs more than twice the 64 MiB cap (measured: ast more than 256 MiB,
# tree-sitter 128 to 256 MiB). Issue 38's 9.8 MB Python list took the process tree to
# 4,754 MiB. tree-sitter's parser crashes the worker when an allocation fails.
ITEMS = 450_000
BIG_FILES = {
    "python": ("tests/test_big.py", b"x=[" + b"0," * ITEMS + b"0]\n"),
    "javascript": ("src/big.test.js", b"const x = [" + b"0," * ITEMS + b"0];\n"),
}
CAP = 64 << 20


def _repository(root: Path, name: str, files: dict[str, bytes]) -> None:
    bare = root / f"{name}.git"
    git("init", "-q", "--bare", "-b", "main", str(bare))
    stream = [b"commit refs/heads/main\ncommitter F <f@example.invalid> 1700000000 +0000\n"]
    stream.append(b"data 7\nfixture\n")
    for path, data in files.items():
        stream.append(b"M 644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
    fast_import(bare, b"".join(stream))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitDaemon]:
    root = tmp_path_factory.mktemp("envelope")
    _repository(root, "plain", {"tests/test_ok.py": PLAIN_TEST})
    for name in ("hostile1", "hostile2"):
        # Its listing is held in its worker, as a regular-expression or nesting bomb
        # would hold it (tests/support/worker_gate.py).
        _repository(root, name, {"tests/test_ok.py": PLAIN_TEST, HOLD_MARK.decode(): b""})
    for language, (path, data) in BIG_FILES.items():
        _repository(root, f"big-{language}", {path: data, "tests/test_ok.py": PLAIN_TEST})
    with git_daemon(root) as daemon:
        yield daemon


async def test_a_plain_repository_beside_two_hostile_ones_finishes_ok_in_real_workers(
    served: GitDaemon, mock_clock: trio.testing.MockClock
) -> None:
    # The clock moves only when the test says: the plain repository's real analysis
    # cannot pass its limit however slow this machine is.
    hostile = [served.url("hostile1"), served.url("hostile2")]
    plain = served.url("plain")
    events: list[tuple[float, Event]] = []
    plain_analyzing = trio.Event()

    def record(event: Event) -> None:
        events.append((trio.current_time(), event))
        if event.kind is EventKind.ANALYZING and event.url == plain:
            plain_analyzing.set()

    reports: dict[str, RepositoryReport] = {}

    async def run(url: str) -> None:
        reports[url] = await uc.execute(url)

    gate = WorkerGate()
    async with trio.open_nursery() as nursery:
        await nursery.start(gate.serve)
        async with open_worker_pool(init=gate.init_for_marked_listings) as pool:
            uc = compose(
                with_max_concurrent_clones(3),
                with_repository_timeout(100),
                with_analysis_time_limit(60),
                with_event_hook(record),
                analysis=AnalysisSettings(processes=2),
                pool=pool,
            )
            assert isinstance(uc._analyzer, TestInventoryAnalyzer)
            cpus = uc._analyzer._limiter
            assert cpus is not None
            async with trio.open_nursery() as inner:
                for url in hostile:
                    inner.start_soon(run, url)
                held = await gate.wait_checked_in(2)  # both CPUs held, in two workers
                inner.start_soon(run, plain)
                await plain_analyzing.wait()
                await wait_all_tasks_blocked()
                assert cpus.statistics().tasks_waiting == 1  # the plain one waits
                mock_clock.jump(61)  # past the analysis time limit, not the 100 s deadline
            running = pool.statistics().workers_running
        nursery.cancel_scope.cancel()
    assert not any(pid_alive(pid) for pid in held)
    assert not running & set(held)
    assert reports[plain].status is RepositoryStatus.OK
    analysis = reports[plain].analysis
    assert analysis is not None
    assert analysis.tests == 1
    for url in hostile:
        error = reports[url].error
        assert error is not None
        assert (error.phase, error.kind) == ("analyze", "timeout")
        assert error.message == f"{url}: the analysis ran for longer than its 60 s time limit"
    done = {e.url: (at, e.status) for at, e in events if e.kind is EventKind.DONE}
    assert [done[url][1] for url in hostile] == ["timeout", "timeout"]
    # It waited for a CPU until the clock passed the hostile analyses' limit. The order
    # of the DONE events says nothing: a cut analysis reports after its workers are
    # reaped, and the plain one may finish first.
    assert done[plain][1] == "ok"
    assert done[plain][0] >= 61


def _out_of_memory(report: RepositoryReport, path: str) -> bool:
    """The repository failed ``out_of_memory`` in its analysis, or (where the scan can
    attribute it to the file) the big file is a scan error that says memory."""
    if report.error is not None:
        return (report.error.phase, report.error.kind) == ("analyze", "out_of_memory")
    errors = report.inventory.errors if report.inventory is not None else ()
    return any(e.path == path and "memory" in e.message.lower() for e in errors)


@pytest.mark.parametrize("language", sorted(BIG_FILES))
async def test_an_analysis_past_its_memory_cap_fails_alone_and_the_pool_serves_the_next(
    served: GitDaemon, language: str
) -> None:
    async with open_worker_pool() as pool:
        uc = compose(analysis=AnalysisSettings(max_memory=CAP, processes=1), pool=pool)
        big = await uc.execute(served.url(f"big-{language}"))
        after_big = pool.statistics()
        plain = await uc.execute(served.url("plain"))
        after_plain = pool.statistics()
    # The same pool (its zygote) analyzed the next repository.
    assert after_plain.zygote_pid == after_big.zygote_pid is not None
    path, _ = BIG_FILES[language]
    assert _out_of_memory(big, path), big
    if big.error is not None:
        # The worker past its cap ended; the next analysis got a new one.
        assert after_plain.workers_started > after_big.workers_started
        # ast.parse raises MemoryError; tree-sitter's parser crashes instead.
        crashed = " (its worker crashed: signal 11)" if language == "javascript" else ""
        reason = f"the analysis needed more than its 64 MiB memory cap{crashed}"
        assert big.error.message == f"{big.url}: {reason}"
    assert plain.status is RepositoryStatus.OK
    assert plain.analysis is not None
    assert plain.analysis.tests == 1


@pytest.mark.parametrize("verbose", [[], ["-v"]])
def test_no_traceback_reaches_the_terminal_for_a_repository_past_its_cap(
    served: GitDaemon, verbose: list[str], tmp_path: Path
) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "clonegate", "analyze", "--format", "jsonl", *verbose),
            *("--analysis-memory", "64M", served.url("big-python"), served.url("plain")),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        timeout=120,
    )
    assert "Traceback" not in done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    by_url = {line["url"]: line for line in lines if "url" in line}
    big = by_url[served.url("big-python")]
    if big["status"] == "ok":  # the scan attributed it to the file
        assert big["analysis"]["scan_errors"] >= 1
        assert done.returncode == 0, done.stderr
    else:
        assert big["error"]["kind"] == "out_of_memory"
        assert done.returncode == 1, done.stderr
    assert by_url[served.url("plain")]["status"] == "ok"


async def _scan_in_a_served_worker(
    root: Path, files: dict[str, bytes], allowance: int = 0
) -> tuple[dict[str, bytes | None], tuple[ScanError, ...], bool]:
    """Each file's cache value and the scan errors of one part holding ``files``, and
    whether the next job of its kind got a new worker."""
    from clonegate._adapters.analysis import scan
    from clonegate._adapters.workers import run_in_worker

    _repository(root, "repo", {**files, "tests/test_ok.py": PLAIN_TEST})
    bare = str(root / "repo.git")
    commit = git("-C", bare, "rev-parse", "main").strip()
    listing = scan.list_commit(bare, commit)
    async with open_worker_pool() as pool:
        part = await run_in_worker(
            pool,
            scan.scan_part,
            *(bare, listing.candidates, listing.scopes, True),
            memory_allowance=allowance,
            reuse="analysis",
        )
        started = pool.statistics().workers_started
        await run_in_worker(pool, scan.list_commit, bare, commit, reuse="analysis")
        replaced = pool.statistics().workers_started > started
    values = dict(zip((p for p, _ in listing.candidates), part.values, strict=True))
    assert values["tests/test_ok.py"] is not None  # the rest of the part was scanned
    return values, part.errors, replaced


async def test_a_file_past_the_memory_cap_is_never_cached_as_nesting(tmp_path: Path) -> None:
    # The bytes parse under a larger cap: what the scan says of them must not be
    # cached as a property of the bytes ("too deeply nested").
    path, data = BIG_FILES["python"]
    values, errors, _ = await _scan_in_a_served_worker(tmp_path, {path: data}, CAP)
    assert values[path] is None  # never cached
    [error] = errors
    assert error.path == path
    assert error.message.startswith("MemoryError: ")
    assert "memory cap" in error.message


async def test_a_worker_whose_parser_raised_memory_error_serves_no_more_jobs(
    tmp_path: Path,
) -> None:
    # ast's MemoryError for its own stack overflow: the worker's memory did not grow,
    # yet a parser whose allocation failed may have left its state behind.
    minus = b"x = " + b"-" * 200_000 + b"1\n"
    values, errors, replaced = await _scan_in_a_served_worker(tmp_path, {"test_m.py": minus})
    assert values["test_m.py"] is None
    assert [e.path for e in errors] == ["test_m.py"]
    assert replaced

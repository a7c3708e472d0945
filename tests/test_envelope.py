"""Each limit of a clone's envelope, against a server or repository made to breach it.

The servers are real (tests/support/envelope_servers.py, git daemon); what is asserted is the
kind and figure each failing repository reports, that the healthy repository of the
same batch is cloned and analyzed, that no worker grew past its memory cap, and that
nothing is left in the work directory.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import trio

from clonegate import (
    CloneSettings,
    RepositoryReport,
    with_max_concurrent_clones,
)
from clonegate._adapters.workers import open_worker_pool
from clonegate._app import compose

from .support.envelope_servers import Counter, envelope_breaker, trickle_command, trickling_https
from .support.hostile_servers import tls_contexts
from .support.processes import worker_pids
from .support.servers import GitDaemon, SshServer, git_daemon

MiB = 1 << 20
ZERO_BLOB = 256 * MiB
MEMORY_CAP = 160 * MiB
REPO_LIMIT = 4 * MiB
# What a worker holds before its job: the zygote's pages (interpreter, dulwich,
# tree-sitter) that it touches; measured at 30-40 MiB, bounded generously.
WORKER_BASE = 96 * MiB


def zero_blob_repository(root: Path) -> None:
    """``root/zeros.git``: one commit with a file of ZERO_BLOB zero bytes (a tiny pack)."""
    work = root / "zeros.work"
    work.mkdir()
    with (work / "zeros.bin").open("wb") as out:
        out.truncate(ZERO_BLOB)
    (work / "test_ok.py").write_text("def test_ok():\n    pass\n")
    run = {"check": True, "capture_output": True, "cwd": work}
    subprocess.run(["git", "init", "-q", "-b", "main"], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "add", "-A"], **run)  # type: ignore[call-overload]
    subprocess.run(  # type: ignore[call-overload]
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "zeros"], **run
    )
    bare = root / "zeros.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(bare)], **run)  # type: ignore[call-overload]
    # Packed, so that git daemon sends at once what it has, instead of thinking for
    # seconds first (which a 1 s low-speed window would rightly call slow).
    subprocess.run(["git", "-C", str(bare), "repack", "-adq"], **run)  # type: ignore[call-overload]


async def test_each_limit_fails_its_repository_and_the_batch_goes_on(
    daemon: GitDaemon, tmp_path: Path
) -> None:
    served = tmp_path / "served"
    served.mkdir()
    zero_blob_repository(served)
    work = tmp_path / "work"
    work.mkdir()
    sent = {kind: Counter() for kind in ("trickle", "refs", "endless_pack")}
    with (
        git_daemon(served) as zeros,
        envelope_breaker("trickle", sent["trickle"]) as trickle,
        envelope_breaker("refs", sent["refs"]) as refs,
        envelope_breaker("endless_pack", sent["endless_pack"]) as endless,
    ):
        urls = [
            f"git://127.0.0.1:{trickle}/trickle.git",
            f"git://127.0.0.1:{refs}/refs.git",
            f"git://127.0.0.1:{endless}/endless.git",
            zeros.url("zeros"),
            daemon.url("basic"),
        ]
        async with open_worker_pool() as pool:
            use_case = compose(
                with_max_concurrent_clones(5),
                clone=CloneSettings(
                    depth=None,
                    work_dir=work,
                    read_timeout=120,
                    low_speed_limit=1000,
                    low_speed_time=1.0,
                    max_repo_size=REPO_LIMIT,
                    max_memory=MEMORY_CAP,
                ),
                pool=pool,
            )
            async with use_case.analyze_many(urls) as batch:
                reports: dict[int, RepositoryReport] = {r.index: r async for r in batch}
        stats = pool.statistics()  # the pool the clones ran in, closed
    kinds = {i: r.error.kind if r.error else "ok" for i, r in reports.items()}
    assert kinds == {0: "too_slow", 1: "too_large", 2: "too_large", 3: "too_large", 4: "ok"}
    messages = {i: r.error.message for i, r in reports.items() if r.error}
    assert "less than 1000 bytes/s (the low-speed limit" in messages[0]
    # 3 million refs pass the cap on lines (two per ref) before the 32 MiB one.
    assert "list of refs passed 200064 lines (the limit for 100000 refs)" in messages[1]
    assert "more than 4 MiB of pack data" in messages[2]
    assert "memory limit of 160 MiB" in messages[3]
    assert reports[4].analysis is not None
    # The servers were stopped near the limits, not at a timeout or a full disk.
    assert sent["endless_pack"].sent < 64 * MiB
    assert sent["refs"].sent < 512 * MiB
    assert worker_pids() == set()  # every worker ended with its pool
    assert stats.largest_peak_rss_bytes < WORKER_BASE + MEMORY_CAP
    await trio.lowlevel.checkpoint()
    assert list(work.iterdir()) == []


async def test_a_trickle_is_stopped_on_ssh_and_https_too(
    daemon: GitDaemon, tmp_path: Path, ssh_servers: Callable[[str | None], SshServer]
) -> None:
    """The low-speed limit on the transports whose bytes are counted elsewhere: ssh (what
    the worker reads from the ssh child's pipe) and https (below TLS). The servers send
    500 bytes a second, half the limit: each clone must be stopped as ``too_slow`` with
    the bytes it did receive in the message (so they were counted, not just timed out;
    the read timeout would give another kind), while a healthy repository of the same
    batch is cloned."""
    context, ca_file = tls_contexts(tmp_path / "tls")
    work = tmp_path / "work"
    work.mkdir()
    sent = Counter()
    sshd = ssh_servers(trickle_command(tmp_path))
    with trickling_https(context, sent) as https_port:
        urls = [
            sshd.url(tmp_path, "trickle"),
            f"https://127.0.0.1:{https_port}/trickle.git",
            daemon.url("basic"),
        ]
        async with open_worker_pool() as pool:
            use_case = compose(
                with_max_concurrent_clones(3),
                clone=CloneSettings(
                    work_dir=work,
                    ssh_command=sshd.ssh_command,
                    ca_bundle=ca_file,
                    read_timeout=120,
                    low_speed_limit=1000,
                    low_speed_time=2.0,
                ),
                pool=pool,
            )
            async with use_case.analyze_many(urls) as batch:
                reports: dict[int, RepositoryReport] = {r.index: r async for r in batch}
    kinds = {i: r.error.kind if r.error else "ok" for i, r in reports.items()}
    assert kinds == {0: "too_slow", 1: "too_slow", 2: "ok"}
    for index in (0, 1):
        message = reports[index].error.message  # type: ignore[union-attr]
        received = re.search(r": received (\d+) bytes in the last 2 s, less than 1000 ", message)
        assert received, message
        # Counted: the servers sent 500 bytes a second; nothing counted would say 0.
        assert int(received[1]) > 0, message
    assert worker_pids() == set()  # every worker ended with its pool
    await trio.lowlevel.checkpoint()
    assert list(work.iterdir()) == []

"""Jobs for tests/test_workers.py: functions of an importable module, as jobs must be."""

from __future__ import annotations

import os
import pickle
import signal
import socket
import threading
import time
from pathlib import Path


def pid() -> int:
    return os.getpid()


def fail(message: str) -> None:
    raise ValueError(message)


def die() -> None:
    signal.raise_signal(signal.SIGKILL)


def oom_score_adj() -> str:
    return Path("/proc/self/oom_score_adj").read_text().strip()


def parent_pid() -> int:
    return os.getppid()


def has_imported(module: str) -> bool:
    import sys

    return module in sys.modules


def allocate(size: int) -> int:
    return len(bytearray(size))


def sleep_forever() -> None:
    time.sleep(3600)


class Evil:
    """Unpickles as a call of ``os.system``: what a compromised worker could send."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, ("echo pwned",))


def hostile_reply() -> Evil:
    return Evil()


def roundtrip(value: object) -> bytes:
    return pickle.dumps(value)


def modules_a_clone_imports(url: str, target: str) -> list[str]:
    """Clone ``url`` (bare, as a first clone is) in this worker; the modules that had
    to be imported."""
    import sys

    from clonegate._adapters.git.clone_job import CloneJob
    from clonegate._adapters.git.clone_worker import clone_in_worker

    before = set(sys.modules)
    job = CloneJob(
        url, url, None, None, target, bare=True, depth=1, connect_timeout=30, read_timeout=60
    )
    outcome = clone_in_worker(job)
    assert outcome.error_kind is None, outcome.error_reason
    return sorted(set(sys.modules) - before)


def modules_a_clone_and_a_scan_import(url: str, target: str) -> list[str]:
    """Clone ``url`` and scan it in this worker; the modules that had to be imported."""
    import sys

    from clonegate._adapters.analysis.scan import list_commit, scan_part
    from clonegate._adapters.git.clone_job import CloneJob
    from clonegate._adapters.git.clone_worker import clone_in_worker

    before = set(sys.modules)
    job = CloneJob(
        url=url,
        shown_url=url,
        username=None,
        password=None,
        target=target,
        bare=False,
        depth=1,
        connect_timeout=30,
        read_timeout=60,
    )
    outcome = clone_in_worker(job)
    assert outcome.error_kind is None, outcome.error_reason
    listing = list_commit(target, outcome.commit)
    scan_part(target, listing.candidates, listing.scopes)
    return sorted(set(sys.modules) - before)


_kept: list[bytearray] = []


def keep(size: int) -> int:
    """Grow the worker's heap by ``size`` bytes, for good; its pid."""
    block = bytearray(size)
    block[::4096] = b"x" * len(block[::4096])  # touched: resident, not only reserved
    _kept.append(block)
    return os.getpid()


def pid_then_end() -> int:
    """Ask a served worker to end after this job."""
    from clonegate._adapters.workers.zygote import end_after_reply

    end_after_reply()
    return os.getpid()


def allocated_in(size: int) -> int:
    """Allocate and fill ``size`` bytes, then free them; this worker's pid."""
    len(bytearray(size))
    return os.getpid()


def ask_twice() -> list[object]:
    from clonegate._adapters.workers.zygote import ask_parent

    return [ask_parent(1), ask_parent(2)]


def ask_my_pid() -> object:
    from clonegate._adapters.workers.zygote import ask_parent

    return ask_parent(os.getpid())


def bytes_of(size: int) -> bytes:
    """A reply whose pickle needs as much memory again as the value itself."""
    return bytes(size)


# A connection a served worker keeps between jobs (tests/test_lease_watchdog.py).
_held: list[socket.socket] = []


def connect(port: int) -> int:
    _held.append(socket.create_connection(("127.0.0.1", port)))
    return os.getpid()


def wait_for_answer() -> bytes:
    return _held[-1].recv(1)


def threads() -> int:
    return threading.active_count()


def address_space_left() -> int:
    """Bytes this job may still add to its worker's address space (its soft RLIMIT_AS)."""
    import resource

    with open("/proc/self/statm") as statm:
        used = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    return resource.getrlimit(resource.RLIMIT_AS)[0] - used


def tell_many(count: int) -> int:
    """Notes 0 .. count - 1, back to back, then the reply (tests/test_served_workers.py)."""
    from clonegate._adapters.workers.zygote import tell_parent

    for number in range(count):
        tell_parent(number)
    return count

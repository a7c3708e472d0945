"""Jobs for bench_worker.py's workers: an importable module with nothing heavy of its own."""

from __future__ import annotations

import time


def ready_in_worker() -> int:
    import dulwich.client
    import dulwich.repo

    import clonegate._adapters.git.clone_worker

    return len(
        dulwich.client.__name__
        + dulwich.repo.__name__
        + clonegate._adapters.git.clone_worker.__name__
    )


def busy_in_worker() -> None:
    time.sleep(30)

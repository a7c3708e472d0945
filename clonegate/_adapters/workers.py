"""The worker processes that the git and analysis adapters share during a batch."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import trio_parallel

from .git.clone_worker import retire_if_bloated


def batch_workers() -> AbstractAsyncContextManager[object]:
    """A trio-parallel cache for one batch: workers are reused by clones and analyses,
    replaced after a job that left them bloated, and all gone when the scope exits."""
    scope: AbstractAsyncContextManager[object] = trio_parallel.cache_scope(retire=retire_if_bloated)
    return scope

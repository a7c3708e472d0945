"""Go-style functional options for :class:`clonegate.AnalyzeUseCase` (ADR 0006)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .._domain.checks import positive_int, positive_seconds
from .._domain.events import Event

__all__ = [
    "Option",
    "UseCaseConfig",
    "with_analysis_timeout",
    "with_clone_depth",
    "with_clone_timeout",
    "with_clone_weight",
    "with_event_hook",
    "with_max_concurrent_analyses",
    "with_max_concurrent_clones",
    "with_stuck_threshold",
    "with_token",
    "with_work_dir",
]


def _one_per_clone(url: str) -> int:
    return 1


@dataclass(frozen=True, slots=True)
class UseCaseConfig:
    """Everything the options set; build it with the ``with_*`` functions."""

    max_concurrent_clones: int = 2
    analysis_timeout: float = 15 * 60.0
    clone_timeout: float | None = None
    clone_depth: int | None = 1
    max_concurrent_analyses: int = os.cpu_count() or 1
    token: str | None = dataclasses.field(default=None, repr=False)
    work_dir: Path | None = None
    keep_clones: bool = False
    clone_weight: Callable[[str], int] = _one_per_clone
    stuck_threshold: float = 10 * 60.0
    event_hook: Callable[[Event], None] | None = None


Option = Callable[[UseCaseConfig], UseCaseConfig]


def with_max_concurrent_clones(n: int) -> Option:
    """At most ``n`` clones at once (default 2). With :func:`with_clone_weight`, a budget."""
    # Go's WithMaxConcurrentClones ignores n <= 0 and keeps the default. A silent
    # fallback turns a typo into a surprise at 3 a.m.; we refuse it when built (ADR 0006).
    n = positive_int("max_concurrent_clones", n)
    return lambda config: dataclasses.replace(config, max_concurrent_clones=n)


def with_analysis_timeout(seconds: float) -> Option:
    """The deadline per repository, covering the wait for a slot, the clone and the
    analysis, as in Go (default 15 minutes)."""
    value = positive_seconds("analysis_timeout", seconds)
    return lambda config: dataclasses.replace(config, analysis_timeout=value)


def with_clone_timeout(seconds: float) -> Option:
    """A deadline for the clone alone, from the moment the VCS is ready to clone.

    The VCS's set-up once the slot is held (starting a worker process) does not count;
    the report shows it as ``timings.setup``.
    """
    value = positive_seconds("clone_timeout", seconds)
    return lambda config: dataclasses.replace(config, clone_timeout=value)


def with_clone_depth(depth: int | None) -> Option:
    """Commits of history per clone: 1 (the default) is shallow, None the whole branch."""
    if depth is not None:
        depth = positive_int("clone_depth", depth)
    return lambda config: dataclasses.replace(config, clone_depth=depth)


def with_max_concurrent_analyses(n: int) -> Option:
    """At most ``n`` analyses at once (default: the number of CPUs)."""
    n = positive_int("max_concurrent_analyses", n)
    return lambda config: dataclasses.replace(config, max_concurrent_analyses=n)


def with_token(token: str) -> Option:
    """A token for https remotes (basic auth as ``x-access-token``); never shown."""
    if not isinstance(token, str) or not token or any(ch.isspace() for ch in token):
        raise ValueError("token must be a non-empty string without whitespace")
    return lambda config: dataclasses.replace(config, token=token)


def with_work_dir(path: Path, *, keep_clones: bool = False) -> Option:
    """Where clones are made; with ``keep_clones`` they stay there after the analysis."""
    path = Path(path)
    return lambda config: dataclasses.replace(config, work_dir=path, keep_clones=keep_clones)


def with_clone_weight(weigh: Callable[[str], int]) -> Option:
    """How many units of the clone limit a repository takes (default 1 per clone).

    E.g. ``with_max_concurrent_clones(2048), with_clone_weight(expected_mb)`` budgets
    memory: clones run while the sum of their expected megabytes fits in 2048.
    """
    if not callable(weigh):
        raise ValueError("clone_weight must be a function from URL to int")
    return lambda config: dataclasses.replace(config, clone_weight=weigh)


def with_stuck_threshold(seconds: float) -> Option:
    """Warn (log and event) when a clone has run longer than this (default 10 minutes)."""
    value = positive_seconds("stuck_threshold", seconds)
    return lambda config: dataclasses.replace(config, stuck_threshold=value)


def with_event_hook(hook: Callable[[Event], None]) -> Option:
    """Call ``hook(event)`` at each step of each repository (the CLI draws progress from it).

    The hook runs in the trio task of the repository: it must be quick and must not block.
    """
    if not callable(hook):
        raise ValueError("event_hook must be callable")
    return lambda config: dataclasses.replace(config, event_hook=hook)

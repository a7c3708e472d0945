"""Retries of a clone that a server pushed back (issue 43): how long to wait, what is kept."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["FailedAttempt", "JitteredBackoff", "RetryDelay"]


class RetryDelay(Protocol):
    """How long a repository waits before its next clone attempt."""

    def delay(self, attempt: int, retry_after: float | None, deadline: float | None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1 for the first).

        ``retry_after``: what the server asked for (its ``Retry-After``), or ``None``;
        honoured when longer than the backoff's own. ``deadline``: seconds left before
        the repository's deadline, or ``None``; the answer is never above it. Sync:
        never a checkpoint.
        """
        ...


@dataclass(frozen=True, slots=True)
class JitteredBackoff:
    """Exponential backoff with full jitter: a uniform draw in ``[0, min(cap, base *
    2 ** (attempt - 1))]``, so that clients a server pushed back together do not all
    come back together; a longer ``retry_after`` wins; bounded by ``deadline``.

    ``rng`` is injectable for tests (a seeded :class:`random.Random`).
    """

    base: float = 1.0
    cap: float = 30.0
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, retry_after: float | None, deadline: float | None) -> float:
        ceiling = min(self.cap, self.base * 2.0 ** min(attempt - 1, 60))
        wait = self.rng.uniform(0.0, ceiling)
        if retry_after is not None:
            wait = max(wait, retry_after)
        if deadline is not None:
            wait = min(wait, max(0.0, deadline))
        return wait


@dataclass(frozen=True, slots=True)
class FailedAttempt:
    """A clone attempt that failed and was tried again: its error's ``kind`` and
    ``message`` (redacted, as every clone error's), and the seconds the repository
    then ``waited`` before its next attempt, without a clone slot."""

    kind: str
    message: str
    waited: float

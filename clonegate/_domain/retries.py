"""Retries of a clone that a server pushed back (issue 43): how long to wait, what is kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["FailedAttempt", "RetryDelay"]


class RetryDelay(Protocol):
    """How long a repository waits before its next clone attempt."""

    def delay(self, attempt: int, retry_after: float | None, deadline: float | None) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1 for the first).

        ``retry_after``: what the server asked for (its ``Retry-After``), or ``None``;
        honoured when longer than the backoff's own. ``deadline``: the repository's
        deadline in trio time (its cancel scope's), or ``None`` for none; the wait
        never ends past it. Sync: never a checkpoint. :class:`clonegate._domain.backoff.Backoff`
        is the default.
        """
        ...


@dataclass(frozen=True, slots=True)
class FailedAttempt:
    """A clone attempt that failed and was tried again: its error's ``kind`` and
    ``message`` (redacted, as every clone error's), and the seconds the repository
    then ``waited`` before its next attempt, without a clone slot."""

    kind: str
    message: str
    waited: float

"""A repository's clone attempts: tried again, without a clone slot, when the server
pushed back (issue 43); and how a clone that failed for good is reported."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import trio

from .._domain.errors import RETRIED_KINDS, CloneError
from .._domain.limits import LimitError
from .._domain.reports import RepositoryStatus
from .._domain.retries import FailedAttempt, RetryDelay
from .._domain.urls import redact
from .._domain.vcs import ClonedSource

__all__ = ["Tried", "clone_failure", "with_retries"]

logger = logging.getLogger("clonegate")


@dataclass
class Tried:
    """What a repository's clone attempts left: the clone, its memory figure (the
    report's ``clone_memory``), and the attempts that failed and were tried again."""

    source: ClonedSource | None = None
    peak: int | None = None
    failed: list[FailedAttempt] = field(default_factory=list)


async def with_retries(
    attempt: Callable[[], Awaitable[ClonedSource]],
    retries: int,
    delay: RetryDelay,
    deadline: trio.CancelScope,
    tried: Tried,
    on_retry: Callable[[FailedAttempt], None],
) -> ClonedSource:
    """``await attempt()``, again up to ``retries`` times while it fails with a kind of
    :data:`RETRIED_KINDS`; any other error, or the last one, is raised as itself.

    Each retried failure is appended to ``tried.failed`` and given to ``on_retry``
    before the wait. ``attempt`` takes and gives back its own clone slot, so the wait
    between attempts holds none. The wait is ``delay.delay(number, retry_after,
    ends)``, ``ends`` the repository's deadline (its ``deadline`` scope's, trio time);
    one that would reach the repository's deadline is not begun: the error is raised
    then, since a report of the server's answer says more than a timeout. Cancellation
    during the wait propagates (the sleep is the checkpoint), with nothing held.
    """
    for number in itertools.count(1):
        try:
            return await attempt()
        except CloneError as exc:
            if exc.kind not in RETRIED_KINDS or number > retries:
                raise
            ends = deadline.deadline if deadline.deadline != float("inf") else None
            left = deadline.deadline - trio.current_time()
            wait = delay.delay(number, exc.retry_after, ends)
            if not 0.0 <= wait < left:  # NaN and negatives too: a broken delay ends it
                raise
            tried.failed.append(FailedAttempt(str(exc.kind), str(exc), wait))
            on_retry(tried.failed[-1])
            await trio.sleep(wait)
    raise AssertionError("unreachable: itertools.count never ends")


def clone_failure(exc: Exception, shown: str) -> tuple[str, RepositoryStatus, str]:
    """The kind, status and message a clone that raised ``exc`` is reported with."""
    if isinstance(exc, CloneError):
        return exc.kind, RepositoryStatus.of_error(exc.kind), str(exc)
    if isinstance(exc, LimitError):  # a shared limit failed this clone
        return exc.kind, RepositoryStatus.FAILED, f"{shown}: {redact(str(exc))}"
    # A VCS of the user's that broke its contract: this repository only.
    logger.exception("clone of %s failed", shown)
    return "clone_error", RepositoryStatus.FAILED, failure_message(shown, exc)


def failure_message(shown: str, exc: BaseException) -> str:
    return f"{shown}: {redact(f'{type(exc).__name__}: {exc}')}"

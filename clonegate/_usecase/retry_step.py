"""A repository's clone attempts: tried again, without a clone slot, when the server
pushed back (issue 43); and how a clone that failed for good is reported."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, TypeVar

import trio

from .._domain.errors import (
    CONNECTION_FAILURE_KINDS,
    RETRIED_KINDS,
    CloneError,
    ErrorKind,
    retried_kinds,
)
from .._domain.limits import LimitError
from .._domain.reports import RepositoryReport, RepositoryStatus
from .._domain.repository import Repository
from .._domain.retries import FailedAttempt, RetryDelay
from .._domain.urls import redact
from .._domain.vcs import ClonedSource
from .breakers import HostGuard
from .options import UseCaseConfig
from .stopwatch import Stopwatch

__all__ = [
    "Retrying",
    "Tried",
    "clone_failure",
    "expired_report",
    "retry_loop",
    "with_retries",
]

logger = logging.getLogger("clonegate")
T = TypeVar("T")


class Retrying(Protocol):
    """:func:`with_retries` with everything but the attempt bound: a repository's loop."""

    async def __call__(self, attempt: Callable[[], Awaitable[T]]) -> T: ...


@dataclass
class Tried:
    """What a repository's clone attempts left: the clone, its memory figure (the
    report's ``clone_memory``), the attempts that failed and were tried again, and its
    way through its host's breaker (``guard.waiting``: the deadline came in its line)."""

    source: ClonedSource | None = None
    peak: int | None = None
    failed: list[FailedAttempt] = field(default_factory=list)
    guard: HostGuard | None = None


async def with_retries(
    attempt: Callable[[], Awaitable[T]],
    retries: int,
    delay: RetryDelay,
    deadline: trio.CancelScope,
    tried: Tried,
    on_retry: Callable[[FailedAttempt, bool], None],
    *,
    kinds: frozenset[ErrorKind] = RETRIED_KINDS,
    guard: HostGuard | None = None,
) -> T:
    """``await attempt()``, again up to ``retries`` times while it fails with a kind of
    ``kinds`` (:data:`RETRIED_KINDS` by default); any other error, or the last one, is
    raised as itself.

    Each retried failure is appended to ``tried.failed`` and given to ``on_retry``
    before the wait, with whether the wait is for the host's breaker. ``attempt``
    takes and gives back its own clone slot, so the wait between attempts holds none.
    The wait is ``delay.delay(number, retry_after, ends)``, ``ends`` the repository's
    deadline (its ``deadline`` scope's, trio time); one that would reach the
    repository's deadline is not begun: the error is raised then, since a report of
    the server's answer says more than a timeout. Cancellation during the wait
    propagates (the sleep is the checkpoint), with nothing held.

    With a ``guard`` (the repository's host breaker), each attempt first waits for the
    breaker. A connection that failed while the host's breaker is open (the host is
    down, ADR 0019) is not charged to ``retries``: the repository waits in the
    breaker's line instead of a backoff, and the breaker's probes bound those
    attempts; the host given up, :exc:`HostUnavailableError` is raised.
    """
    tried.guard = guard
    charged = 0
    while True:
        earlier = len(tried.failed)
        try:
            if guard is None:
                return await attempt()
            return await guard.run(attempt)
        except CloneError as exc:
            if exc.kind not in kinds or retries == 0:
                raise
            if guard is not None and exc.kind in CONNECTION_FAILURE_KINDS and guard.host_down():
                tried.failed.append(FailedAttempt(str(exc.kind), str(exc), 0.0))
                on_retry(tried.failed[-1], True)
                continue
            # A push-back the host's limit took as its own is the limit's search for
            # the host's capacity: waited for, not charged (bounded by the deadline,
            # and by the limit's floor, where push-backs are charged again).
            if not exc.limit_probe:
                charged += 1
                if charged > retries:
                    raise
            ends = deadline.deadline if deadline.deadline != float("inf") else None
            left = deadline.deadline - trio.current_time()
            wait = delay.delay(max(charged, 1), exc.retry_after, ends)
            if not 0.0 <= wait < left:  # NaN and negatives too: a broken delay ends it
                raise
            tried.failed.append(FailedAttempt(str(exc.kind), str(exc), wait))
            on_retry(tried.failed[-1], False)
            await trio.sleep(wait)
        finally:
            if guard is not None and guard.waited and earlier:
                # The time in the breaker's line is the previous failed attempt's wait too.
                last = tried.failed[earlier - 1]
                waited = last.waited + guard.waited
                tried.failed[earlier - 1] = dataclasses.replace(last, waited=waited)


def retry_loop(
    config: UseCaseConfig,
    guard: HostGuard | None,
    deadline: trio.CancelScope,
    tried: Tried,
    on_retry: Callable[[FailedAttempt, bool], None],
) -> Retrying:
    """A repository's retry loop, for its ref listing and its clones alike: the run's
    policy (``config``) and its host's breaker (``guard``)."""
    return partial(
        with_retries,
        retries=config.retries,
        delay=config.retry_delay,
        deadline=deadline,
        tried=tried,
        on_retry=on_retry,
        kinds=retried_kinds(timeouts=config.retry_timeouts),
        guard=guard,
    )


def expired_report(
    tried: Tried, watch: Stopwatch, repository: Repository, limit: float, now: float
) -> RepositoryReport:
    """The report of a repository whose deadline (``limit`` seconds) came: its host's
    unavailability if it was waiting in its host's breaker's line then, else a
    timeout of the phase it was in (the clone or analysis was stopped and removed)."""
    shown, index, timings = repository.shown, repository.index, watch.timings(now)
    if tried.guard is not None and tried.guard.waiting:
        down = tried.guard.unavailable(f"still down at the {limit:g} s repository timeout")
        return RepositoryReport.failure(
            shown, index, "clone", down.kind, str(down), RepositoryStatus.FAILED, timings
        )
    return RepositoryReport.failure(
        shown,
        index,
        "analyze" if watch.cloned_at is not None else "clone",
        ErrorKind.TIMEOUT,
        f"{shown}: no result within the {limit:g} s repository timeout (while {watch.phase()})",
        RepositoryStatus.TIMEOUT,
        timings,
        tried.peak,
    )


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

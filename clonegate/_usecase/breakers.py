"""One breaker per host for a use case (issue 43, ADR 0019): a repository's attempts
go through its host's :class:`~clonegate._domain.breaker.Breaker` before they take a
clone slot, so a host that is down costs a few connection attempts, not one per
repository, and a repository waiting for it holds no slot."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

import trio

from .._domain import breaker as domain
from .._domain.breaker import Attempt, Breaker, BreakerState, BreakerStatistics
from .._domain.credentials import Credential
from .._domain.errors import (
    CONNECTION_FAILURE_KINDS,
    CloneError,
    ErrorKind,
    HostUnavailableError,
)
from .._domain.repository import Repository
from .._domain.urls import DEFAULT_PORTS, RepoURL
from .._domain.vcs import VCS

__all__ = ["BreakerSettings", "Breakers", "HostGuard", "guard_for"]

T = TypeVar("T")
Probe = Callable[[], Awaitable[object]]

# Kinds that say nothing about the host: nothing was sent (an invalid URL), the
# worker was killed from outside, a deadline passed while the outcome was unknown.
_SAYS_NOTHING = frozenset({ErrorKind.INVALID_URL, ErrorKind.CANCELLED, ErrorKind.TIMEOUT})


@dataclass(frozen=True, slots=True)
class BreakerSettings:
    """A host's breaker opens after ``threshold`` connection failures in a row; its
    first probe comes ``cool_down`` seconds later (see :class:`Breaker`; the defaults
    are ``UseCaseConfig``'s)."""

    threshold: int
    cool_down: float


@dataclass
class _Entry:
    breaker: Breaker
    users: int = 0  # repositories of the host in flight
    given_up_at: float = math.inf


class Breakers:
    """The breakers of one use case, by origin (scheme, host, port: a host's ssh may
    be down while its https is up). A breaker is kept while a repository of its host
    is in flight or it holds failures; a host given up stays given up for
    ``longest_cool_down`` seconds (60), then the next repository tries it afresh: a
    long-lived worker does not give a host up for good."""

    def __init__(self, settings: BreakerSettings) -> None:
        self.settings = settings
        self._entries: dict[str, _Entry] = {}

    @classmethod
    def of(cls, threshold: int, cool_down: float) -> Breakers | None:
        """The breakers a use case's options ask for; None with ``threshold`` 0."""
        return cls(BreakerSettings(threshold, cool_down)) if threshold else None

    def guard(
        self, parsed: RepoURL | None, shown: str, probe: Probe | None = None
    ) -> HostGuard | None:
        """The guard for one repository's attempts; None for a local one (no host).
        ``probe``: a cheap request to the repository's server (its ref listing), made
        first when the repository's attempt is its host's probe."""
        if parsed is None or not parsed.host:
            return None
        port = parsed.port or DEFAULT_PORTS.get(parsed.scheme, 0)
        return HostGuard(self, f"{parsed.scheme}://{parsed.host}:{port}", shown, probe)

    def __len__(self) -> int:
        """Hosts with a breaker kept now (in flight, or with failures to remember)."""
        return len(self._entries)

    def statistics(self, origin: str) -> BreakerStatistics | None:
        """The breaker of ``origin`` (``scheme://host:port``), if one is kept."""
        entry = self._entries.get(origin)
        return None if entry is None else entry.breaker.statistics()

    def enter(self, origin: str) -> Breaker:
        """The breaker of ``origin`` for one attempt (a fresh one after a give-up
        ``longest_cool_down`` ago); :meth:`leave` when the attempt is over."""
        entry = self._entries.get(origin)
        now = trio.current_time()
        forget = entry is not None and now - entry.given_up_at >= _longest(entry)
        if entry is None or forget:
            threshold, cool_down = self.settings.threshold, self.settings.cool_down
            made = Breaker(
                origin,
                threshold=threshold,
                cool_down=cool_down,
                longest_cool_down=max(60.0, cool_down),
            )
            # The old breaker's attempts leave it, not this one (leave checks which).
            entry = self._entries[origin] = _Entry(made)
        entry.users += 1
        return entry.breaker

    def leave(self, origin: str, breaker: Breaker) -> None:
        entry = self._entries.get(origin)
        if entry is None or entry.breaker is not breaker:
            return  # replaced meanwhile (forgotten after its give-up)
        entry.users -= 1
        if breaker.state is BreakerState.GIVEN_UP:
            entry.given_up_at = min(entry.given_up_at, trio.current_time())
        stats = breaker.statistics()
        idle = stats.state is BreakerState.CLOSED and stats.failures_in_a_row == 0
        if entry.users == 0 and idle:
            del self._entries[origin]  # nothing to remember: one entry per host in flight


def guard_for(
    breakers: Breakers | None, repository: Repository, vcs: VCS, credential: Credential | None
) -> HostGuard | None:
    """``repository``'s way through its host's breaker, its probe a ref listing."""
    if breakers is None:
        return None
    listing = partial(vcs.remote_head, repository.url, credential=credential)
    return breakers.guard(repository.parsed, repository.shown, listing)


def _longest(entry: _Entry) -> float:
    return entry.breaker.longest_cool_down


class HostGuard:
    """One repository's way through its host's breaker, attempt after attempt."""

    def __init__(
        self, breakers: Breakers, origin: str, shown: str, probe: Probe | None = None
    ) -> None:
        self._breakers = breakers
        self.origin = origin
        self._shown = shown
        self._probe = probe
        self.waiting = False  # in the breaker's line now (the host is down)
        self.waited = 0.0  # seconds the last attempt waited in the breaker's line

    def host_down(self) -> bool:
        """Whether the host's breaker is not closed (not a checkpoint)."""
        stats = self._breakers.statistics(self.origin)
        return stats is not None and stats.state is not BreakerState.CLOSED

    def unavailable(self, why: str) -> HostUnavailableError:
        """The repository's error when it stops waiting for its host: ``why``."""
        stats = self._breakers.statistics(self.origin)
        failures = stats.failures if stats is not None else 0
        return HostUnavailableError(
            self._shown, f"its host is down: {failures} failed connections to it ({why})"
        )

    async def run(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """``await attempt()`` once the breaker lets it go; reports how it connected.

        Raises :exc:`HostUnavailableError` (the repository's) when the host is given up.
        """
        breaker = self._breakers.enter(self.origin)
        # Left set if the wait is cancelled: the repository's deadline came while its
        # host was down, and its report says so (host_unavailable, not timeout).
        self.waiting = breaker.state is not BreakerState.CLOSED
        entered, self.waited = trio.current_time(), 0.0
        try:
            async with breaker.attempt() as admitted:
                if self.waiting:
                    self.waiting, self.waited = False, trio.current_time() - entered
                if admitted.probe and self._probe is not None:
                    await _probed(admitted, self._probe)
                return await _reported(admitted, attempt)
        except domain.HostUnavailableError as exc:
            raise self.unavailable(exc.reason) from None
        finally:
            if self.waiting:  # it ended in the line: given up, or the deadline came
                self.waited = trio.current_time() - entered
            self._breakers.leave(self.origin, breaker)


async def _probed(admitted: Attempt, probe: Probe) -> None:
    """Ask the host first, cheaply: its answer (any) closes the breaker now, so its
    waiting repositories go while this one clones, not once its clone has ended."""
    try:
        await probe()
    except NotImplementedError:
        return  # a VCS that cannot list: the attempt itself is the probe
    except CloneError as exc:
        if exc.kind in CONNECTION_FAILURE_KINDS:
            admitted.failed(exc.reason)
            raise
        if exc.kind not in _SAYS_NOTHING:
            admitted.connected()
        return
    admitted.connected()


async def _reported(admitted: Attempt, attempt: Callable[[], Awaitable[T]]) -> T:
    try:
        result = await attempt()
    except CloneError as exc:
        if exc.kind in CONNECTION_FAILURE_KINDS:
            admitted.failed(exc.reason)
        elif exc.kind not in _SAYS_NOTHING:
            admitted.connected()  # the server answered: a 404, a 429, a reset pack
        raise
    admitted.connected()
    return result

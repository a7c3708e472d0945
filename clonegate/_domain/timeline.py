"""When each thing happened in a run, on the wall clock (issue 44, ADR 0020): each
repository's phases, and the run's own events (its limits and memory budget changing).

A run is drawn after the fact from these: a phase is an interval of one repository, an
event an instant of the run. Instants are taken from a :class:`RunClock`: the wall
clock read once, when the run begins, plus the monotonic time since. Reading the wall
clock at each instant instead would let a clock step (NTP, a suspended laptop) reorder
one repository's phases, or put them outside their run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from enum import StrEnum

__all__ = [
    "Phase",
    "PhaseName",
    "RunClock",
    "RunEvent",
    "RunEventKind",
    "from_microseconds",
    "microseconds",
]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class PhaseName(StrEnum):
    LISTING = "listing"  # an incremental run asks the remote for its HEAD
    WAITING = "waiting"  # for a clone slot (and the shared limits, and the memory)
    SETUP = "setup"  # the VCS's preparation once the slot is held (a worker process)
    CLONE = "clone"  # the clone itself, slot held
    RETRY_WAIT = "retry_wait"  # after a pushed-back attempt, no slot held (issue 43)
    ANALYSIS = "analysis"  # outside the gate (waiting for an analysis process included)


@dataclass(frozen=True, slots=True)
class Phase:
    """One interval of a repository's way through a run, wall-clock instants (UTC).

    ``attempt``: the clone attempt (1 for the first) a waiting, setup, clone or
    retry_wait phase belongs to; a retry_wait follows the attempt that failed, and
    lasts what that attempt's :class:`FailedAttempt` says it ``waited``. None for the
    listing and the analysis."""

    name: str  # a PhaseName value
    started: datetime
    ended: datetime
    attempt: int | None = None


class RunEventKind(StrEnum):
    CLONE_LIMIT = "clone_limit"  # clone slots the gate admits (value), from the start
    MEMORY_BUDGET = "memory_budget"  # MiB the memory gate admits (value), from the start
    HOST_LIMIT = "host_limit"  # clones one host admits (value; detail: the host)
    # Memory thrashed: a stretch without progress under memory pressure (issue 46,
    # ADR 0014). Not a limit: value, the running clones that made none; detail, figures.
    MEMORY_THRASH = "memory_thrash"


@dataclass(frozen=True, slots=True)
class RunEvent:
    """A limit of the run took ``value`` at ``at`` (UTC): its first value when the run
    began, then each change. ``detail`` says why, or which host, in words. Or, of kind
    ``memory_thrash``, the run's memory thrashed then (see :class:`RunEventKind`)."""

    kind: str  # a RunEventKind value
    at: datetime
    value: int
    detail: str = ""


@dataclass(slots=True)
class RunClock:
    """Wall-clock instants for a monotonic clock's readings: the wall time of
    :meth:`anchor`'s call plus the monotonic seconds since. Sync; never a checkpoint.

    ``monotonic`` is the clock the readings come from (the use case's: trio's);
    ``wall``, seconds since the epoch. Until anchored, the first conversion anchors."""

    monotonic: Callable[[], float]
    wall: Callable[[], float] = time.time
    _anchor: tuple[float, float] | None = field(default=None, init=False)

    def anchor(self) -> None:
        """From now on, convert from the wall clock as it reads now (a run begins)."""
        self._anchor = (self.wall(), self.monotonic())

    def at(self, reading: float) -> datetime:
        """The wall-clock instant of the monotonic ``reading`` (UTC, aware)."""
        if self._anchor is None:
            self.anchor()
        assert self._anchor is not None
        wall, monotonic = self._anchor
        return datetime.fromtimestamp(wall + (reading - monotonic), UTC)

    def now(self) -> datetime:
        return self.at(self.monotonic())


def microseconds(instant: datetime) -> int:
    """``instant`` as whole microseconds since the Unix epoch: exact, where a float of
    seconds is not."""
    return (instant - _EPOCH) // timedelta(microseconds=1)


def from_microseconds(count: int) -> datetime:
    """The instant (UTC) :func:`microseconds` gave ``count`` for."""
    return _EPOCH + timedelta(microseconds=count)

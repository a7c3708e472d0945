"""A stored run on one time axis (issue 44, ADR 0022): seconds since the run began,
which clone slot each attempt held, and how busy each pixel column was.

The store records when each repository held a clone slot (its ``setup`` and ``clone``
phases), not which slot: rows are assigned here by greedy interval colouring (each
attempt, in order of its start, takes the lowest-numbered slot free then), which uses
as few rows as the most clones that were ever at work at once.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from clonegate import RepositoryReport

__all__ = ["Axis", "Held", "assign_slots", "column_means", "held_slots", "run_axis"]

# Phases during which a repository holds a clone slot (ADR 0020).
SLOT_PHASES = frozenset({"setup", "clone"})


@dataclass(frozen=True, slots=True)
class Axis:
    """The run's time axis: ``origin`` is second 0, ``span`` seconds long (never 0)."""

    origin: datetime
    span: float

    def at(self, instant: datetime) -> float:
        return (instant - self.origin).total_seconds()


@dataclass(frozen=True, slots=True)
class Held:
    """One attempt of repository ``row`` (its place in the run) holding a clone slot,
    in seconds on the run's axis; ``setup_end``: where its setup gave way to the clone."""

    row: int
    attempt: int
    start: float
    setup_end: float
    end: float


def run_axis(
    started: datetime, finished: datetime | None, reports: Iterable[RepositoryReport]
) -> Axis:
    """The axis from the run's start (or its first phase, if earlier: a lone execute()
    stored after it ended, ADR 0020) to its end or its last phase, whichever is later."""
    first, last = started, finished or started
    for report in reports:
        for phase in report.phases:
            first, last = min(first, phase.started), max(last, phase.ended)
    return Axis(first, max((last - first).total_seconds(), 1e-3))


def held_slots(axis: Axis, reports: Sequence[RepositoryReport]) -> list[Held]:
    """Every attempt that held a clone slot, in order of its start."""
    found = []
    for row, report in enumerate(reports):
        attempts: dict[int, list[tuple[str, float, float]]] = {}
        for phase in report.phases:
            if phase.name in SLOT_PHASES:
                where = (phase.name, axis.at(phase.started), axis.at(phase.ended))
                attempts.setdefault(phase.attempt or 1, []).append(where)
        for attempt, phases in attempts.items():
            start = min(p[1] for p in phases)
            end = max(p[2] for p in phases)
            setup_end = max((p[2] for p in phases if p[0] == "setup"), default=start)
            found.append(Held(row, attempt, start, setup_end, end))
    found.sort(key=lambda h: (h.start, h.end, h.row))
    return found


def assign_slots(held: Sequence[Held]) -> list[int]:
    """The slot row (0-based) of each of ``held`` (sorted by start): the lowest one free
    when it starts. An attempt that starts as another ends takes its slot."""
    busy: list[tuple[float, int]] = []  # (end, slot) of attempts holding a slot
    free: list[int] = []
    rows = 0
    slots = []
    for attempt in held:
        while busy and busy[0][0] <= attempt.start:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            slot = heapq.heappop(free)
        else:
            slot, rows = rows, rows + 1
        heapq.heappush(busy, (attempt.end, slot))
        slots.append(slot)
    return slots


def column_means(
    intervals: Iterable[tuple[float, float, float]], span: float, columns: int
) -> list[float]:
    """For each of ``columns`` equal columns of ``[0, span]``, the time-weighted mean of
    the weights of ``intervals`` (start, end, weight) over it: the number of busy slots
    when each weight is 1. Linear in intervals plus columns (a difference array for the
    columns an interval covers whole), however long the intervals."""
    width = span / columns
    partial = [0.0] * columns
    whole = [0.0] * (columns + 1)
    for start, end, weight in intervals:
        start, end = max(start, 0.0), min(end, span)
        if end <= start:
            continue
        first, last = _column(start, width, columns), _column(end, width, columns)
        if first == last:
            partial[first] += weight * (end - start) / width
            continue
        partial[first] += weight * ((first + 1) * width - start) / width
        partial[last] += weight * (end - last * width) / width
        whole[first + 1] += weight
        whole[last] -= weight
    means, running = [], 0.0
    for column in range(columns):
        running += whole[column]
        means.append(running + partial[column])
    return means


def _column(instant: float, width: float, columns: int) -> int:
    return min(int(instant / width), columns - 1)

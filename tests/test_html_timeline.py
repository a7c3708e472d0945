"""The HTML report's time axis, without a store (issue 44, ADR 0022): slot rows by
greedy interval colouring, busy slots per pixel column, when bars give way to areas."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from clonegate_cli._html_time import Axis, Held, assign_slots, column_means
from clonegate_cli._html_timeline import WIDTH, dense

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def held(*spans: tuple[float, float]) -> list[Held]:
    return [Held(n, 1, start, start, end) for n, (start, end) in enumerate(spans)]


def test_slots_are_as_few_as_the_most_clones_at_once_and_never_shared() -> None:
    attempts = held((0, 4), (1, 2), (2, 5), (3, 6), (4, 7), (5.5, 6), (8, 9))
    slots = assign_slots(attempts)
    # At 3.5 three attempts held a slot: (0,4), (2,5), (3,6). Three rows, no more.
    assert max(slots) + 1 == 3
    for (a, sa), (b, sb) in itertools.combinations(zip(attempts, slots, strict=True), 2):
        if sa == sb:
            assert a.end <= b.start or b.end <= a.start, (a, b)


def test_an_attempt_starting_as_another_ends_takes_its_slot() -> None:
    assert assign_slots(held((0, 1), (1, 2), (2, 3))) == [0, 0, 0]
    assert assign_slots(held((0, 3), (0, 1), (1, 2))) == [0, 1, 1]


def test_column_means_are_busy_slots_weighted_by_time() -> None:
    # Over 4 s in 4 columns: one slot busy all along, another from 0.5 s to 2 s.
    means = column_means([(0, 4, 1.0), (0.5, 2, 1.0)], 4.0, 4)
    assert means == [1.5, 2.0, 1.0, 1.0]
    assert column_means([(1.25, 1.75, 2.0)], 4.0, 4) == [0.0, 1.0, 0.0, 0.0]
    assert column_means([(-5, 100, 1.0)], 4.0, 4) == [1.0] * 4  # clipped to the axis


def test_bars_give_way_to_an_area_when_thinner_than_a_pixel() -> None:
    axis = Axis(T0, 100.0)
    few = held(*((n * 10.0, n * 10.0 + 9) for n in range(10)))
    assert not dense(axis, few, assign_slots(few))
    thin = held(*((n * 0.01, n * 0.01 + 0.005) for n in range(10)))  # 0.05 px each
    assert dense(axis, thin, assign_slots(thin))
    crowded = held(*((n * 100 / WIDTH, (n + 1) * 100 / WIDTH) for n in range(WIDTH)))
    assert dense(axis, crowded, assign_slots(crowded))  # a bar a pixel, no room between


def test_an_axis_counts_seconds_from_its_origin() -> None:
    assert Axis(T0, 10.0).at(T0 + timedelta(seconds=2.5)) == 2.5

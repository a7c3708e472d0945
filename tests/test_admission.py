"""MemoryAdmission on its own (ADR 0018): the gate's memory budget, with no gate around
it. The gate's use of it is tested in test_budget_phases.py and test_budget.py."""

from __future__ import annotations

import trio
import trio.testing

from clonegate._usecase.admission import MemoryAdmission, MemoryFigures, MemoryLease
from clonegate._usecase.estimates import MemoryEstimates

MiB = 1 << 20


async def test_the_head_estimates_again_when_a_clone_teaches_and_fits_then() -> None:
    admission = MemoryAdmission(MemoryEstimates(initial=60, ceiling=100))
    first = await admission.admit("h", "")
    assert admission.figures() == MemoryFigures(budget=100, size=100, held=60, estimate=60)
    admitted: list[MemoryLease] = []

    async def second() -> None:
        admitted.append(await admission.admit("h", ""))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(second)
        await trio.testing.wait_all_tasks_blocked()
        assert admitted == []  # 60 more do not fit in 40
        assert admission.heaviest() == 60  # the head's figure, for the controller's floor
        admission.learn("h", 20 * MiB)  # a clone of h took 20 MiB: the head asks again
    (lease,) = admitted
    assert lease.memory == admission.estimates.estimate("h") <= 40
    assert admission.figures().held == 60 + lease.memory
    admission.release(first)
    admission.release(lease)
    assert admission.figures().held == 0
    assert admission.heaviest() == 1


async def test_a_running_clone_grows_at_once_when_free_and_gives_all_back() -> None:
    admission = MemoryAdmission(MemoryEstimates(initial=10, ceiling=100))
    lease = await admission.admit("h", "")
    await admission.need(lease, 70 * MiB)
    assert (lease.memory, admission.figures().held, admission.heaviest()) == (70, 70, 70)
    await admission.need(lease, 500 * MiB)  # at most the budget
    assert lease.memory == 100
    admission.release(lease)
    assert (lease.memory, admission.figures().held) == (0, 0)


async def test_walks_leave_their_pack_pages_out_as_far_as_the_room_outside_the_budget() -> None:
    """Issue 46: a delta walk maps its whole pack (52 of its 107 MiB are those pages),
    which the kernel reclaims before it kills anything. Three clones each forecast
    110 MiB, 60 of them pages, in a 150 MiB budget, whose room for pages is 2/3 of it
    (100 MiB): the first two hold 50 each and run at once (before, 110 each: one at
    a time); the third would put 180 MiB of pages in that room, which its walk would
    read again from disk: it reserves its pages, and waits."""
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=150, opening=8))
    assert admission.page_room == 100
    leases = [await admission.admit("h", "") for _ in range(3)]
    with trio.move_on_after(5):  # a safety net: the rule before waits here
        for lease in leases[:2]:
            await admission.need(lease, 110 * MiB, 60 * MiB)
    assert [lease.memory for lease in leases] == [50, 70, 8]  # the room's last 40
    assert leases[0].forecasts == [110 * MiB]  # a peak, which counts the pages, meets this
    async with trio.open_nursery() as nursery:
        nursery.start_soon(admission.need, leases[2], 110 * MiB, 60 * MiB)
        await trio.testing.wait_all_tasks_blocked()
        assert admission.heaviest() == 110  # the third waits for its whole figure
        admission.release(leases[0])  # its pages go with it
        admission.release(leases[1])
    # Figured again once the others ended: the room is free, its pages left out.
    assert (leases[2].memory, leases[2].pages) == (50, 60)


async def test_a_peak_with_its_pages_corrects_the_forecast_with_its_pages() -> None:
    """A clone's peak (its resident size) counts the pages it mapped; it is measured
    against the whole forecast, not against what was reserved, so pages left out of
    the reservation do not read as a clone that used more than it said (which would
    raise the next forecasts back to the whole figure)."""
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=1000, opening=8))
    lease = await admission.admit("h", "")
    await admission.need(lease, 100 * MiB, 50 * MiB)
    assert lease.memory == 50
    admission.release(lease)
    admission.learn("h", 90 * MiB, lease=lease)  # 0.9 of the forecast, pages included
    after = await admission.admit("h", "")
    await admission.need(after, 100 * MiB, 50 * MiB)
    # The forecast is kept (0.9 times the margin is above 1), its pages still left out.
    assert after.memory == 50


async def test_a_refusable_figure_keeps_what_it_holds_or_is_refused() -> None:
    """A first pass that met more deltas than it asked for wants the whole bound,
    refusably (issue 46): taken if free; waited for keeping what it holds (its records
    are in it); refused at once behind another when what both lack cannot come from
    what is free and what running clones hold (none here), what it held unchanged. The
    figure asked after a refusal is still a bound (corrected as the bounds before a
    count are)."""
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=100, opening=8))
    first, second = await admission.admit("h", ""), await admission.admit("h", "")
    assert await admission.need(first, 30 * MiB)
    assert await admission.need(first, 60 * MiB, refusable=True)
    assert (first.memory, first.forecasts, first.bounds) == (60, [30 * MiB, 60 * MiB], 2)
    held: list[bool] = []

    async def grow() -> None:
        held.append(await admission.need(second, 60 * MiB, refusable=True))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(grow)
        await trio.testing.wait_all_tasks_blocked()
        assert held == []  # 32 free: it waits, first in line
        assert (second.memory, admission.heaviest()) == (8, 60)  # keeping its 8
        with trio.testing.assert_checkpoints():
            refused = await admission.need(first, 70 * MiB, refusable=True)
        assert not refused  # behind the other, 62 missing, 32 free, nothing running
        assert (first.memory, first.forecasts[-1], first.refused) == (60, 60 * MiB, True)
        admission.release(first)
    assert held == [True]
    assert (second.memory, second.bounds, second.refused) == (60, 1, False)
    third = await admission.admit("h", "")
    assert await admission.need(third, 30 * MiB)
    # Refused (behind a waiter), then asked again waiting: both bounds.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(admission.need, third, 50 * MiB)  # waits: 2 free
        await trio.testing.wait_all_tasks_blocked()
        assert not await admission.need(second, 80 * MiB, refusable=True)
        nursery.start_soon(admission.need, second, 80 * MiB)
        await trio.testing.wait_all_tasks_blocked()
        admission.release(third)
    assert (second.memory, second.bounds) == (80, 2)
    admission.release(second)
    assert admission.figures().held == 0


async def test_only_the_forecasts_that_held_to_the_end_are_measured_by_the_peak() -> None:
    """A first pass's ask that a larger walk's followed was not a forecast of the peak:
    measured by it, a 26 MiB ask of a clone that peaked at 125 would have raised the
    next first asks of its host five-fold (issue 46). The walk's figure is measured."""
    estimates = MemoryEstimates(initial=1024, ceiling=1000, opening=8)
    admission = MemoryAdmission(estimates)
    lease = await admission.admit("h", "")
    await admission.need(lease, 26 * MiB)
    await admission.need(lease, 106 * MiB, 50 * MiB)
    assert lease.bounds == 1
    admission.release(lease)
    admission.learn("h", 125 * MiB, lease=lease)
    assert estimates.corrected("h", 26 * MiB, first=True) == 26 * MiB  # not measured
    # The walk's: 125 / 106 times the margin.
    assert estimates.corrected("h", 106 * MiB, first=False) > 150 * MiB


async def test_refusable_waiters_keep_behind_others_while_all_can_be_served() -> None:
    """Two first passes wait keeping their records (issue 46): safe while what they
    lack fits in what is free and what running clones hold. When the budget shrinks
    (the controller), the one behind can no longer be served with what the first
    keeps: it is refused, and the first still can be."""
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=200, opening=8))
    running = await admission.admit("h", "")
    assert await admission.need(running, 100 * MiB)
    first, second = await admission.admit("h", ""), await admission.admit("h", "")
    assert await admission.need(first, 30 * MiB)
    assert await admission.need(second, 30 * MiB)
    held: dict[str, bool] = {}

    async def grow(name: str, lease: MemoryLease) -> None:
        held[name] = await admission.need(lease, 90 * MiB, refusable=True)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(grow, "first", first)
        await trio.testing.wait_all_tasks_blocked()
        nursery.start_soon(grow, "second", second)
        await trio.testing.wait_all_tasks_blocked()
        # Missing 60 + 60, from 40 free and the 100 the running clone holds: both keep.
        assert held == {}
        assert (first.memory, second.memory) == (30, 30)
        admission.semaphore.size = 150  # the controller shrinks it: 0 free
        admission.changed()
        await trio.testing.wait_all_tasks_blocked()
        assert held == {"second": False}  # 120 missing, 100 to come: refused
        assert second.memory == 30  # what it held, until it asks again
        admission.release(second)
        admission.release(running)
    assert held == {"second": False, "first": True}
    assert first.memory == 90


async def test_a_host_whose_pack_went_past_its_records_asks_bounds_first_but_probes() -> None:
    """A first pass that went past its records marks its host dense (issue 46): the
    next clones' first questions are refused at once, so that they ask for their bound
    first rather than do a part of their pass for nothing, but for one in four, which
    asks for its records again; one that needs no more clears the host."""
    admission = MemoryAdmission(MemoryEstimates(initial=1024, ceiling=1000, opening=8))

    async def first_pass(host: str, *, dense: bool) -> list[bool]:
        lease = await admission.admit(host, "")
        answers = [await admission.need(lease, 26 * MiB, refusable=True)]
        if answers[0] and dense:
            answers.append(await admission.need(lease, 135 * MiB, 50 * MiB, refusable=True))
        elif not answers[0]:
            answers.append(await admission.need(lease, 135 * MiB, 50 * MiB))
        answers.append(await admission.need(lease, 125 * MiB if dense else 22 * MiB))
        admission.release(lease)
        return answers

    assert await first_pass("h", dense=True) == [True, True, True]  # nothing known yet
    assert await first_pass("other", dense=False) == [True, True]
    told = [await first_pass("h", dense=True) for _ in range(4)]
    assert told == [[False, True, True]] * 3 + [[True, True, True]]  # the 4th: a probe
    assert await first_pass("other", dense=False) == [True, True]  # another host
    assert [await first_pass("h", dense=False) for _ in range(4)] == [
        [False, True, True],
        [False, True, True],
        [False, True, True],
        [True, True],  # the probe needed no more: h is not dense now
    ]
    assert await first_pass("h", dense=False) == [True, True]

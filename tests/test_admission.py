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

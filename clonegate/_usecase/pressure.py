"""A controller that resizes a memory gate by memory pressure (ADR 0014)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import trio

from .._domain.memory import MemoryReading, MemorySensor
from .._domain.semaphore import WeightedSemaphore

__all__ = ["BudgetDecision", "PressureController"]

MiB = 1 << 20


@dataclass(frozen=True, slots=True)
class BudgetDecision:
    """The controller resized the gate: ``"shrink"`` or ``"grow"``, from ``previous`` to
    ``size`` MiB, and why, in words with the figures."""

    action: str
    previous: int
    size: int
    reason: str


class PressureController:
    """Additive increase, multiplicative decrease of a :class:`WeightedSemaphore` whose
    tokens are MiB, driven by memory readings.

    Every ``interval`` seconds it reads the sensor. Under pressure (some task stalled
    on memory at least ``high_pressure`` of the time, or less than ``reserve`` of the
    limit available) the size shrinks to ``decrease`` times itself; when calm (stalls
    at most ``low_pressure`` and at least ``headroom`` of the limit available) it
    grows by ``step`` MiB. Anything in between holds. After a change it waits
    ``cooldown`` readings before the next one, so that the clones admitted (or not)
    show in the readings first: a clone's memory grows over seconds.

    Bounds: never above ``budget``; never below ``floor()`` (the heaviest clone waiting
    or running, so one clone can always run: below it, the next reading raises it,
    whatever it says). Shrinking takes nothing back from
    running clones; it only stops admitting new ones.

    On readings that do not depend on the size, the size moves monotonically to one
    bound and stays. When its own admissions cause the pressure, it settles into a
    cycle between ``decrease`` times the size that caused pressure and that size plus
    one ``step``.
    """

    def __init__(
        self,
        semaphore: WeightedSemaphore,
        budget: int,
        sensor: MemorySensor,
        floor: Callable[[], int],
        *,
        interval: float = 1.0,
        high_pressure: float = 0.10,
        low_pressure: float = 0.01,
        reserve: float = 0.05,
        headroom: float = 0.15,
        decrease: float = 0.75,
        step: int | None = None,
        cooldown: int = 3,
        on_decision: Callable[[BudgetDecision], None] | None = None,
    ) -> None:
        if not 0.0 < decrease < 1.0 or budget < 1 or interval <= 0:
            raise ValueError("decrease must be in (0, 1), budget >= 1 and interval > 0")
        self.semaphore = semaphore
        self.budget = budget
        self._sensor = sensor
        self._floor = floor
        self._interval = interval
        self._high, self._low = high_pressure, low_pressure
        self._reserve, self._headroom = reserve, headroom
        self._decrease = decrease
        self.step = step if step is not None else max(1, budget // 8)
        self._cooldown = cooldown
        self._quiet = 0  # readings to wait before the next change
        self._on_decision = on_decision
        self.last_reading: MemoryReading | None = None

    @classmethod
    def of_budget(
        cls,
        memory: WeightedSemaphore | None,
        sensor: MemorySensor | None,
        floor: Callable[[], int],
        on_decision: Callable[[BudgetDecision], None],
    ) -> PressureController | None:
        """The controller of a use case's memory budget (``memory``, in MiB), for the use
        case's life: its ceiling stays the budget, whatever a run shrank. None without
        a budget."""
        if memory is None or sensor is None:
            return None
        return cls(memory, memory.size, sensor, floor, on_decision=on_decision)

    async def run(self) -> None:
        """Read and decide every ``interval`` seconds, until cancelled."""
        while True:
            await trio.sleep(self._interval)
            self.observe(self._sensor.read())

    def observe(self, reading: MemoryReading) -> BudgetDecision | None:
        """Apply one reading: resize the semaphore if the rules say so. Not a checkpoint."""
        self.last_reading = reading
        if self._quiet > 0:
            self._quiet -= 1
            return None
        size = self.semaphore.size
        floor = max(1, min(self.budget, self._floor()))
        stalled = reading.pressure if reading.pressure is not None else 0.0
        share = reading.available / reading.limit if reading.limit > 0 else 1.0
        if stalled >= self._high or share < self._reserve:
            new = max(floor, int(size * self._decrease))
            action = "shrink"
        elif stalled <= self._low and share >= self._headroom and size < self.budget:
            new = max(floor, min(self.budget, size + self.step))
            action = "grow"
        elif size < floor:  # in between, yet a clone waits for more than the size
            new, action = floor, "shrink"  # said below as what it is
        else:
            return None
        if new == size:
            return None
        self.semaphore.size = new
        self._quiet = self._cooldown
        available = reading.available // MiB
        reason = (
            f"memory stalls {stalled:.0%} of the time, {available} MiB available "
            f"of {reading.limit // MiB} MiB"
        )
        if action == "shrink" and new > size:
            # Under pressure (or in between), yet raised: the heaviest waiting clone
            # must fit, or it would wait forever. Said as what it is.
            action = "grow"
            reason += f"; raised to {new} MiB, what the heaviest waiting clone needs"
        decision = BudgetDecision(action, size, new, reason)
        if self._on_decision is not None:
            self._on_decision(decision)
        return decision

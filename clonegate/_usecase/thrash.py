"""A run that thrashes says so (issue 46, ADR 0014): memory under sustained pressure
while no running clone makes progress, said once, with the figures, and counted."""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import trio

from .._domain.events import EventKind
from .._domain.memory import MemoryReading, MemorySensor
from .._domain.timeline import RunEventKind
from .gate import CloneGate
from .pressure import PressureController
from .run_log import RunLog

__all__ = ["PROGRESS", "Thrash", "ThrashLog", "ThrashWatch", "said", "watch_memory"]

logger = logging.getLogger("clonegate")
MiB = 1 << 20

# What shows that a clone moved: bytes received, a clone or an analysis finishing (or
# failing, then waiting to be tried again), a clone reaching its next phase (it asks
# the budget for that phase's memory). A clone that only stalls emits none of them.
PROGRESS = frozenset(
    {EventKind.RECEIVED, EventKind.CLONED, EventKind.DONE, EventKind.RETRY, EventKind.MEMORY}
)


@dataclass(frozen=True, slots=True)
class Thrash:
    """Memory pressure for ``seconds`` while ``running`` clones made no progress."""

    seconds: float
    stalled: float | None  # the mean share of time some task stalled on memory (PSI)
    failures: int | None  # times the cgroup hit its limit over those seconds
    available: int  # bytes, at the last reading
    limit: int  # bytes
    running: int
    budget: tuple[int, int] | None  # the memory gate's size and budget (MiB), if any

    def figures(self) -> str:
        """What was measured, in words: what a run event of the thrash keeps."""
        signs = []
        if self.stalled is not None:
            signs.append(f"some task stalled on memory {self.stalled:.0%} of the time")
        if self.failures:
            signs.append(f"the cgroup hit its memory limit {self.failures} times")
        return (
            f"for {self.seconds:.0f} s {', '.join(signs)}, "
            f"{self.available // MiB} MiB available of {self.limit // MiB} MiB, and none "
            f"of the {self.running} running clones made progress"
        )

    def message(self) -> str:
        """The warning, figures first, then what the run does or the user can."""
        text = f"memory thrashes: {self.figures()}"
        if self.budget is None:
            return (
                text + "; the clone limit (-j) does not fit this memory: "
                "try --memory-budget auto (with_memory_budget('auto'))"
            )
        size, budget = self.budget
        # The controller shrinks on stalls of 10% and on little memory available, so on
        # any stall this watch counts; a rising failure count alone does not move it.
        return text + f"; the memory budget admits {size} of {budget} MiB now"


class ThrashWatch:
    """Reads each memory reading for thrash: ``readings`` in a row while clones ran and
    none made progress (``progress()``, a count of :data:`PROGRESS` events, did not
    move), in which memory was under pressure: some task stalled on memory at least
    ``stall`` of the time on average (PSI), or, where the kernel gives no PSI, the
    cgroup's failure count rose at every reading. Said to ``on_thrash`` the first
    time only; :attr:`episodes` counts every stretch without progress that thrashed
    (a stretch ends with progress or with no clone running), each also given to
    ``on_episode`` (the run's record: a stored run event).

    Measured in a cgroup of 1.3x one delta-heavy clone, ``-j 4`` thrashing: stalls of
    21-48% at each reading (the machine's PSI: a v1 cgroup has none of its own), 5-17%
    while the same clones progressed; hence an average over the readings, not each
    reading against the threshold. The failure count alone is a weak sign: a cgroup
    whose page cache fills its limit fails charges all the time, and reclaims at no
    cost; a clone's long delta walk emits no progress. So it decides only without PSI.
    """

    # A run's watch (of_run): a reading a second, 15 in a row (see the ADR's figures).
    INTERVAL = 1.0
    READINGS = 15

    def __init__(
        self,
        running: Callable[[], int],
        progress: Callable[[], int],
        on_thrash: Callable[[Thrash], None],
        *,
        budget: Callable[[], tuple[int, int]] | None = None,
        on_episode: Callable[[Thrash], None] | None = None,
        interval: float = 1.0,
        stall: float = 0.2,
        readings: int = 15,
    ) -> None:
        if readings < 1 or interval <= 0:
            raise ValueError("readings must be >= 1 and interval > 0")
        self.interval = interval
        self._running, self._progress, self._on_thrash = running, progress, on_thrash
        self._budget, self._on_episode = budget, on_episode
        self._stall, self._readings = stall, readings
        self._moved = progress()  # the progress count at the last reading
        self._failures: int | None = None  # the counter at the last reading
        # (stalled, failures risen) of each reading of this stretch without progress
        self._window: deque[tuple[float | None, int]] = deque(maxlen=readings)
        self._counted = False  # this stretch thrashed, and was counted
        self.episodes = 0
        self.said: Thrash | None = None

    @classmethod
    def of_run(
        cls,
        gate: CloneGate,
        controller: PressureController | None,
        progress: Callable[[], int],
        on_episode: Callable[[Thrash], None] | None = None,
        on_thrash: Callable[[Thrash], None] | None = None,
    ) -> ThrashWatch:
        """The watch of one run of a use case: its gate's running clones, its budget."""
        budget = None
        if controller is not None:
            budget = lambda: (controller.semaphore.size, controller.budget)  # noqa: E731
        running = lambda: len(gate.statistics().active)  # noqa: E731
        return cls(
            running,
            progress,
            on_thrash or said,
            budget=budget,
            on_episode=on_episode,
            interval=cls.INTERVAL,
            readings=cls.READINGS,
        )

    def observe(self, reading: MemoryReading) -> Thrash | None:
        """One reading; the thrash it completes, if any. Not a checkpoint."""
        failed = 0
        if reading.failures is not None and self._failures is not None:
            failed = max(0, reading.failures - self._failures)
        self._failures = reading.failures
        moved = self._progress()
        still, self._moved = moved == self._moved, moved
        if not still or self._running() == 0:
            self._window.clear()
            self._counted = False
            return None
        self._window.append((reading.pressure, failed))
        if self._counted or len(self._window) < self._readings:
            return None
        stalls = [s for s, _ in self._window if s is not None]
        stalled = sum(stalls) / len(stalls) if stalls else None
        if stalled is not None and stalled < self._stall:
            return None
        if stalled is None and not all(f > 0 for _, f in self._window):
            return None
        self._counted = True
        self.episodes += 1
        thrash = Thrash(
            seconds=self._readings * self.interval,
            stalled=stalled,
            failures=sum(f for _, f in self._window) if reading.failures is not None else None,
            available=reading.available,
            limit=reading.limit,
            running=self._running(),
            budget=self._budget() if self._budget is not None else None,
        )
        if self.said is None:
            self.said = thrash
            self._on_thrash(thrash)
        if self._on_episode is not None:
            self._on_episode(thrash)
        return thrash


class ThrashLog:
    """Every thrash stretch of a use case's life (all its runs): counted, and noted in
    the runs in flight as a ``memory_thrash`` event, which the store keeps with the run
    (ADR 0014, ADR 0020). Sync, never a checkpoint: a watch calls it on a reading."""

    def __init__(self, events: RunLog) -> None:
        self._events = events
        self.count = 0

    def __call__(self, thrash: Thrash) -> None:
        self.count += 1
        self._events.note(RunEventKind.MEMORY_THRASH, thrash.running, thrash.figures())


async def watch_memory(
    sensor: MemorySensor, watch: ThrashWatch, controller: PressureController | None
) -> None:
    """Read ``sensor`` every ``watch.interval`` seconds; give each reading to the
    budget's controller, if any, and to ``watch``: one reading for both, since a
    pressure figure is a rate since the previous read. Until cancelled. A sensor that
    fails ends the readings, said once: the run goes on without them."""
    while True:
        await trio.sleep(watch.interval)
        try:
            reading = sensor.read()
        except (OSError, ValueError) as exc:
            logger.warning("memory readings stopped (no budget control, no thrash watch): %s", exc)
            return
        if controller is not None:
            controller.observe(reading)
        watch.observe(reading)


def said(thrash: Thrash) -> None:
    """A thrash, as a warning (the command line shows warnings on stderr, escaped)."""
    logger.warning("%s", thrash.message())

"""How much memory a clone is expected to need, learned from the clones that ran (ADR 0014)."""

from __future__ import annotations

import logging
import math
from collections import deque

from .._domain.memory import MemorySensor
from .options import UseCaseConfig

__all__ = ["MemoryEstimates", "auto_budget"]

logger = logging.getLogger("clonegate")

MiB = 1 << 20
# "auto": all but what runs outside the budget, at least this share of what is
# available when the use case is made and at most that one. Outside: the parent and
# the workers' zygote (52 MiB PSS at most, measured on bench_memory's four batches),
# and each idle analysis worker (6-13 MiB kept after its jobs); analysis jobs hold
# their share inside the budget (analysis_memory.py). Issue 46, ADR 0014: a quarter
# of a large cgroup is far more than that, and kept two clones that fitted one at a
# time.
AUTO_SHARE, AUTO_MOST = 0.75, 0.92
AUTO_OUTSIDE = 52 * MiB
AUTO_OUTSIDE_PER_ANALYSIS = 14 * MiB


class MemoryEstimates:
    """Expected peak memory of a clone, in MiB, by host.

    An estimate is an upper quantile of the peaks seen (the clone's own memory, above
    what its worker shares with the zygote) times a safety margin. A host with peaks
    of its own uses those; a host not seen yet uses every host's; before any clone
    has finished, ``initial`` is used: the clone's hard memory cap, the one figure
    known to be enough (a clone cannot take more; it fails ``too_large`` first).
    Unless the VCS forecasts what each clone needs before it needs it
    (its ``opening_memory`` is not None): then always ``opening``, what a clone uses
    before it asks (or its host's floor, if higher), and the gate reserves the rest
    when it asks; what was learned corrects those forecasts (:meth:`corrected`).
    Estimates never exceed ``ceiling`` (the budget), so that every clone can run.

    Without forecasts, a repository whose clone was measured in an earlier run
    (``known``, from a result store) uses that peak instead, with the margin: its own
    figure says more than its host's, and a batch that starts from stored peaks does
    not start one clone at a time. The host's floor still applies, and the cap still
    bounds it.

    Only the last ``window`` peaks of each host count: a batch moves on from one kind
    of repository to another. A clone that ran out of memory (:meth:`exceeded`) sets
    a floor for its host for the rest of the run: the quantile would otherwise treat
    it as an outlier and send the next large repository of that host in too small.
    """

    def __init__(
        self,
        initial: int,
        ceiling: int,
        *,
        quantile: float = 0.9,
        margin: float = 1.25,
        window: int = 32,
        opening: int | None = None,
        origin: str = "",
    ) -> None:
        if not 0.0 < quantile <= 1.0 or margin < 1.0 or window < 1:
            raise ValueError("quantile must be in (0, 1], margin >= 1 and window >= 1")
        self.initial = max(1, min(initial, ceiling))
        # With a VCS that forecasts (an ``opening_memory``), what a clone reserves before
        # anything was learned: the rest it asks for when it knows.
        self.opening = max(1, min(opening, self.initial)) if opening is not None else None
        self.ceiling = ceiling
        self.origin = origin  # how the budget was chosen, in words ("" when given)
        self._quantile = quantile
        self._margin = margin
        self._by_host: dict[str, deque[int]] = {}
        self._all: deque[int] = deque(maxlen=window)
        self._floors: dict[str, int] = {}
        self._window = window
        # peak / forecast of this run's clones, by host and shape (see corrected()).
        self._ratios: dict[tuple[str, int, bool], deque[float]] = {}

    @classmethod
    def for_budget(
        cls,
        config: UseCaseConfig,
        sensor: MemorySensor | None,
        cap: int,
        opening: int | None = None,
        analyses: int = 1,
    ) -> MemoryEstimates | None:
        """The estimates for ``config``'s memory budget; ``None`` without one. ``cap``:
        the most one clone may use (its VCS's); ``opening``: bytes a clone reserves
        first, if its VCS forecasts the rest; ``analyses``: analysis processes."""
        budget = config.memory_budget
        if budget is None:
            return None
        origin = ""
        if budget == "auto":
            if sensor is None:
                raise TypeError("a memory budget of 'auto' needs a memory sensor")
            try:
                available = sensor.read().available
            except (OSError, ValueError) as exc:
                if config.memory_budget_required:
                    raise ValueError(
                        "a memory budget of 'auto' needs this machine's memory, which "
                        f"cannot be read ({exc}); give a size, or no budget"
                    ) from exc
                logger.warning(
                    "no memory budget: this machine's memory cannot be read (%s); "
                    "the clone limit alone limits clones",
                    exc,
                )
                return None
            budget = auto_budget(available, analyses)
            origin = f"auto: {budget / available:.0%} of the {available // MiB} MiB available"
        # What auto chose is said at -v, and kept with each run (ADR 0020).
        logger.info("memory budget: %d MiB%s", budget // MiB, f" ({origin})" if origin else "")
        # The cap is the one figure known to be enough for a clone (ADR 0014).
        first = -(-opening // MiB) if opening is not None else None
        return cls(cap // MiB, budget // MiB, opening=first, origin=origin)

    def estimate(self, host: str | None = None, known: int | None = None) -> int:
        """MiB to reserve for the next clone from ``host`` (``None``: a host not seen yet)
        whose clone used ``known`` bytes when last measured (``None``: never); at least
        1, at most the ceiling."""
        peaks = (self._by_host.get(host) if host is not None else None) or self._all
        floor = self._floors.get(host, 0) if host is not None else 0
        if self.opening is not None:
            # The VCS asks for the rest before it needs it (corrected by what this run
            # and the store measured): a whole peak reserved here would be held through
            # the download, while the clone uses its opening figure, and keep the next
            # clone out (issue 46: two clones that fit ran one at a time).
            return max(self.opening, min(self.ceiling, floor))
        if known is not None:
            # Never above the cap (``initial``): a clone cannot use more than that.
            wanted = max(floor, min(self.initial, math.ceil(known / MiB * self._margin)))
            return max(1, min(self.ceiling, wanted))
        if not peaks:
            return max(self.initial, min(self.ceiling, floor))
        ordered = sorted(peaks)
        # The nearest-rank quantile: with few samples it is the largest, as it should be.
        rank = max(0, math.ceil(self._quantile * len(ordered)) - 1)
        wanted = max(floor, math.ceil(ordered[rank] * self._margin))
        return max(1, min(self.ceiling, wanted))

    def record(self, host: str, peak_bytes: int) -> None:
        """A clone from ``host`` finished (or failed) having used ``peak_bytes`` at most."""
        peak = max(1, math.ceil(peak_bytes / MiB))
        self._by_host.setdefault(host, deque(maxlen=self._window)).append(peak)
        self._all.append(peak)

    def exceeded(self, host: str, peak_bytes: int) -> None:
        """A clone from ``host`` failed for memory after using ``peak_bytes``: later clones
        of that host reserve at least that much, with the margin."""
        self.record(host, peak_bytes)
        floor = math.ceil(peak_bytes / MiB * self._margin)
        self._floors[host] = max(self._floors.get(host, 0), floor)

    def measured(
        self, host: str, forecast: int, peak_bytes: int, *, first: bool, exceeded: bool
    ) -> None:
        """A clone from ``host`` forecast ``forecast`` bytes (``first``: its first
        forecast) and used ``peak_bytes``: the ratio corrects the next forecasts of its
        host and shape. One that ran out of memory (``exceeded``) drops every
        correction of its host."""
        if exceeded:
            for shape in [shape for shape in self._ratios if shape[0] == host]:
                del self._ratios[shape]
            return
        shape = (host, forecast.bit_length(), first)
        ratios = self._ratios.setdefault(shape, deque(maxlen=self._window))
        ratios.append(peak_bytes / max(1, forecast))

    def corrected(self, host: str, forecast: int, *, first: bool, known: int | None = None) -> int:
        """``forecast`` (bytes a VCS says a clone will need) as the clones of this run
        from ``host`` with forecasts of the same shape measured it: the same power of
        two, and the clone's first forecast or a later one (a bound made before
        anything is counted is not a figure made after, a 500 MiB data file's not a
        30 MiB history's). The largest of their peak / forecast ratios, times the
        margin, lowers it (never below what they used) or, if a clone used more than
        it forecast, raises it; unchanged without such a clone.

        A first forecast is a bound made before anything was counted: the bytes the
        same repository's clone used in an earlier run (``known``, from a store),
        with the margin, bound it too, as they bound its estimate."""
        ratios = self._ratios.get((host, forecast.bit_length(), first))
        if ratios:
            worst = max(ratios)
            factor = worst * self._margin if worst > 1.0 else min(1.0, worst * self._margin)
            forecast = math.ceil(forecast * factor)
        if first and known is not None:
            forecast = min(forecast, math.ceil(known * self._margin))
        return forecast


def auto_budget(available: int, analyses: int = 1) -> int:
    """Bytes of ``available`` that ``auto`` gives the budget: all but what runs outside
    it (the parent, the zygote, ``analyses`` idle analysis workers), at least
    ``AUTO_SHARE`` of it and at most ``AUTO_MOST``."""
    outside = AUTO_OUTSIDE + analyses * AUTO_OUTSIDE_PER_ANALYSIS
    rest = min(int(available * AUTO_MOST), available - outside)
    return max(int(available * AUTO_SHARE), rest)

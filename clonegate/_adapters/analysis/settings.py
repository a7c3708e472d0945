"""``AnalysisSettings``: how :class:`TestInventoryAnalyzer` works, each default here once."""

from __future__ import annotations

from dataclasses import dataclass

from ..._domain.checks import positive_int
from ..._domain.inventory import ANALYSIS_MEMORY_LIMIT
from ..._domain.store import AnalysisCache
from ..settings import setting

__all__ = ["AnalysisSettings"]


@dataclass(frozen=True, slots=True)
class AnalysisSettings:
    """The settings of :class:`clonegate.TestInventoryAnalyzer` (ADR 0017).

    ``processes``: at most this many analysis processes at once, for all analyses
    together; None, one per CPU (ADR 0008). ``cache``: each candidate file is looked
    up there by its content before it is parsed, and what is parsed is kept (ADR
    0016); with ``refresh_cache`` it is written and never read (``--force``).
    """

    processes: int | None = setting(None, "Analysis processes at once [default: one per CPU].")
    max_memory: int = setting(
        ANALYSIS_MEMORY_LIMIT, "Memory one analysis process may use, on top of its start."
    )
    cache: AnalysisCache | None = setting(None, "Where parsed files' outcomes are kept.")
    refresh_cache: bool = setting(False, "Parse every file again; only add to the cache.")

    def __post_init__(self) -> None:
        if self.processes is not None:
            positive_int("processes", self.processes)
        positive_int("max_memory", self.max_memory)

"""The port through which the composition root hands the use case its default adapters."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Protocol

from .._domain.inventory import Analyzer
from .._domain.memory import MemorySensor
from .._domain.vcs import VCS
from .options import UseCaseConfig

__all__ = ["Wiring"]


class Wiring(Protocol):
    """What a use case built without adapters runs; provided by the composition root."""

    def vcs(self, config: UseCaseConfig) -> VCS:
        """The VCS for ``config`` (its depth, work directory, whether clones are kept)."""
        ...

    def analyzer(self, config: UseCaseConfig) -> Analyzer:
        """The analyzer for ``config``."""
        ...

    def batch_scope(self) -> AbstractAsyncContextManager[object]:
        """Entered around a whole batch: the adapters' shared resources (worker processes)."""
        ...

    def memory_sensor(self) -> MemorySensor:
        """What the memory budget reads (its cgroup, ``/proc``)."""
        ...

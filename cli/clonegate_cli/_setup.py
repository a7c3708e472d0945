"""What a command runs the library with: the use case's options and the adapters'
settings, opened in one place by the library's composition (ADR 0017)."""

from __future__ import annotations

import dataclasses
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field

from clonegate import AnalysisSettings, AnalyzeUseCase, CloneSettings, Option, open_analyzer

__all__ = ["Setup"]


@dataclass(frozen=True, slots=True)
class Setup:
    """The options of the use case, and the settings of its clone and analysis adapters."""

    options: tuple[Option, ...] = ()
    clone: CloneSettings = field(default_factory=CloneSettings)
    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)

    def adding(self, *options: Option) -> Setup:
        """These settings, with ``options`` after the ones given so far."""
        return dataclasses.replace(self, options=(*self.options, *options))

    def open(self, *options: Option) -> AbstractAsyncContextManager[AnalyzeUseCase]:
        """:func:`clonegate.open_analyzer` for these settings, with ``options`` too."""
        return open_analyzer(*self.options, *options, clone=self.clone, analysis=self.analysis)

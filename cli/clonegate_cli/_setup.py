"""What a command runs the library with: the use case's options and the adapters'
settings, opened in one place by the library's composition (ADR 0017)."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import clonegate
from clonegate import AnalysisSettings, CloneSettings, Option
from clonegate.store import StoreSettings

if TYPE_CHECKING:
    from clonegate import AnalyzeUseCase

__all__ = ["Setup", "SetupError", "default_of", "help_of", "size_text"]


class SetupError(Exception):
    """The library refused these settings when it made the use case (a budget of
    ``auto`` on a machine whose memory cannot be read): a usage error, not a crash."""


@dataclass(frozen=True, slots=True)
class Setup:
    """The options of the use case, and the settings of its adapters: clone, analysis,
    and the result store (None without ``--db``)."""

    options: tuple[Option, ...] = ()
    clone: CloneSettings = field(default_factory=CloneSettings)
    analysis: AnalysisSettings = field(default_factory=AnalysisSettings)
    store: StoreSettings | None = None  # --db

    def adding(self, *options: Option) -> Setup:
        """These settings, with ``options`` after the ones given so far."""
        return dataclasses.replace(self, options=(*self.options, *options))

    @asynccontextmanager
    async def open(self, *options: Option) -> AsyncIterator[AnalyzeUseCase]:
        """:func:`clonegate.open_analyzer` for these settings, with ``options`` too; a
        ValueError before the use case is made is a :class:`SetupError`.

        Looked up when a command runs, not when this module is imported: the
        composition imports the adapters (dulwich's, the analyzer's, 40 ms), which the
        command line loads after it has started its workers (ADR 0003)."""
        made = False
        try:
            async with clonegate.open_analyzer(
                *self.options, *options, clone=self.clone, analysis=self.analysis, store=self.store
            ) as use_case:
                made = True
                yield use_case
        except BaseException as exc:
            refused = None if made else _value_error(exc)
            if refused is None:
                raise
            raise SetupError(str(refused)) from exc


def _value_error(exc: BaseException) -> ValueError | None:
    """``exc`` if a ValueError, or the first one in its group (a nursery's)."""
    if isinstance(exc, ValueError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        return next(filter(None, map(_value_error, exc.exceptions)), None)
    return None


def _field(settings: type, name: str) -> dataclasses.Field[Any]:
    (found,) = (f for f in dataclasses.fields(settings) if f.name == name)
    return found


def help_of(settings: type, name: str) -> str:
    """The help a library settings type gives its field ``name`` (in its metadata):
    what the option that sets it shows, written once, there (ADR 0017)."""
    return str(_field(settings, name).metadata["help"])


def default_of(settings: type, name: str) -> Any:
    """The default of field ``name`` of a library settings type."""
    return _field(settings, name).default


def size_text(size: int) -> str:
    """``size`` as the command line writes it: 2G, 512M (a whole number of its unit)."""
    for unit, scale in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size % scale == 0:
            return f"{size // scale}{unit}"
    return f"{size}B"

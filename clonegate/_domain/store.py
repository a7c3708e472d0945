"""The ports of a result store: reports kept across runs, and a content-addressed
analysis cache (ADR 0016).

The use case needs two things from a store: to keep every report of a run, and to
find the last successful result for a repository, so that an incremental run can
reuse it when the remote's HEAD has not moved. The analyzer needs one: per-file
results looked up by a key made from the file's content, before reading or parsing.
Every method is async and a checkpoint; none blocks the event loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .listed import Listed
from .reports import RepositoryReport
from .timeline import RunEvent

__all__ = [
    "AnalysisCache",
    "DamagedRow",
    "DamagedRowError",
    "ReportStore",
    "StoreError",
    "StoredResult",
]


class StoreError(Exception):
    """The store could not be opened, read or written (a read-only file, a full disk,
    a newer schema). Reports written before it stay written."""


@dataclass(frozen=True, slots=True)
class DamagedRow:
    """A stored row that cannot be read back (the file is anyone's to edit): which
    table and row, and what is wrong with it, in words."""

    table: str
    row: int | None  # None: damage below the rows (SQLite's own check of the file)
    problem: str

    def __str__(self) -> str:
        where = self.table if self.row is None else f"{self.table} row {self.row}"
        return f"{where}: {self.problem}"


class DamagedRowError(StoreError):
    """One row of the store cannot be read; the rest of the store can. An incremental
    run treats the row as no stored result (ADR 0016)."""

    def __init__(self, damage: DamagedRow) -> None:
        super().__init__(str(damage))
        self.damage = damage


@dataclass(frozen=True, slots=True)
class StoredResult:
    """The last successful result stored for one repository: which run, which commit,
    which analyzer version made it."""

    run_id: int
    commit: str
    analyzer_version: str


class ReportStore(Protocol):
    """Where a run's reports are kept, one per input line, with the run itself; and what
    a run asks of earlier ones: a result to reuse, a clone's memory (ADR 0016, ADR
    0014). Those two were optional protocols until ADR 0017; a store with nothing to
    say answers None."""

    async def begin_run(self, options: Mapping[str, object]) -> int:
        """Record a new run (its start and the options that shape its results); its id."""
        ...

    async def save(self, run_id: int, key: str, report: RepositoryReport) -> None:
        """Keep ``report`` (``key``: the repository's normalized URL, ``RepoURL.key``;
        empty for a line that is no URL). Returns once the report is durable."""
        ...

    async def finish_run(self, run_id: int) -> None:
        """Record the run's end and its summary, counted from the reports saved."""
        ...

    async def save_events(self, run_id: int, events: Sequence[RunEvent]) -> None:
        """Keep ``events`` of run ``run_id`` after those kept before: its clone limit and
        memory budget when it began, then each change (ADR 0020). A store that does
        not draw runs may drop them."""
        ...

    async def reusable(
        self, key: str, commit: str, analyzer_version: str
    ) -> RepositoryReport | None:
        """The newest successful, not reused, report kept for ``key``, inventory
        included, if it was made at ``commit`` by ``analyzer_version``; None otherwise.
        Raises :class:`DamagedRowError` if it cannot be read back: the use case then
        runs the repository again. The question an incremental run asks of each
        repository, in one read (SQLiteStore reads in a thread, and each hop there and
        back costs the parent ~0.15 ms of CPU)."""
        ...

    async def reusable_listed(
        self, key: str, listed: Listed, analyzer_version: str
    ) -> RepositoryReport | None:
        """The report :meth:`reusable` would give for ``key`` at the commit its newest
        success (reused or not) was at, if ``listed`` says what the listing said then:
        the same forge id and ``pushed_at`` (exactly) and, as its branch, the listing's
        default branch; None otherwise, or if the listing does not say those. The
        question an incremental run asks before it lists a remote's refs (ADR 0023):
        an answer here spares the server any connection. Raises
        :class:`DamagedRowError` as :meth:`reusable` does."""
        ...

    async def clone_memory(self, key: str, depth: int | None) -> int | None:
        """The most memory (bytes) the newest stored clone of ``key`` made at ``depth``
        (None: full history) used; None if no such clone was measured: where a memory
        budget starts from (ADR 0014). Asked only with a memory budget."""
        ...


class AnalysisCache(Protocol):
    """Per-file analysis results by content key. Keys and values are the analyzer's
    own encoding; the cache only keeps, bounds and evicts them."""

    async def lookup(self, keys: Sequence[bytes]) -> dict[bytes, bytes]:
        """The values of those ``keys`` that are cached."""
        ...

    async def keep(self, entries: Mapping[bytes, bytes]) -> None:
        """Cache ``entries``; a key already cached takes the new value (the analyzer
        keeps only what the cache could not answer, a damaged value included)."""
        ...

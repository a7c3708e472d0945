"""Which repositories a batch has already seen, so that a repeated one is cloned once."""

from __future__ import annotations

from .._domain.listed import Listed
from .._domain.reports import ReportError, RepositoryStatus

__all__ = ["DuplicateIndex", "Outcome", "Waiting", "outcome_of"]

# What a first line ended with, which its duplicates repeat: its status and its error.
Outcome = tuple[RepositoryStatus, ReportError | None]
# One shared outcome per status without an error, the common case: an entry per
# distinct repository then costs no tuple of its own (0.5 MiB at 10,000 URLs).
_WITHOUT_ERROR = {status: (status, None) for status in RepositoryStatus}
# A later line waiting for its first line's outcome: its index, its shown URL, and its
# listing (None for a line given as a URL).
Waiting = tuple[int, str, Listed | None]


def outcome_of(status: RepositoryStatus, error: ReportError | None) -> Outcome:
    return _WITHOUT_ERROR[status] if error is None else (status, error)


class DuplicateIndex:
    """The first line of each distinct repository of a batch, and what became of it.

    Keys are each line's :attr:`Repository.digest` (empty for a line that is no URL,
    never a duplicate). Memory stays flat in the number of URLs: one 16-byte key and
    one small entry per distinct repository, never a report (ADR 0006). Later lines
    that name a repository whose first line is still in flight wait here, holding no
    task and no in-flight permit, so a thousand copies of one slow repository cannot
    starve the others.
    """

    def __init__(self) -> None:
        # key -> (the first line's index, its outcome; None while it is in flight)
        self._first: dict[bytes, tuple[int, Outcome | None]] = {}
        # the first line's index -> the later lines waiting for it: (index, shown URL,
        # the line's listing if it came from one)
        self._waiting: dict[int, list[Waiting]] = {}

    def first_of(self, key: bytes) -> tuple[int, Outcome | None] | None:
        """The first line naming ``key`` and its outcome (None while in flight), if any."""
        return self._first.get(key) if key else None

    def start(self, key: bytes, index: int) -> None:
        """Line ``index`` is the first to name ``key``; it is now in flight."""
        if key:
            self._first[key] = (index, None)
            self._waiting[index] = []

    def wait_for(self, first: int, index: int, shown: str, listed: Listed | None = None) -> None:
        """Line ``index`` names the repository of in-flight line ``first``."""
        self._waiting[first].append((index, shown, listed))

    def finish(self, key: bytes, index: int, outcome: Outcome) -> list[Waiting]:
        """First line ``index`` ended with ``outcome``: the lines that were waiting for it."""
        if not key:
            return []
        self._first[key] = (index, outcome)
        return self._waiting.pop(index)

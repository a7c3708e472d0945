"""The question an incremental run asks of a listed repository (ADR 0023): is the stored
result still current by what the forge's listing says, so that its server need not be
asked at all?"""

from __future__ import annotations

import sqlite3

from ..._domain.listed import Listed
from ..._domain.reports import RepositoryReport
from ..._domain.timeline import microseconds
from .reading import LAST_RESULT, first_row, reusable

__all__ = ["reusable_listed"]


# A repository's newest success, its own or reused (the last result's query, reused
# rows included): the last time it was known to be at a commit, with what its listing
# said then (ADR 0023).
_LAST_SEEN = LAST_RESULT.replace(" AND reused = 0", "")
assert _LAST_SEEN != LAST_RESULT


def reusable_listed(
    db: sqlite3.Connection, key: str, listed: Listed, analyzer_version: str
) -> RepositoryReport | None:
    """The last result's report for ``key`` if ``listed`` says what the listing said
    when the repository was last known at its commit: the newest success of ``key``
    (reused or not) has the same forge id, the same ``pushed_at`` (to the microsecond,
    not later: a time that moved back is a change too) and ``listed``'s default branch
    as its branch, by ``analyzer_version``, and that commit's result is still the last
    one. None otherwise, and when the listing does not say when it was pushed or its
    default branch. Raises :class:`DamagedRowError` if the rows cannot be read."""
    if listed.pushed_at is None or listed.default_branch is None:
        return None
    row = first_row(db, "forge_id, pushed_at, branch, commit_id, analyzer_version", _LAST_SEEN, key)
    said = (listed.forge_id, microseconds(listed.pushed_at), listed.default_branch)
    if row is None or tuple(row[:3]) != said or row[4] != analyzer_version:
        return None
    return reusable(db, key, row[3], analyzer_version)

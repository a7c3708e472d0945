"""One GitLab project of the list endpoints as a :class:`Listed` (ADR 0023).

- ``path_with_namespace`` is the full name (``group/sub/project``), ``http_url_to_repo``
  the clone URL, ``last_activity_at`` the time: GitLab's last *activity* (a push, but
  also an issue or a merge request), not a push; the ADR says what that means for
  ``--pushed-after``.
- A fork carries ``forked_from_project``, and only when the caller may read the
  project it came from: without the key the listing does not say (None), never
  "not a fork".
- ``mirror`` is sent by some editions only; ``statistics`` (the size) only when asked
  and allowed; GitLab's list gives no language: all three None when not sent.
"""

from __future__ import annotations

from typing import Any

from ..._domain.listed import Listed
from .items import Fields

__all__ = ["listed_of"]


def listed_of(item: Any) -> Listed:
    """``item`` as a record; ValueError (escaped words) when it does not hold."""
    got = Fields(item, "path_with_namespace")
    statistics = got.get("statistics")
    size = Fields(statistics, "").kib("repository_size") if statistics is not None else None
    return Listed(
        full_name=got.get("path_with_namespace"),
        clone_url=got.get("http_url_to_repo"),
        forge_id=got.number("id"),
        default_branch=got.get("default_branch"),
        archived=got.get("archived"),
        fork=True if got.get("forked_from_project") is not None else None,
        empty=got.get("empty_repo"),
        mirror=got.get("mirror"),
        size_kib=size,
        language=None,  # not in the list API (projects/:id/languages): never guessed
        topics=got.topics("topics"),
        stars=got.get("star_count"),
        pushed_at=got.time("last_activity_at"),
    )

"""Reports as JSON documents and back: what the CLI prints and what the cluster mode
passes between machines (ADR 0007, ADR 0015). One codec, so both say the same."""

from __future__ import annotations

import dataclasses
import enum
from datetime import datetime
from pathlib import Path
from typing import Any

from .inventory import ScanError
from .listed import Listed
from .reports import (
    AnalysisTotals,
    RefInfo,
    ReportError,
    RepositoryReport,
    RepositoryStatus,
    Timings,
)
from .retries import FailedAttempt
from .sources import Forge
from .timeline import Phase

__all__ = ["listed_from_json", "report_from_json", "to_json"]

# Left out of every document: each file, suite and test of the inventory. Its totals
# (``analysis``) are in every report; the library gives the whole inventory.
_DETAILS = frozenset({"inventory"})
# Left out when empty: a report of one attempt, and a summary of a batch that retried
# nothing, read as they did before retries (issue 43); a line that never started has
# no phases, a batch without a memory budget no budget (ADR 0020), a line given as a
# URL no listing (ADR 0023), a batch that never thrashed no count of it (issue 46).
_WHEN_ANY = frozenset(
    {"attempts", "retried", "retry_wait", "phases", "memory_budget", "listed", "memory_thrash"}
)


def to_json(value: Any) -> Any:
    """``value`` in JSON types, read from the report types themselves: a field added to
    a report is in the output with no edit here. Seconds are rounded to milliseconds."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: to_json(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.name not in _DETAILS and (f.name not in _WHEN_ANY or getattr(value, f.name))
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json(v) for v in value]
    return value


def report_from_json(document: dict[str, Any]) -> RepositoryReport:
    """The :class:`RepositoryReport` that :func:`to_json` wrote (without its inventory).

    Raises ``KeyError``, ``TypeError`` or ``ValueError`` for a document that is not one.
    """
    error, ref, analysis = document.get("error"), document.get("ref"), document.get("analysis")
    path = document.get("path")
    return RepositoryReport(
        url=str(document["url"]),
        index=int(document["index"]),
        status=RepositoryStatus(document["status"]),
        error=ReportError(**error) if error is not None else None,
        ref=RefInfo(ref["branch"], ref["commit"], datetime.fromisoformat(ref["committed_at"]))
        if ref is not None
        else None,
        timings=Timings(**document.get("timings", {})),
        analysis=AnalysisTotals(
            **{k: v for k, v in analysis.items() if k != "errors"},
            errors=tuple(ScanError(**e) for e in analysis.get("errors", ())),
        )
        if analysis is not None
        else None,
        duplicate_of=document.get("duplicate_of"),
        path=Path(path) if path is not None else None,
        redirected_to=document.get("redirected_to"),
        reused=bool(document.get("reused", False)),
        clone_memory=_optional_int(document.get("clone_memory")),
        attempts=tuple(FailedAttempt(**a) for a in document.get("attempts", ())),
        phases=tuple(_phase(p) for p in document.get("phases", ())),
        listed=listed_from_json(document["listed"]) if document.get("listed") else None,
    )


def listed_from_json(document: dict[str, Any]) -> Listed:
    """The :class:`Listed` that :func:`to_json` wrote; ValueError, TypeError or KeyError
    for a document that is not one (``Listed`` checks every field again)."""
    if not isinstance(document, dict):
        raise TypeError(f"a listing is an object, not a {type(document).__name__}")
    pushed_at, forge = document.get("pushed_at"), document.get("forge")
    topics = document.get("topics")
    if not isinstance(topics, list | None):  # a string's letters are no topics
        raise TypeError(f"topics are a list, not a {type(topics).__name__}")
    fields = {f.name for f in dataclasses.fields(Listed)} - {"topics", "pushed_at", "forge"}
    return Listed(
        **{name: document[name] for name in fields if name in document},
        topics=tuple(topics or ()),
        pushed_at=datetime.fromisoformat(pushed_at) if pushed_at is not None else None,
        forge=Forge(forge) if forge is not None else None,
    )


def _phase(document: dict[str, Any]) -> Phase:
    attempt = document.get("attempt")
    return Phase(
        str(document["name"]),
        datetime.fromisoformat(document["started"]),
        datetime.fromisoformat(document["ended"]),
        None if attempt is None else int(attempt),
    )


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)

"""Reading the phases of a report's JSON document (ADR 0020)."""

from __future__ import annotations

from typing import Any


def phase_names(phases: list[dict[str, Any]]) -> list[str]:
    """``waiting#1``, ``clone#1``, ``retry_wait#1``, ..., ``analysis``: each phase's name
    and, for those of a clone attempt, its number."""
    return [p["name"] if p["attempt"] is None else f"{p['name']}#{p['attempt']}" for p in phases]

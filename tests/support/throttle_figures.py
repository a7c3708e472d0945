"""Figures of a run against the throttling server, from its own records (issue 43):
what the tests assert and what bench/bench_throttle.py prints. Nothing here reads a
clock: every time is one the server recorded."""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path

from .repos import make_repo
from .throttling_http import Request, ThrottlingHttp

__all__ = ["Attempts", "attempts_of", "many_repositories", "share_above"]

_REFS = "/info/refs"


def many_repositories(root: Path, count: int) -> list[str]:
    """``count`` tiny bare repositories in ``root`` (r000.git, ...): one made with git,
    the others copies of it (seconds, not minutes). Returns their names."""
    names = [f"r{i:03d}" for i in range(count)]
    make_repo(root, names[0], commits=1, other_branches=())
    for name in names[1:]:
        shutil.copytree(root / f"{names[0]}.git", root / f"{name}.git")
    return names


@dataclass(frozen=True)
class Attempts:
    """The clone attempts the server saw: each from its ref listing's arrival to its
    last request's end, and whether it was refused (a 429 or a 503 on either request)."""

    spans: list[tuple[float, float]]
    refused: int
    first_refusal: float | None  # when the first refusal was answered


def attempts_of(server: ThrottlingHttp) -> Attempts:
    """Group the server's requests into clone attempts, per repository in arrival order:
    an attempt starts with a ref listing; the pack request after it belongs to it."""
    spans: list[tuple[float, float]] = []
    refused = 0
    ordered = sorted(server.requests, key=lambda r: (r.repository, r.arrived))
    for _, requests in itertools.groupby(ordered, key=lambda r: r.repository):
        attempt: list[Request] = []
        for request in [*requests, None]:
            if request is None or _REFS in request.target:
                if attempt:
                    spans.append((attempt[0].arrived, max(r.ended for r in attempt)))
                    refused += any(r.status in (429, 503) for r in attempt)
                attempt = []
            if request is not None:
                attempt.append(request)
    refusals = [r.ended for r in server.requests if r.status in (429, 503)]
    return Attempts(spans, refused, min(refusals, default=None))


def share_above(spans: list[tuple[float, float]], k: int, since: float) -> float:
    """The share of the time from ``since`` to the last end during which more than ``k``
    spans were open (a sweep over their starts and ends)."""
    events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
    end = max((e for _, e in spans), default=since)
    if end <= since:
        return 0.0
    above, open_, last = 0.0, 0, since
    for when, change in events:
        if when > since and open_ > k:
            above += when - max(last, since)
        last = max(when, since)
        open_ += change
    return above / (end - since)

"""A WSGI middleware for the suite's HTTP git server that pushes back: it answers the
first requests of each repository with a status (503, 429) and a ``Retry-After``, and
records every request it saw, so that a test asserts from what the server met."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

_REASONS = {429: "Too Many Requests", 502: "Bad Gateway", 503: "Service Unavailable"}


@dataclass
class PushBack:
    """Fails the first ``failures`` ref listings (``GET .../info/refs``) of each
    repository with ``status``; the rest go to the app behind. ``retry_after`` is the
    header's text ("" for none). ``seen`` counts ref listings per repository path,
    ``answers`` lists (path, status) in arrival order."""

    failures: int = 1
    status: int = 503
    retry_after: str = "0"
    seen: Counter[str] = field(default_factory=Counter)
    answers: list[tuple[str, int]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, app: Callable[..., Any]) -> Callable[..., Any]:
        def middleware(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
            path = str(environ.get("PATH_INFO", ""))
            if not path.endswith("/info/refs"):
                return app(environ, start_response)
            repository = path.removesuffix("/info/refs")
            with self._lock:
                self.seen[repository] += 1
                failing = self.seen[repository] <= self.failures
                self.answers.append((repository, self.status if failing else 200))
            if not failing:
                return app(environ, start_response)
            headers = [("Content-Type", "text/plain")]
            if self.retry_after:
                headers.append(("Retry-After", self.retry_after))
            start_response(f"{self.status} {_REASONS[self.status]}", headers)
            return _body()

        return middleware


def _body() -> Iterable[bytes]:
    return [b"try again later\n"]

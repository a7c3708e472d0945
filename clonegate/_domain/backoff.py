"""How long a repository waits before its next clone attempt (issue 43, ADR 0019).

Exponential backoff with full jitter (AWS's "Exponential Backoff and Jitter": a
uniform draw between 0 and the capped exponential), lengthened to what the server
asked for (``Retry-After``, ``RateLimit-Reset``, ``X-RateLimit-Reset``) and
shortened to the repository's deadline. Pure: no I/O, no waiting, no checkpoint;
the caller sleeps.
"""

from __future__ import annotations

import math
import random
import re
import time
from dataclasses import dataclass
from typing import final

__all__ = ["Backoff", "Wait", "parse_reset", "parse_retry_after"]

# A header value longer than this is not a number of seconds nor an HTTP date: a
# hostile server's, ignored before any parsing.
_LONGEST_HINT = 64
# RFC 9110 delay-seconds are digits; some servers send a fraction ("1.5"): accepted.
_SECONDS = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,6})?")
# X-RateLimit-Reset is a Unix time at GitHub and GitLab, RateLimit-Reset (IETF draft)
# a number of seconds. A value from this one on (2001-09-09) is a Unix time: no
# server asks for a wait of 31 years.
_UNIX_TIME_FROM = 1_000_000_000


def _finite(value: float, name: str, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{name} must be a finite number {'>' if positive else '>='} 0")
    return float(value)


def parse_retry_after(value: str | float | None, *, wall_now: float) -> float | None:
    """Seconds to wait from ``Retry-After``: delay-seconds or an HTTP date.

    ``wall_now`` is the Unix time the response arrived (an HTTP date is wall-clock
    time). A date in the past is 0. ``None`` for no value and for anything that is
    neither (too long, negative, not finite, a malformed date): an unreadable hint
    is no hint, and the backoff's own delay applies.
    """
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value) if math.isfinite(value) and value >= 0 else None
    if not isinstance(value, str) or len(value) > _LONGEST_HINT:
        return None
    text = value.strip()
    if _SECONDS.fullmatch(text):
        return float(text)
    # Here, not at import: the email package is ~3 ms of every command's start, and
    # only a server's Retry-After date needs it (ADR 0003, issue 47).
    from email.utils import parsedate_to_datetime

    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if moment.tzinfo is None:  # RFC 9110: HTTP dates are GMT; a naive one is too
        return None
    return max(moment.timestamp() - wall_now, 0.0)


def parse_reset(value: str | float | None, *, wall_now: float) -> float | None:
    """Seconds to wait from ``RateLimit-Reset`` or ``X-RateLimit-Reset``.

    Below 1 000 000 000, seconds from now (the IETF draft); from there on, a Unix time
    (GitHub, GitLab), whose wait is counted from ``wall_now`` (0 when past). ``None``
    for no value or an unreadable one, as :func:`parse_retry_after`.
    """
    if value is None:
        return None
    if isinstance(value, str):
        if len(value) > _LONGEST_HINT or not _SECONDS.fullmatch(value.strip()):
            return None
        value = float(value.strip())
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0:
        return None
    if value >= _UNIX_TIME_FROM:
        return max(float(value) - wall_now, 0.0)
    return float(value)


@dataclass(frozen=True, slots=True)
class Wait:
    """What :meth:`Backoff.plan` decided.

    Attributes:
      seconds: how long to wait, >= 0, never past the deadline.
      drawn: the jittered exponential delay alone.
      asked: what the server asked for (the longest readable hint, at most
        :attr:`Backoff.longest_hint`), or ``None``.
      past_deadline: the wait the policy wanted (the longer of ``drawn`` and
        ``asked``) ends at or after the deadline. A retry after ``seconds`` would
        come before the server said it may, or would find no time left: the
        caller should give up with the last error rather than try again.
    """

    seconds: float
    drawn: float
    asked: float | None
    past_deadline: bool


@final
class Backoff:
    """Exponential backoff with full jitter, honouring a server's hints, bounded by a deadline.

    Before retry ``attempt`` (1 for the first retry, after one failed attempt), the
    drawn delay is uniform in ``[0, min(cap, base * 2 ** (attempt - 1))]``. A hint
    from the server (``Retry-After`` in seconds or as an HTTP date,
    ``RateLimit-Reset`` or ``X-RateLimit-Reset``) wins when it is longer: the
    longest of them, at most ``longest_hint`` seconds (a hostile server's
    ``Retry-After: 99999999`` must not park a run for years). The result is then cut
    to the time left before ``deadline`` (trio time, as the repository's cancel
    scope's), never below 0.

    Args:
      base: the first window, seconds > 0 (1.0).
      cap: the largest window, seconds >= base (30.0).
      longest_hint: the longest server hint honoured, seconds (3600.0).
      rng: the random source; a seeded ``random.Random`` makes draws reproducible.

    None of its methods is a checkpoint, nor waits.
    """

    __slots__ = ("_rng", "base", "cap", "longest_hint")

    def __init__(
        self,
        base: float = 1.0,
        cap: float = 30.0,
        *,
        longest_hint: float = 3600.0,
        rng: random.Random | None = None,
    ) -> None:
        self.base = _finite(base, "base", positive=True)
        self.cap = _finite(cap, "cap", positive=True)
        if self.cap < self.base:
            raise ValueError(f"cap ({cap}) must be >= base ({base})")
        self.longest_hint = _finite(longest_hint, "longest_hint")
        self._rng = rng if rng is not None else random.Random()

    def __repr__(self) -> str:
        return f"<Backoff base={self.base:g}s cap={self.cap:g}s>"

    def window(self, attempt: int) -> float:
        """The upper end of the draw before retry ``attempt`` (>= 1)."""
        if isinstance(attempt, bool) or not isinstance(attempt, int):
            raise TypeError(f"attempt must be an int, not {type(attempt).__name__}")
        if attempt < 1:
            raise ValueError(f"attempt must be >= 1, got {attempt}")
        # 2 ** attempt overflows a float past 1023; the cap is reached long before.
        doublings = min(attempt - 1, 64)
        return min(self.cap, self.base * 2.0**doublings)

    def plan(
        self,
        attempt: int,
        retry_after: str | float | None = None,
        deadline: float | None = None,
        *,
        reset_at: str | float | None = None,
        now: float | None = None,
        wall_now: float | None = None,
    ) -> Wait:
        """Decide the wait before retry ``attempt``; see the class for the rule.

        ``retry_after`` and ``reset_at`` are the raw header values (or numbers of
        seconds); ``reset_at`` is ``RateLimit-Reset`` or ``X-RateLimit-Reset``.
        ``deadline`` and ``now`` are trio times (``now`` defaults to
        ``trio.current_time()``, read only when a deadline is given); ``wall_now``
        is the Unix time the answer came (defaults to ``time.time()``).
        """
        drawn = self._rng.uniform(0.0, self.window(attempt))
        wall = time.time() if wall_now is None else wall_now
        hints = [
            hint
            for hint in (
                parse_retry_after(retry_after, wall_now=wall),
                parse_reset(reset_at, wall_now=wall),
            )
            if hint is not None
        ]
        asked = min(max(hints), self.longest_hint) if hints else None
        wanted = drawn if asked is None else max(drawn, asked)
        if deadline is None:
            return Wait(seconds=wanted, drawn=drawn, asked=asked, past_deadline=False)
        if now is None:
            import trio  # here: the workers read the parsers above and never load trio

            now = trio.current_time()
        left = max(deadline - now, 0.0)
        return Wait(
            seconds=min(wanted, left), drawn=drawn, asked=asked, past_deadline=wanted >= left
        )

    def delay(
        self,
        attempt: int,
        retry_after: str | float | None = None,
        deadline: float | None = None,
        *,
        reset_at: str | float | None = None,
        now: float | None = None,
        wall_now: float | None = None,
    ) -> float:
        """``plan(...).seconds``: the wait before retry ``attempt``, in seconds.

        The retry loop's backoff protocol: ``delay(attempt, retry_after, deadline)``
        (positionally in that order; the reset header and the clocks by keyword)."""
        return self.plan(
            attempt, retry_after, deadline, reset_at=reset_at, now=now, wall_now=wall_now
        ).seconds

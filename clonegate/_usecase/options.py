"""Go-style functional options for :class:`clonegate.AnalyzeUseCase` (ADR 0006)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from .._domain.backoff import Backoff
from .._domain.checks import positive_int, positive_seconds
from .._domain.credentials import Credential
from .._domain.events import Event
from .._domain.inventory import ANALYSIS_TIME_LIMIT
from .._domain.limits import Limiter
from .._domain.rate import Rate
from .._domain.retries import RetryDelay
from .._domain.sizes import parse_size
from .._domain.store import ReportStore

__all__ = [
    "Option",
    "UseCaseConfig",
    "with_adaptive",
    "with_analysis_timeout",
    "with_breaker",
    "with_clone_timeout",
    "with_clone_weight",
    "with_event_hook",
    "with_global_limiter",
    "with_host_limit",
    "with_host_limiter",
    "with_host_rate",
    "with_incremental",
    "with_keep_clones",
    "with_max_concurrent_clones",
    "with_memory_budget",
    "with_remote_head_limit",
    "with_repository_timeout",
    "with_result_store",
    "with_retries",
    "with_stuck_threshold",
    "with_token",
]


def _one_per_clone(url: str) -> int:
    return 1


_BACKOFF = Backoff()  # 1 s base, 30 s cap (clonegate._domain.backoff)


@dataclass(frozen=True, slots=True)
class UseCaseConfig:
    """Everything the options set; build it with the ``with_*`` functions.

    Only the use case's own settings: how its adapters clone and analyze is theirs
    (``CloneSettings``, ``AnalysisSettings``; ADR 0017).
    """

    max_concurrent_clones: int = 2
    # Bytes, "auto", or None (no memory budget: the count alone limits clones).
    memory_budget: int | Literal["auto"] | None = None
    # False: an "auto" budget on a machine whose memory cannot be read is no budget,
    # said once, rather than an error (the command line's default, ADR 0014).
    memory_budget_required: bool = True
    repository_timeout: float = 15 * 60.0
    # Seconds one analysis may run, its waits for an analysis process not counted.
    analysis_time_limit: float = ANALYSIS_TIME_LIMIT
    clone_timeout: float | None = None
    credentials: tuple[Credential, ...] = ()
    keep_clones: bool = False
    clone_weight: Callable[[str], int] = _one_per_clone
    stuck_threshold: float = 10 * 60.0
    event_hook: Callable[[Event], None] | None = None
    # Shared limits held after the clone count (ADR 0015): per host, and in all.
    host_limiter: Callable[[str], Limiter] | None = None
    global_limiter: Limiter | None = None
    # This process's own limit per host (issue 43, ADR 0019): at most ``host_limit``
    # clones at once from a host (None: -j), adapted to the host's push-back when
    # ``adaptive``; and at most ``host_rate`` clone attempts per period (None: no rate).
    # A ``host_limiter`` replaces the limit (not the rate).
    host_limit: int | None = None
    adaptive: bool = True
    host_rate: Rate | None = None
    # Kept results (ADR 0016): where, whether unchanged repositories are reused, and
    # how many remotes are asked for their HEAD at once.
    result_store: ReportStore | None = None
    incremental: bool = False
    remote_head_limit: int = 4
    # Clone attempts after the first for a server that pushed back (issue 43), and
    # how long each waits, without a clone slot.
    retries: int = 2
    retry_delay: RetryDelay = _BACKOFF
    # Whether a read timeout is retried too (off: see with_retries).
    retry_timeouts: bool = False
    # A breaker per host (ADR 0019): open after this many connection failures in a
    # row (0: no breaker), first probe this many seconds later.
    breaker_threshold: int = 5
    breaker_cool_down: float = 5.0

    @classmethod
    def of(cls, options: Iterable[Option]) -> UseCaseConfig:
        """The defaults, with ``options`` applied in order (a later one wins)."""
        config = cls()
        for option in options:
            config = option(config)
        return config

    @property
    def analysis_timeout(self) -> float:
        """:attr:`repository_timeout`, by the name it had until issue 38."""
        return self.repository_timeout


Option = Callable[[UseCaseConfig], UseCaseConfig]
_DEFAULT = UseCaseConfig()
MiB = 1 << 20


def with_max_concurrent_clones(n: int) -> Option:
    """At most ``n`` clones at once (default 2). With :func:`with_clone_weight`, a budget."""
    # Go's WithMaxConcurrentClones ignores n <= 0 and keeps the default. A silent
    # fallback turns a typo into a surprise at 3 a.m.; we refuse it when built (ADR 0006).
    n = positive_int("max_concurrent_clones", n)
    return lambda config: dataclasses.replace(config, max_concurrent_clones=n)


def with_memory_budget(budget: int | str, *, required: bool = True) -> Option:
    """Clones run while the memory they are expected to need fits in ``budget``.

    ``budget``: bytes (an int, or text such as ``"1.5G"``), or ``"auto"``: what this
    process may still use when the use case is made (its cgroup's limit minus its
    working set, or ``MemAvailable``) less what runs outside the budget (the parent,
    the workers' zygote, idle analysis workers), between 3/4 and 92% of it. Each clone
    reserves its expected peak, learned from the clones that finished (ADR 0014);
    before any has, its hard memory cap (its VCS's ``max_memory``); each analysis job
    holds its share, learned from the analysis jobs that ran, while it runs. During a
    batch or a :meth:`~clonegate.AnalyzeUseCase.session` a controller shrinks what is
    admitted under memory pressure and grows it back, never above
    ``budget``. Combines with :func:`with_max_concurrent_clones`: at most that many
    clones, and within the budget.

    Where this machine's memory cannot be read, ``"auto"`` raises ValueError when the
    use case is made; with ``required=False`` it is no budget instead, said once in a
    warning (the command line's default budget).
    """
    if isinstance(budget, str):
        value: int | Literal["auto"] = (
            "auto" if budget.strip().lower() == "auto" else parse_size(budget)
        )
    else:
        value = positive_int("memory_budget", budget)
    if value != "auto" and value < MiB:
        raise ValueError(f"a memory budget must be at least 1 MiB, got {budget!r}")
    return lambda config: dataclasses.replace(
        config, memory_budget=value, memory_budget_required=required
    )


def with_repository_timeout(seconds: float) -> Option:
    """The deadline per repository, covering the wait for a clone slot, the clone and
    the analysis, as in Go (default 15 minutes; ``--timeout``). A wait for an analysis
    process does not count: those who hold the processes are under
    :func:`with_analysis_time_limit`."""
    value = positive_seconds("repository_timeout", seconds)
    return lambda config: dataclasses.replace(config, repository_timeout=value)


def with_analysis_timeout(seconds: float) -> Option:
    """:func:`with_repository_timeout` by its Go name (``WithAnalysisTimeout``), kept so
    that code written before issue 38 keeps its meaning: the deadline per repository.
    The time limit of the analysis alone is :func:`with_analysis_time_limit`."""
    value = positive_seconds("analysis_timeout", seconds)
    return lambda config: dataclasses.replace(config, repository_timeout=value)


def with_clone_timeout(seconds: float) -> Option:
    """A deadline for the clone alone, from the moment the VCS is ready to clone.

    The VCS's set-up once the slot is held (starting a worker process) does not count;
    the report shows it as ``timings.setup``. Nor does a wait for memory under a
    budget (a clone that forecasts its need, ADR 0014): the clone does nothing then.
    """
    value = positive_seconds("clone_timeout", seconds)
    return lambda config: dataclasses.replace(config, clone_timeout=value)


def with_token(token: str, host: str) -> Option:
    """A token for https on ``host`` only (``github.com``, ``git.example.com:8443``).

    Sent as HTTP basic authentication with the user ``x-access-token``, only to that
    host and port, only over https, and only when the server asks for it (a 401
    answer). A URL with its own user-info uses that instead. Never shown.
    """
    credential = Credential.token(token, host)
    return with_credentials((credential,))


def with_credentials(credentials: tuple[Credential, ...]) -> Option:
    """``credentials`` added to those given before (clonegate.with_netrc's, with_token's)."""
    # Later options win for the same host: the last credential bound to an origin
    # is the one used (clonegate._domain.credentials).
    return lambda config: dataclasses.replace(config, credentials=config.credentials + credentials)


def with_keep_clones() -> Option:
    """Leave each clone on disk after its analysis; its report's ``path`` says where.

    Works with any VCS. With :func:`clonegate.open_analyzer`'s, the files are checked
    out too, into temporary directories unless ``CloneSettings.keep_in`` names a place.
    """
    return lambda config: dataclasses.replace(config, keep_clones=True)


def with_clone_weight(weigh: Callable[[str], int]) -> Option:
    """How many units of the clone limit a repository takes (default 1 per clone).

    E.g. ``with_max_concurrent_clones(2048), with_clone_weight(expected_mb)`` budgets
    memory: clones run while the sum of their expected megabytes fits in 2048.
    """
    if not callable(weigh):
        raise ValueError("clone_weight must be a function from URL to int")
    return lambda config: dataclasses.replace(config, clone_weight=weigh)


def with_stuck_threshold(seconds: float) -> Option:
    """Warn (log and event) when a clone has run longer than this (default 10 minutes)."""
    value = positive_seconds("stuck_threshold", seconds)
    return lambda config: dataclasses.replace(config, stuck_threshold=value)


def with_event_hook(hook: Callable[[Event], None]) -> Option:
    """Call ``hook(event)`` at each step of each repository (the CLI draws progress from it).

    The hook runs in the trio task of the repository: it must be quick and must not block.
    """
    if not callable(hook):
        raise ValueError("event_hook must be callable")
    return lambda config: dataclasses.replace(config, event_hook=hook)


def with_host_limit(n: int) -> Option:
    """At most ``n`` clones at once from any one host (``github.com``, ``git.example.com``),
    within this use case, and never more than :func:`with_max_concurrent_clones`: each
    clone counts 1, whatever its weight. With :func:`with_adaptive` (on by default) it
    is the ceiling of a limit that comes down when the host pushes back. Replaces
    :func:`with_host_limiter`'s; for a limit shared by several processes or machines,
    see that."""
    n = positive_int("host_limit", n)
    return lambda config: dataclasses.replace(config, host_limit=n, host_limiter=None)


def with_adaptive(on: bool = True) -> Option:
    """Adapt each host's clone limit to what the host tolerates (default on): it starts
    at its ceiling (:func:`with_host_limit`, or :func:`with_max_concurrent_clones`),
    comes down by a quarter when the host pushes back (HTTP 429, a 503 with
    ``Retry-After``, connections reset in a burst) and goes back up by half a clone per
    round of successful clones (AIMD, ADR 0019). A host that never pushes back runs
    as with a fixed limit. Off: the host limit, if any, is fixed."""
    if not isinstance(on, bool):
        raise ValueError(f"adaptive must be True or False, got {on!r}")
    return lambda config: dataclasses.replace(config, adaptive=on)


def with_host_rate(rate: str | Rate) -> Option:
    """At most ``rate`` clone attempts per host, e.g. ``"30/min"`` (``N/s``, ``N/min``,
    ``N/h``): for servers that count requests rather than concurrent clones. Spaced
    from the first (no burst): the first attempt starts at once, each next one an
    interval later. The token is taken last, when the clone holds everything else,
    so clones never start together (ADR 0019)."""
    value = rate if isinstance(rate, Rate) else Rate.parse(rate)
    return lambda config: dataclasses.replace(config, host_rate=value)


def with_host_limiter(limiter_for: Callable[[str], Limiter]) -> Option:
    """A limit per host: ``limiter_for(host)`` is called once per host the batch meets
    and each clone from that host holds ``limiter_for(host).hold(weight)`` while it runs,
    e.g. ``lambda host: RedisSemaphore(redis, f"host:{host}", 2)``. Held after the clone
    count and before :func:`with_global_limiter`'s limit: one order for every client, so
    clients never deadlock on each other's permits."""
    if not callable(limiter_for):
        raise ValueError("host_limiter must be a function from host to limiter")
    return lambda config: dataclasses.replace(config, host_limiter=limiter_for, host_limit=None)


def with_global_limiter(limiter: Limiter) -> Option:
    """A limit every clone also holds, e.g. a :class:`RedisSemaphore` that all the
    workers of a cluster share (``async with limiter.hold(weight)`` around each clone,
    after the per-host limit)."""
    if not callable(getattr(limiter, "hold", None)):
        raise ValueError("a global limiter needs a hold(weight) method")
    return lambda config: dataclasses.replace(config, global_limiter=limiter)


def with_result_store(store: ReportStore) -> Option:
    """Keep every report in ``store`` (a :class:`clonegate.store.SQLiteStore` from
    :func:`clonegate.store.open_store`, or your own): each batch, session or lone
    :meth:`~clonegate.AnalyzeUseCase.execute` is a run, and a report reaches its
    caller only once it is stored."""
    return lambda config: dataclasses.replace(config, result_store=store)


def with_incremental(enabled: bool = True) -> Option:
    """Reuse stored results: before taking a clone slot, ask the remote for its HEAD
    (a ref listing, no pack, no clone slot; at most :func:`with_remote_head_limit` at
    once); if the newest stored successful result for that repository is of that commit
    and by the current analyzer version, report it again (``reused=True``), with no
    clone and no analysis. Needs :func:`with_result_store`, a VCS that can list a
    remote's HEAD and an analyzer that states its version (the defaults do)."""
    return lambda config: dataclasses.replace(config, incremental=enabled)


def with_remote_head_limit(n: int) -> Option:
    """At most ``n`` remotes asked for their HEAD at once in an incremental run (default 4)."""
    n = positive_int("remote_head_limit", n)
    return lambda config: dataclasses.replace(config, remote_head_limit=n)


def with_retries(n: int, delay: RetryDelay | None = None, *, timeouts: bool = False) -> Option:
    """Try a clone again up to ``n`` times when the server pushed back or the
    connection failed (an error of a kind in ``clonegate._domain.errors.RETRIED_KINDS``:
    HTTP 429, 502, 503, 504, a "rate limit" in the server's words, a connection
    refused, reset or closed mid-answer); default 2, ``0`` turns retries off. With
    ``timeouts``, a read timeout too (off by default: each retry of a silent server
    holds a clone slot for the whole read timeout again, and a server gone silent is
    more often stuck than busy). Each attempt is a fresh clone under the clone
    limit; between attempts the repository gives its clone slot back and waits
    ``delay.delay(attempt, retry_after, deadline)`` seconds (default: exponential
    backoff with full jitter, 1 s base, 30 s cap, the server's ``Retry-After`` or
    ``RateLimit-Reset`` when longer), within its own deadline (trio time): a wait
    that would reach it is not begun, and the last error is reported. Other failures
    are never retried. The ref listings of an incremental run are retried alike."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"retries must be an integer >= 0, got {n!r}")
    if delay is not None and not callable(getattr(delay, "delay", None)):
        raise ValueError("a retry delay needs a delay(attempt, retry_after, deadline) method")

    def apply(config: UseCaseConfig) -> UseCaseConfig:
        chosen = delay if delay is not None else config.retry_delay
        return dataclasses.replace(
            config, retries=n, retry_delay=chosen, retry_timeouts=bool(timeouts)
        )

    return apply


def with_breaker(
    threshold: int = _DEFAULT.breaker_threshold, cool_down: float = _DEFAULT.breaker_cool_down
) -> Option:
    """A breaker per host (on by default): after ``threshold`` connection failures in a
    row to one host (refused, unknown name, TLS, no answer to the connect), its other
    repositories wait, holding no clone slot, while one probe tries again after
    ``cool_down`` seconds (then twice as long after each failed probe, up to 60 s).
    After four failed probes, or at a repository's deadline, the host's waiting
    repositories are reported ``failed``, kind ``host_unavailable``, with their
    attempts. ``threshold=0`` turns it off: every repository tries on its own."""
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 0:
        raise ValueError(f"breaker threshold must be an integer >= 0, got {threshold!r}")
    seconds = positive_seconds("breaker cool_down", cool_down)
    return lambda config: dataclasses.replace(
        config, breaker_threshold=threshold, breaker_cool_down=seconds
    )

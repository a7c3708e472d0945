"""The command line's first clone, started from its raw arguments, before it has
loaded what parses them (ADR 0003, issue 47).

The zygote forks the first clone's worker as soon as the clone modules are in, and
the clone runs while the command line imports trio and Typer and the zygote the
grammars. The use case's clone of the same repository takes it over when its job is
the same in every field (``DulwichVCS.clone``, ``WorkerPool.claim_first``); any
other job the pool runs first ends it, and a program that ends without taking it
over calls :func:`end_first_clone`.

At import, nothing but the worker's spawning and the preloads' names: the zygote
starts before anything heavier is loaded.
"""

from __future__ import annotations

from ..preloads import CLONE_MODULES, ZYGOTE_PRELOAD
from ..workers import spawn

TYPE_CHECKING = False  # not typing's (ADR 0003)
if TYPE_CHECKING:
    from collections.abc import Mapping

    from .settings import CloneSettings

__all__ = ["end_first_clone", "prestart_first_clone", "start_first_clone"]

# The schemes a first clone may have: none that sends a credential by itself (ssh's
# keys and agent), and none the command line refuses (file://, ADR 0013).
_SCHEMES = frozenset({"git", "http", "https"})


def prestart_first_clone(environment: Mapping[str, str] | None) -> None:
    """``prestart`` the workers' zygote (the declared preloads, ``environment``) with
    the stream of a first clone, forked once the clone modules are in; then call
    :func:`start_first_clone` (or nothing starts)."""
    spawn.prestart(ZYGOTE_PRELOAD, environment, first_after=len(CLONE_MODULES))


def start_first_clone(
    url: str, settings: CloneSettings | None = None, *, ask_memory: bool = False
) -> bool:
    """Send the prestarted zygote the clone of ``url`` that a ``DulwichVCS`` with
    ``settings`` would make for the use case (its bytes received told; its memory
    forecasts asked when ``ask_memory``, as under a memory budget), into a private
    directory; whether it was sent. A question asked before the use case takes the
    clone over waits for it: the budget answers it as it answers its own clone's.

    Nothing is sent (the first worker ends) without a zygote prestarted for it, for a
    URL the command line refuses, one with user-info, one that is not git://, http://
    or https://, or kept clones:
    a first clone never carries a credential, and its job is then the same as the use
    case's only when the use case has none for it either (ADR 0013).
    """
    import dataclasses

    from ..._domain.errors import InvalidURLError
    from ..._domain.urls import parse_repo_url
    from ..workers import wire
    from .clone_job import CLONE, clone_job, envelope_of, kind_of
    from .debris import new_clone_directory
    from .settings import CloneSettings

    settings = settings if settings is not None else CloneSettings()
    try:
        repo = parse_repo_url(url)
        plain = repo.scheme in _SCHEMES and repo.username is None and repo.password is None
        root = new_clone_directory(settings.work_dir) if plain and not settings.keep_in else None
    except (InvalidURLError, OSError):
        root = None
    if root is None:
        spawn.drop_first()
        return False
    job = clone_job(settings, repo, None, None, target=str(root / repo.directory_name), keep=None)
    job = dataclasses.replace(job, tell_progress=True, ask_memory=ask_memory)
    envelope = envelope_of(settings)
    payload = wire.dump((CLONE, (job,)))
    try:
        spawn.send_first(job, payload, envelope.max_memory, kind_of(envelope), str(root))
    except (OSError, RuntimeError):  # no zygote waits for it, or it is gone already
        root.rmdir()  # empty: nothing reached a worker
        spawn.drop_first()
        return False
    return True


def end_first_clone() -> None:
    """At the program's end: if a first clone was sent and no pool took its zygote
    over, stop the zygote (it kills and reaps the clone's worker), and remove the
    clone's directory. Nothing otherwise."""
    spawn.end_unadopted()

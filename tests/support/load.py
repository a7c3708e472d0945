"""A load scenario shared by the end-to-end tests and bench/bench_load.py.

Ten real repositories served by ``git daemon`` under many distinct names (symlinks),
mixed with bad URLs of four kinds: a refused port, a missing repository, a server that
never answers, and one that answers garbage.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from .repos import make_repo
from .servers import answer_garbage, free_port, git_daemon, never_answer, raw_tcp_server

REAL_REPOSITORIES = 10
BAD_KINDS = ("refused", "missing", "silent", "garbage")
# What each kind of bad URL must end as: (status, the error kinds it may have). A
# refused port is retried, then its breaker opens (issue 43): each of its URLs ends
# unreachable or, once the breaker gave the host up, host_unavailable.
EXPECTED: dict[str, tuple[str, frozenset[str | None]]] = {
    "good": ("ok", frozenset({None})),
    "refused": ("failed", frozenset({"unreachable", "host_unavailable"})),
    "missing": ("failed", frozenset({"not_found"})),
    "silent": ("timeout", frozenset({"timeout"})),
    "garbage": ("failed", frozenset({"protocol"})),
}


@dataclass(frozen=True)
class Scenario:
    urls: list[str]
    kinds: list[str]  # "good" or one of BAD_KINDS, per URL
    daemon_pid: int


def build_served_tree(root: Path, names: int) -> None:
    for i in range(REAL_REPOSITORIES):
        make_repo(root, f"real{i}", commits=2 + i, other_branches=())
    for n in range(names):
        os.symlink(f"real{n % REAL_REPOSITORIES}.git", root / f"repo{n:05}.git")


@contextmanager
def load_scenario(root: Path, total: int, bad_share: float = 0.1) -> Iterator[Scenario]:
    """``total`` URLs, ``bad_share`` of them bad (a quarter of each kind), interleaved."""
    bad_every = round(1 / bad_share)
    bad = total // bad_every
    root.mkdir(parents=True, exist_ok=True)
    build_served_tree(root, total - bad)
    with ExitStack() as stack:
        daemon = stack.enter_context(git_daemon(root))
        silent = stack.enter_context(raw_tcp_server(never_answer))
        garbage = stack.enter_context(raw_tcp_server(answer_garbage))
        refused = free_port()
        urls, kinds = [], []
        good = 0
        for i in range(total):
            if i % bad_every == bad_every - 1:
                kind = BAD_KINDS[(i // bad_every) % len(BAD_KINDS)]
                port = {
                    "refused": refused,
                    "missing": daemon.port,
                    "silent": silent,
                    "garbage": garbage,
                }[kind]
                urls.append(f"git://127.0.0.1:{port}/{kind}{i:05}.git")
            else:
                kind = "good"
                urls.append(daemon.url(f"repo{good:05}"))
                good += 1
            kinds.append(kind)
        yield Scenario(urls, kinds, daemon.process.pid)

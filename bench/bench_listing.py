"""Listing 5,000 repositories from a paged loopback API, streamed into the clones or
listed whole first, side by side (issue 45, ADR 0023).

    python bench/bench_listing.py            # 5,000 repositories, 100 a page
    python bench/bench_listing.py --quick    # 300: a smoke test

The APIs are the tests' loopback GitHub and GitLab servers (tests/support/forges/), each
page answered after ``--page-latency`` seconds (a forge's page of 100 takes a few
hundred ms; loopback takes none), in this process. The pipeline is the real use case
(``AnalyzeUseCase.analyze_many``) with the tests' fake VCS and analyzer, each "clone"
taking ``--clone-seconds``, ``-j`` at once: what is measured is the listing and the
hand-over, not git. Contenders, alternated, best of ``--rounds``:

- **streamed**: ``listing_feed(...).open()`` handed to ``analyze_many``: the first
  repository goes to the clone step when the first page is in;
- **list, then clone**: the same feed read into a list first, then ``analyze_many``.

Figures: time to the first clone (the first repository handed to the clone step), the
listing's end (its last page in), the whole run, and the requests the API saw.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import trio

from clonegate import AnalyzeUseCase, with_max_concurrent_clones
from clonegate.sources import Listed, Source, entry_of, listing_feed
from tests.support.fakes import FakeAnalyzer, FakeVCS
from tests.support.forges.catalogue import made
from tests.support.forges.core import ForgeServer
from tests.support.forges.github import GitHubApi
from tests.support.forges.gitlab import GitLabApi

GIT = "https://git.example"  # never reached: the VCS is a fake


class _Slow(ForgeServer):
    """A loopback forge API whose every answer comes after ``latency`` seconds."""

    latency = 0.0

    async def _handle(self, client: trio.abc.Stream) -> None:
        await trio.sleep(self.latency)
        await super()._handle(client)


class SlowGitHub(_Slow, GitHubApi):
    """The loopback GitHub API (Link pages of 100), slow."""


class SlowGitLab(_Slow, GitLabApi):
    """The loopback GitLab API (keyset pages of 100), slow."""


def _server(forge: str, repositories: int, latency: float) -> tuple[ForgeServer, str]:
    """The slow loopback API of ``forge`` listing ``repositories`` of acme, and the
    shape of its source."""
    repos = made("acme", repositories)
    server: SlowGitHub | SlowGitLab
    if forge == "gitlab":
        server, shape = SlowGitLab(repos, git_base=GIT), "gitlab:group/acme@{}"
    else:
        server = SlowGitHub(repos, git_base=GIT, orgs=["acme"], prefix="/api/v3")
        shape = "github:org/acme@{}"
    server.latency = latency
    return server, shape


@dataclass
class Measured:
    first_clone: float
    listed: float
    total: float
    requests: int
    reports: int


def _source(server: ForgeServer, shape: str) -> Source:
    source = entry_of(shape.format(server.base_url))
    assert isinstance(source, Source)
    return source


async def _one(
    forge: str, repositories: int, latency: float, clone_seconds: float, jobs: int, streamed: bool
) -> Measured:
    server, shape = _server(forge, repositories, latency)
    with tempfile.TemporaryDirectory(prefix="bench-listing-") as tmp:
        vcs = FakeVCS(Path(tmp), delay=clone_seconds)
        uc = AnalyzeUseCase(with_max_concurrent_clones(jobs), vcs=vcs, analyzer=FakeAnalyzer())
        async with trio.open_nursery() as nursery:
            await nursery.start(server.serve)
            started = trio.current_time()
            listed_at = [0.0]
            feed = listing_feed([_source(server, shape)])
            reports = 0
            async with feed.open() as stream:
                counted = _counting(stream, listed_at, repositories)
                lines = counted if streamed else [entry async for entry in counted]
                async with uc.analyze_many(lines) as batch:
                    async for _ in batch:
                        reports += 1
            total = trio.current_time() - started
            nursery.cancel_scope.cancel()
    first = min(vcs.started.values()) - started
    return Measured(first, listed_at[0] - started, total, len(server.seen), reports)


async def _counting(
    stream: trio.MemoryReceiveChannel[str | Listed],
    listed_at: list[float],
    expected: int,
) -> AsyncIterator[str | Listed]:
    seen = 0
    async for entry in stream:
        seen += 1
        if seen == expected:
            listed_at[0] = trio.current_time()  # the last record is out of the listing
        yield entry


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repositories", type=int, default=5000)
    parser.add_argument("--page-latency", type=float, default=0.2, help="seconds per page")
    parser.add_argument("--clone-seconds", type=float, default=0.01, help="per fake clone")
    parser.add_argument("-j", type=int, default=8, help="clones at once")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.quick:
        args.repositories, args.rounds, args.page_latency = 300, 1, 0.05
    for forge in ("github", "gitlab"):
        _table(forge, args)
    return 0


def _table(forge: str, args: argparse.Namespace) -> None:
    runs: dict[bool, list[Measured]] = {True: [], False: []}
    for _ in range(args.rounds):
        for streamed in (True, False):
            one = (forge, args.repositories, args.page_latency, args.clone_seconds, args.j)
            runs[streamed].append(trio.run(_one, *one, streamed))
    stream, whole = (min(runs[s], key=lambda m: m.total) for s in (True, False))
    rows = []
    for name, m in (("streamed", stream), ("list, then clone", whole)):
        assert m.reports == args.repositories, (name, m.reports)
        rows.append(
            f"| {name} | {m.first_clone:.2f} | {m.listed:.2f} | {m.total:.2f} | {m.requests} |"
        )
    print(
        f"\n{forge}: {args.repositories:,} repositories, {args.page_latency} s a page, 100 a "
        f"page; fake clones of {args.clone_seconds} s, -j {args.j}; best of {args.rounds}, "
        "seconds"
    )
    print("| contender | first clone | listing done | whole run | requests |")
    print("|---|---|---|---|---|")
    print("\n".join(rows))
    print(
        f"| streamed / list-then-clone | {stream.first_clone / whole.first_clone:.3f}x | "
        f"{stream.listed / whole.listed:.2f}x | {stream.total / whole.total:.2f}x | "
        f"{stream.requests / whole.requests:.2f}x |"
    )


if __name__ == "__main__":
    sys.exit(main())

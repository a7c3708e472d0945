"""The listing producer (clonegate/_usecase/listing_feed.py): entries in order, sources
listed at most K at once and ahead of the reader only within a bound, filters per
source, a limit that stops the fetching, failures one line each with what was listed
kept; and, through the composition, GitHub's adapter against the loopback GitHub API
(issue 45, ADR 0023)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import trio
import trio.testing

from clonegate._app import listing_feed
from clonegate._domain.filters import Filters
from clonegate._domain.listed import Listed
from clonegate._domain.listing import ListingError, Page, WaitNote
from clonegate._domain.sources import Source, entry_of
from clonegate._usecase.listing_feed import PAGES_AHEAD, UNREAD_SAID, ListingFeed, ListingHooks

from .support.forges.catalogue import made
from .support.forges.github import GitHubApi

GIT = "git://127.0.0.1:9418"


def _source(text: str) -> Source:
    source = entry_of(text)
    assert isinstance(source, Source)
    return source


def _record(owner: str, i: int, **fields: object) -> Listed:
    return Listed(f"{owner}/r{i}", f"{GIT}/{owner}/r{i}.git", str(i), **fields)  # type: ignore[arg-type]


@dataclass
class FakeLister:
    """Pages of records per source name; ``gates[name]`` holds page N until set; a
    failure after ``fail_after[name]`` pages; a count of what was fetched and closed."""

    pages_of: dict[str, list[Page]]
    fail_after: dict[str, int] = field(default_factory=dict)
    gates: dict[tuple[str, int], trio.Event] = field(default_factory=dict)
    fetched: dict[str, int] = field(default_factory=dict)
    active: set[str] = field(default_factory=set)
    most_active: int = 0
    closed: list[str] = field(default_factory=list)

    def lister_for(self, source: Source, note: WaitNote) -> FakeLister:
        return self

    async def pages(self, source: Source, *, deadline: float) -> AsyncIterator[Page]:
        name = source.name
        self.active.add(name)
        self.most_active = max(self.most_active, len(self.active))
        try:
            for number, page in enumerate(self.pages_of[name]):
                if number == self.fail_after.get(name):
                    raise ListingError(f"{source}: the server said \\x1b[31mno")
                gate = self.gates.get((name, number))
                if gate is not None:
                    await gate.wait()
                await trio.lowlevel.checkpoint()
                self.fetched[name] = self.fetched.get(name, 0) + 1
                yield page
        finally:
            self.active.discard(name)
            self.closed.append(name)


def _pages(owner: str, pages: int, per_page: int = 3) -> list[Page]:
    return [
        Page(tuple(_record(owner, p * per_page + i) for i in range(per_page))) for p in range(pages)
    ]


@dataclass
class Said:
    problems: list[tuple[str, str]] = field(default_factory=list)
    waits: list[tuple[str, str, float]] = field(default_factory=list)
    dropped: list[tuple[str, str]] = field(default_factory=list)

    def hooks(self) -> ListingHooks:
        return ListingHooks(
            waiting=lambda s, why, seconds: self.waits.append((s.text, why, seconds)),
            problem=lambda s, message: self.problems.append((s.text, message)),
            dropped=lambda s, record, why: self.dropped.append((record.full_name, why)),
        )


def _feed(
    entries: list[str | Source],
    lister: FakeLister,
    filters: Filters | None = None,
    said: Said | None = None,
    listings: int = 2,
) -> ListingFeed:
    import re

    chosen = filters or Filters()
    return ListingFeed(
        entries,
        lister_for=lister.lister_for,
        selection_for=lambda: chosen.selection(re.compile),  # short names only
        listings=listings,
        hooks=(said or Said()).hooks(),
    )


def _shown(item: str | Listed) -> str:
    return item if isinstance(item, str) else item.full_name


async def _all(feed: ListingFeed) -> list[str]:
    async with feed.open() as stream:
        return [_shown(item) async for item in stream]


async def test_the_stream_keeps_the_entries_order() -> None:
    lister = FakeLister({"a": _pages("a", 2), "b": _pages("b", 1)})
    entries: list[str | Source] = [
        "https://x.test/one",
        _source("github:org/a"),
        "https://x.test/two",
        _source("github:org/b"),
        "https://x.test/three",
    ]
    got = await _all(_feed(entries, lister))
    assert got == [
        "https://x.test/one",
        *[f"a/r{i}" for i in range(6)],
        "https://x.test/two",
        "b/r0",
        "b/r1",
        "b/r2",
        "https://x.test/three",
    ]


async def test_at_most_k_sources_are_listed_at_once() -> None:
    names = [f"s{i}" for i in range(5)]
    lister = FakeLister({name: _pages(name, 4) for name in names})
    gates = {(name, 1): trio.Event() for name in names}
    lister.gates = gates
    async with _feed([_source(f"github:org/{n}") for n in names], lister).open() as stream:
        first = await stream.receive()
        await trio.testing.wait_all_tasks_blocked()
        assert _shown(first) == "s0/r0"
        assert lister.active == {"s0", "s1"}  # the next in line, listed ahead
        for gate in gates.values():
            gate.set()
        rest = [_shown(item) async for item in stream]
    assert len(rest) == 5 * 12 - 1
    assert lister.most_active == 2


async def test_a_reader_that_stops_reading_stops_the_listings_within_a_bound() -> None:
    lister = FakeLister({"a": _pages("a", 50), "b": _pages("b", 50)})
    entries: list[str | Source] = [_source("github:org/a"), _source("github:org/b")]
    async with _feed(entries, lister).open() as stream:
        await stream.receive()
        await trio.testing.wait_all_tasks_blocked()
        # The page being handed on, the pages held ahead, the one waiting to be sent.
        assert lister.fetched["a"] <= PAGES_AHEAD + 2
        assert lister.fetched["b"] <= PAGES_AHEAD + 1
    assert sorted(lister.closed) == ["a", "b"]  # leaving the block ended both


async def test_the_first_record_comes_before_the_later_pages_are_fetched() -> None:
    lister = FakeLister({"a": _pages("a", 3)})
    lister.gates = {("a", 2): trio.Event()}
    async with _feed([_source("github:org/a")], lister).open() as stream:
        first = await stream.receive()
        await trio.testing.wait_all_tasks_blocked()
        assert _shown(first) == "a/r0"
        assert lister.fetched["a"] == 2  # the third page is still held by the forge
        lister.gates["a", 2].set()
        assert len([item async for item in stream]) == 8


async def test_a_failure_midway_is_one_problem_and_keeps_what_was_listed() -> None:
    lister = FakeLister({"a": _pages("a", 3), "b": _pages("b", 1)}, fail_after={"a": 2})
    said = Said()
    entries: list[str | Source] = [_source("github:org/a"), _source("github:org/b")]
    feed = _feed(entries, lister, said=said)
    got = await _all(feed)
    assert got == [*[f"a/r{i}" for i in range(6)], "b/r0", "b/r1", "b/r2"]
    assert said.problems == [("github:org/a", "github:org/a: the server said \\x1b[31mno")]
    assert feed.problems == 1


async def test_filters_apply_per_source_and_a_full_limit_stops_the_fetching() -> None:
    a = [Page((_record("a", 0, fork=True), _record("a", 1), _record("a", 2)))] * 5
    lister = FakeLister({"a": a, "b": _pages("b", 5)})
    said = Said()
    filters = Filters(skip_forks=True, limit=3)
    entries: list[str | Source] = [_source("github:org/a"), _source("github:org/b")]
    feed = _feed(entries, lister, filters, said)
    got = await _all(feed)
    assert got == ["a/r1", "a/r2", "a/r1", "b/r0", "b/r1", "b/r2"]
    assert lister.fetched == {"a": 2, "b": 1}  # no page past the limit
    assert said.dropped[:2] == [("a/r0", "fork"), ("a/r0", "fork")]
    assert all(why != "limit" for _, why in said.dropped)  # past the limit: not offered
    assert sorted(lister.closed) == ["a", "b"]
    assert (feed.listed, feed.kept) == (5 + 3, 6)


async def test_unread_items_and_a_capped_search_are_problems_a_full_limit_is_not() -> None:
    capped = Page((_record("q", 0),), ("github:search/x: item 2 is not a repository",), True)
    lister = FakeLister({"x": [capped], "y": [capped]})
    said = Said()
    search = _source("github:search/x")
    feed = _feed([search, _source("github:search/y")], lister, Filters(), said)
    await _all(feed)
    assert [message for _, message in said.problems][:2] == [
        "github:search/x: item 2 is not a repository",
        "github:search/x: the forge gives no more results than these, though more matched:"
        " the list is not the whole search (narrow the query)",
    ]
    limited = Said()
    await _all(_feed([search], FakeLister({"x": [capped]}), Filters(limit=1), limited))
    assert [message for _, message in limited.problems] == [
        "github:search/x: item 2 is not a repository"
    ]


async def test_another_error_ends_the_stream_with_it() -> None:
    class Broken(FakeLister):
        async def pages(self, source: Source, *, deadline: float) -> AsyncIterator[Page]:
            yield Page((_record("a", 0),))
            raise RuntimeError("a bug")

    lister = Broken({})
    with pytest.RaisesGroup(pytest.RaisesExc(RuntimeError, match="a bug"), flatten_subgroups=True):
        await _all(_feed([_source("github:org/a"), "https://x.test/after"], lister))


def test_listings_at_once_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        _feed([], FakeLister({}), listings=0)


async def test_github_listed_through_the_composition_its_limit_waited_and_said(
    nursery: trio.Nursery, autojump_clock: trio.testing.MockClock
) -> None:
    server = GitHubApi(
        [*made("acme", 150), *made("zeta", 120, first_id=5000)],
        git_base=GIT,
        orgs=["acme", "zeta"],
        prefix="/api/v3",
        epoch=1_700_000_000,
    )
    await nursery.start(server.serve)
    server.secondary(count=1, retry_after=42)
    said = Said()
    entries: list[str | Source] = [
        _source(f"github:org/acme@{server.base_url}"),
        "https://github.com/pallets/click",
        _source(f"github:user/zeta@{server.base_url}"),
    ]
    feed = listing_feed(entries, filters=Filters(skip_forks=True), hooks=said.hooks())
    async with feed.open() as stream:
        got = [item async for item in stream]
    names = [_shown(item) for item in got]
    assert names[120] == "https://github.com/pallets/click"
    assert len(names) == 120 + 1 + 96  # every 5th a fork
    assert all(isinstance(item, Listed) and item.fork is not True for item in got[:120])
    # Whichever of the two listings (both run at once) asked first was refused, once.
    ((waited, reason, seconds),) = said.waits
    assert waited in {str(entries[0]), str(entries[2])}
    assert (reason, seconds) == ("GitHub's secondary rate limit", 42.0)
    assert said.problems == []
    assert len(server.served_pages()) == len(set(server.served_pages())) == 4


async def test_a_source_no_adapter_lists_is_a_problem_not_a_crash() -> None:
    class Unlisted(FakeLister):
        def lister_for(self, source: Source, note: WaitNote) -> FakeLister:
            raise ListingError(f"{source}: no gitea listing in this version")

    said = Said()
    entries: list[str | Source] = [_source("gitea:org/x@codeberg.org"), "https://x.test/a"]
    feed = _feed(entries, Unlisted({}), said=said)
    assert await _all(feed) == ["https://x.test/a"]
    assert said.problems == [
        ("gitea:org/x@codeberg.org", "gitea:org/x@codeberg.org: no gitea listing in this version")
    ]


def test_a_pattern_re2_refuses_is_refused_when_the_feed_is_made() -> None:
    with pytest.raises(ValueError, match="--match"):
        listing_feed([], filters=Filters(match=("(?=a)",)))


async def test_a_flood_of_unread_items_is_a_few_lines_and_a_count() -> None:
    bad = Page((), tuple(f"github:org/a: item {i} is not a repository" for i in range(1, 1001)))
    lister = FakeLister({"a": [bad, bad, Page((_record("a", 0),))]})
    said = Said()
    feed = _feed([_source("github:org/a")], lister, said=said)
    assert await _all(feed) == ["a/r0"]
    assert len(said.problems) == UNREAD_SAID + 1
    assert said.problems[-1] == (
        "github:org/a",
        f"github:org/a: {2000 - UNREAD_SAID} more items could not be read",
    )
    assert feed.problems == 2000


async def test_a_problem_with_no_hook_is_still_said(caplog: pytest.LogCaptureFixture) -> None:
    lister = FakeLister({"a": _pages("a", 2)}, fail_after={"a": 1})
    import re

    feed = ListingFeed(
        [_source("github:org/a")],
        lister_for=lister.lister_for,
        selection_for=lambda: Filters().selection(re.compile),
    )
    assert len(await _all(feed)) == 3
    assert [record.getMessage() for record in caplog.records] == [
        "github:org/a: the server said \\x1b[31mno"
    ]
    assert caplog.records[0].levelname == "WARNING"


async def _traced_peak(nursery: trio.Nursery, repositories: int) -> int:
    """Bytes at the traced peak while a feed streams a GitHub listing of ``repositories``
    (the loopback server's own included: the same in both)."""
    import tracemalloc

    server = GitHubApi(made("acme", repositories), git_base=GIT, orgs=["acme"], prefix="/api/v3")
    await nursery.start(server.serve)
    feed = listing_feed([_source(f"github:org/acme@{server.base_url}")])
    tracemalloc.start()
    try:
        async with feed.open() as stream:
            async for _ in stream:
                pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_a_feed_holds_no_listed_page_once_it_is_handed_on(nursery: trio.Nursery) -> None:
    """A feed lists each source once: pages kept for a re-list's If-None-Match would be
    held for nothing, up to 64 MiB a listing. Memory stays flat in the listing's length."""
    short = await _traced_peak(nursery, 500)
    long = await _traced_peak(nursery, 2500)
    assert long < short * 1.5, (short, long)

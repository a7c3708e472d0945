"""A batch fed by a listing (issue 45): ``Listed`` lines beside URLs, from an iterable or
an async one, read only as the pipeline has room; the source's failure is the batch's."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import trio
from trio.testing import wait_all_tasks_blocked

from clonegate import AnalyzeUseCase, RepositoryReport, RepositoryStatus, to_json, with_keep_clones
from clonegate import with_max_concurrent_clones as clones
from clonegate._adapters.forges.github import listed_of
from clonegate._domain.listed import Listed
from clonegate._domain.listing import ListingError
from clonegate._domain.report_json import report_from_json
from clonegate._domain.sources import Forge

from .support.fakes import WHEN, FakeAnalyzer, FakeVCS, url


class OneProcess(FakeAnalyzer):
    processes = 1  # the batch's room: 2 x (clones + processes), whatever the machine


def listed(i: int) -> Listed:
    return Listed(
        full_name=f"org/repo{i}",
        clone_url=url(i),
        forge_id=str(1000 + i),
        default_branch="main",
        archived=False,
        fork=i % 2 == 1,
        language="Python",
        topics=("testing",),
        stars=i,
        pushed_at=WHEN,
        forge=Forge.GITHUB,
    )


async def listing(count: int, pulled: list[int]) -> AsyncIterator[Listed]:
    """A listing that notes each record as the batch takes it."""
    for i in range(count):
        await trio.lowlevel.checkpoint()
        pulled.append(i)
        yield listed(i)


async def test_listed_lines_clone_their_url_and_their_report_carries_them(
    tmp_path: Path,
) -> None:
    vcs = FakeVCS(tmp_path)
    uc = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    async with uc.analyze_many(listing(3, [])) as batch:
        reports = {r.index: r async for r in batch}
    assert sorted(vcs.calls) == [url(0), url(1), url(2)]
    for i in range(3):
        assert reports[i].status is RepositoryStatus.OK
        assert reports[i].listed == listed(i)
        assert reports[i].url == url(i)
    # Plain URLs and records side by side, from a plain list: a URL has no listing.
    async with uc.analyze_many([url(5), listed(6)]) as batch:
        mixed = {r.index: r async for r in batch}
    assert mixed[0].listed is None
    assert mixed[1].listed == listed(6)
    assert (await uc.execute(listed(7))).listed == listed(7)


async def test_a_listing_is_read_only_as_the_pipeline_has_room(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    # Clones kept: removing one runs in a thread, which no wait for blocked tasks sees.
    uc = AnalyzeUseCase(clones(1), with_keep_clones(), vcs=vcs, analyzer=OneProcess())
    pulled: list[int] = []
    room = 2 * (1 + 1)
    async with uc.analyze_many(listing(100, pulled)) as batch, trio.open_nursery() as nursery:
        received: list[RepositoryReport] = []

        async def drain() -> None:
            async for report in batch:
                received.append(report)

        nursery.start_soon(drain)
        await wait_all_tasks_blocked()
        assert pulled == list(range(room))  # one clone, the rest queued: no more read
        for done in range(1, 4):
            vcs.release[url(done - 1)].set()
            await wait_all_tasks_blocked()
            assert len(received) == done
            assert pulled == list(range(room + done))  # one reported, one more read
        nursery.cancel_scope.cancel()


async def test_a_failing_listing_ends_the_batch_after_what_it_listed(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    uc = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    failure = ListingError("github:org/x: the API answered 500")

    async def failing() -> AsyncIterator[Listed]:
        for i in range(3):
            yield listed(i)
        raise failure

    received: list[RepositoryReport] = []
    raised: list[BaseException] = []
    async with uc.analyze_many(failing()) as batch, trio.open_nursery() as nursery:

        async def drain() -> None:
            try:
                async for report in batch:
                    received.append(report)
            except ListingError as exc:
                raised.append(exc)

        nursery.start_soon(drain)
        await wait_all_tasks_blocked()
        # The listing has failed; what it listed is still running, nothing raised yet.
        assert (len(vcs.calls), received, raised) == (2, [], [])
        for i in range(3):
            vcs.release[url(i)].set()
    # Every repository listed before the failure reported, then the failure itself.
    assert sorted(r.index for r in received) == [0, 1, 2]
    assert all(r.status is RepositoryStatus.OK for r in received)
    assert raised == [failure]
    assert batch.summary.repositories == 3


async def test_a_failing_plain_iterable_is_raised_as_itself(tmp_path: Path) -> None:
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())

    def lines() -> Iterator[str]:
        yield url(0)
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "a line of the file")

    received: list[RepositoryReport] = []

    async def read_all() -> None:
        async with uc.analyze_many(lines()) as batch:
            async for report in batch:
                received.append(report)

    with pytest.raises(UnicodeDecodeError):
        await read_all()
    assert [r.status for r in received] == [RepositoryStatus.OK]


async def test_a_line_of_another_type_is_the_sources_error(tmp_path: Path) -> None:
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())
    received: list[RepositoryReport] = []

    async def read_all() -> None:
        async with uc.analyze_many([url(0), None, url(1)]) as batch:  # type: ignore[list-item]
            async for report in batch:
                received.append(report)

    with pytest.raises(TypeError, match="a line is a str or a Listed, not a NoneType"):
        await read_all()
    assert [r.index for r in received] == [0]  # nothing after it is read


async def test_a_failure_is_raised_even_if_the_block_ends_without_reading(
    tmp_path: Path,
) -> None:
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())

    async def refused() -> AsyncIterator[Listed]:
        raise ListingError("gitlab:group/x: 401")
        yield listed(0)  # an async generator that never yields

    with pytest.raises(ListingError, match="401"):
        async with uc.analyze_many(refused()):
            await wait_all_tasks_blocked()


async def test_a_listing_left_early_is_closed(tmp_path: Path) -> None:
    uc = AnalyzeUseCase(clones(1), vcs=FakeVCS(tmp_path), analyzer=OneProcess())
    closed = trio.Event()

    async def endless() -> AsyncIterator[Listed]:
        try:
            for i in range(10_000):
                yield listed(i)
        finally:
            closed.set()

    async with uc.analyze_many(endless()) as batch:
        async for _report in batch:
            break
    assert closed.is_set()


async def test_a_repository_listed_twice_is_cloned_once(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    uc = AnalyzeUseCase(vcs=vcs, analyzer=FakeAnalyzer())
    lines: list[str | Listed] = [listed(0), "https://GIT.example/org/repo0", listed(0), listed(1)]
    async with uc.analyze_many(lines) as batch:
        reports = {r.index: r async for r in batch}
    assert sorted(vcs.calls) == [url(0), url(1)]
    assert (reports[1].duplicate_of, reports[1].listed) == (0, None)
    assert (reports[2].duplicate_of, reports[2].listed) == (0, listed(0))


def test_the_json_report_has_the_listing_and_reads_back() -> None:
    report = RepositoryReport(url(3), 0, RepositoryStatus.OK, listed=listed(3))
    document = to_json(report)
    assert document["listed"] == {
        "full_name": "org/repo3",
        "clone_url": url(3),
        "forge_id": "1003",
        "default_branch": "main",
        "archived": False,
        "fork": True,
        "empty": None,
        "disabled": None,
        "mirror": None,
        "size_kib": None,
        "language": "Python",
        "topics": ["testing"],
        "stars": 3,
        "pushed_at": "2024-01-01T00:00:00+00:00",
        "forge": "github",
    }
    assert report_from_json(document) == report
    plain = RepositoryReport(url(3), 0, RepositoryStatus.OK)
    assert "listed" not in to_json(plain)  # a URL's report reads as before
    assert report_from_json(to_json(plain)) == plain
    hostile = {**document, "listed": {**document["listed"], "language": "\x1b[31mred"}}
    with pytest.raises(ValueError, match="control characters"):
        report_from_json(hostile)
    # A stored document edited by hand: never read as something else.
    letters = {**document, "listed": {**document["listed"], "topics": "abc"}}
    with pytest.raises(TypeError, match="topics are a list"):
        report_from_json(letters)
    with pytest.raises(TypeError, match="a listing is an object"):
        report_from_json({**document, "listed": "github"})


def test_a_github_record_says_its_forge() -> None:
    item = {"id": 7, "full_name": "acme/tool", "clone_url": url(7), "pushed_at": None}
    assert listed_of(item).forge is Forge.GITHUB

"""Thrash on record (issue 46, ADR 0014): each stretch of memory thrash is a run event in
the SQLite store, counted in the run's stored summary, shown by `clonegate report`
(JSON and HTML), and counted by a cluster worker (its summary line). Synthetic
readings; MockClock for the stretches, a real SQLite file, a real redis-server."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from clonegate import (
    AnalyzeUseCase,
    MemoryReading,
    with_keep_clones,
    with_max_concurrent_clones,
    with_repository_timeout,
    with_result_store,
)
from clonegate._usecase.thrash import ThrashWatch
from clonegate.cluster import ClusterWorker, RedisWorkQueue, open_redis
from clonegate.store import open_store, open_store_reader
from clonegate_cli._output import thrash_text
from clonegate_cli.app import app

from .support.fakes import FakeAnalyzer, FakeVCS, url
from .support.redis_server import RedisServer

MiB = 1 << 20
GiB = 1 << 30
STALLED = MemoryReading(limit=GiB, available=20 * MiB, pressure=0.8)
CALM = MemoryReading(limit=GiB, available=GiB, pressure=0.0)
SAFETY_NET = 60  # seconds: a bound for a hung test, never the assertion


class CountedReadings:
    """Stalled while ``stalled``, calm otherwise. Each read first looks at ``counted()``
    (the stretches counted so far): the watch reads, then observes, then sleeps, so a
    read sees what every earlier reading counted; ``reached[n]`` is set once n were
    counted."""

    def __init__(self) -> None:
        self.counted: Callable[[], int] = lambda: 0
        self.reached: defaultdict[int, trio.Event] = defaultdict(trio.Event)
        self.stalled = True

    def read(self) -> MemoryReading:
        for n in range(1, self.counted() + 1):
            self.reached[n].set()
        return STALLED if self.stalled else CALM


async def thrash_twice(uc: AnalyzeUseCase, vcs: FakeVCS, sensor: CountedReadings) -> list[str]:
    """Four clones hang under pressure until a stretch is counted, one ends (progress),
    the three left hang until another is; the statuses of the reports. Waits on what
    was counted, not on time: the store's threads let the autojump clock run."""
    urls = [url(i) for i in range(4)]
    sensor.counted = lambda: uc.memory_thrash
    async with uc.analyze_many(urls) as batch:
        await sensor.reached[1].wait()
        # Calm while a report is written: the store's threads let the clock run on,
        # and a stalled reading a second would count stretches the test did not make.
        sensor.stalled = False
        vcs.release[urls[0]].set()
        first = await batch.__anext__()
        sensor.stalled = True
        await sensor.reached[2].wait()
        sensor.stalled = False
        for u in urls[1:]:
            vcs.release[u].set()
        statuses: list[str] = [first.status, *[report.status async for report in batch]]
    assert batch.summary.memory_thrash == 2
    return statuses


def stored_run(tmp_path: Path) -> Path:
    """A real SQLite file holding one run that thrashed twice (on a MockClock)."""
    db = tmp_path / "runs.db"

    async def run() -> None:
        vcs, sensor = FakeVCS(tmp_path, blocking=True), CountedReadings()
        async with open_store(db) as store:
            uc = AnalyzeUseCase(
                with_max_concurrent_clones(4),
                # The store's threads let the autojump clock run on (a reading a second):
                # a loaded machine ran it past the default 900 s while one wrote.
                with_repository_timeout(1e9),
                with_keep_clones(),  # removing runs in a thread, which autojump would skip
                with_result_store(store),
                vcs=vcs,
                analyzer=FakeAnalyzer(),
                memory_sensor=sensor,
            )
            assert await thrash_twice(uc, vcs, sensor) == ["ok"] * 4
            assert uc.memory_thrash == 2

    trio.run(run, clock=trio.testing.MockClock(autojump_threshold=0))
    return db


def test_each_stretch_is_a_run_event_and_counted_in_the_stored_summary(tmp_path: Path) -> None:
    db = stored_run(tmp_path)

    async def read() -> None:
        async with open_store_reader(db) as reader:
            (run_id,) = await reader.run_ids()
            found = await reader.run_report(run_id)
        assert found is not None
        thrashes = [e for e in found.events if e.kind == "memory_thrash"]
        # One event a stretch, when it was counted: 15 readings without progress each.
        assert [e.value for e in thrashes] == [4, 3]  # the clones that made none
        assert "for 15 s some task stalled on memory 80% of the time" in thrashes[0].detail
        assert "none of the 4 running clones made progress" in thrashes[0].detail
        assert "none of the 3 running clones made progress" in thrashes[1].detail
        # Another stretch: 15 readings later on the run's MockClock (virtual time).
        assert (thrashes[1].at - thrashes[0].at).total_seconds() >= 15
        assert found.run.summary is not None
        assert found.run.summary["memory_thrash"] == 2

    trio.run(read)


def test_report_shows_the_thrash_events_in_json_and_html(runner: CliRunner, tmp_path: Path) -> None:
    db = stored_run(tmp_path)
    shown = runner.invoke(app, ["report", "--db", str(db), "--format", "json"])
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.stdout)
    kinds = [e["kind"] for e in document["events"]]
    assert kinds.count("memory_thrash") == 2
    assert document["run"]["summary"]["memory_thrash"] == 2
    page = tmp_path / "report.html"
    drawn = runner.invoke(app, ["report", "--db", str(db), "-o", str(page)])
    assert drawn.exit_code == 0, drawn.output
    text = page.read_text()
    assert text.count('class="memory-thrash"') == 2  # a mark each, figures in its title
    assert "memory thrashed: for 15 s some task stalled" in text
    assert re.search(r'data-count="memory_thrash">2<', text)
    # Not a limit the run began with.
    assert "memory_thrash at start" not in text


def test_a_run_without_thrash_stores_a_count_of_none(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"

    async def run() -> None:
        async with open_store(db) as store:
            uc = AnalyzeUseCase(
                with_result_store(store), vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer()
            )
            async with uc.analyze_many([url(1)]) as batch:
                assert [r.status async for r in batch] == ["ok"]
        async with open_store_reader(db) as reader:
            (found,) = await reader.runs(1)
        assert found.summary is not None
        assert found.summary["memory_thrash"] == 0  # counted: none (an older run: no key)

    trio.run(run)


def test_a_cluster_worker_counts_the_thrash_in_its_runs(
    tmp_path: Path, own_redis: RedisServer, monkeypatch: pytest.MonkeyPatch, runner: CliRunner
) -> None:
    """The worker's summary line counts its session's stretches; the run whose jobs it
    ran through one counts it too, in Redis: `clonegate results` says so in its summary
    and `clonegate status` on the run's line."""
    # Short readings on the real clock (Redis answers in real time): no assertion on
    # time; the clones hang until the sensor was read past a whole stretch.
    monkeypatch.setattr(ThrashWatch, "INTERVAL", 0.01)
    monkeypatch.setattr(ThrashWatch, "READINGS", 3)
    vcs = FakeVCS(tmp_path, blocking=True)
    sensor = CountedReadings()
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(2), vcs=vcs, analyzer=FakeAnalyzer(), memory_sensor=sensor
    )
    sensor.counted = lambda: uc.memory_thrash
    urls = [url(i) for i in range(2)]

    async def run() -> ClusterWorker:
        with trio.fail_after(SAFETY_NET):
            async with open_redis(own_redis.url) as redis:
                queue = RedisWorkQueue(redis, consumer="thrash-w")
                await queue.submit(urls, run="thrash-run")
                worker = ClusterWorker(queue, uc)
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(worker.run)
                    await sensor.reached[1].wait()
                    sensor.stalled = False
                    for u in [*urls, url(9)]:
                        vcs.release[u].set()
                    async for _ in queue.results("thrash-run", follow=True):
                        pass
                    await queue.submit([url(9)], run="calm-run")  # after it: not counted
                    async for _ in queue.results("calm-run", follow=True):
                        pass
                    nursery.cancel_scope.cancel()
                thrashed, calm = await queue.status("thrash-run"), await queue.status("calm-run")
        assert thrashed is not None
        assert calm is not None
        assert (thrashed.memory_thrash, calm.memory_thrash) == (1, 0)
        return worker

    worker = trio.run(run)
    assert worker.totals.reported == 3
    assert worker.totals.memory_thrash == 1
    assert thrash_text(worker.totals.memory_thrash) == ", 1 memory thrash"
    assert thrash_text(0) == ""
    env = {"CLONEGATE_REDIS_URL": own_redis.url}
    shown = runner.invoke(app, ["results", "thrash-run", "--format", "json"], env=env)
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["summary"]["memory_thrash"] == 1
    line = runner.invoke(app, ["results", "thrash-run"], env=env).stderr
    assert "2 repositories: 2 ok" in line
    assert ", 1 memory thrash" in line
    calm = runner.invoke(app, ["results", "calm-run", "--format", "json"], env=env)
    assert "memory_thrash" not in json.loads(calm.stdout)["summary"]
    status = runner.invoke(app, ["status", "thrash-run"], env=env)
    assert status.exit_code == 0, status.output
    assert "2 done (ok 2), 1 memory thrash" in status.stdout.splitlines()[0]

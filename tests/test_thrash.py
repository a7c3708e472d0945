"""No silent thrash (issue 46, ADR 0014): memory under sustained pressure while no
running clone makes progress is said once, with its figures, and counted in the
summary; with a budget the controller shrinks on the same readings. Synthetic readings
on trio's MockClock: a reading a second, no sleep to synchronize."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trio
import trio.testing

from clonegate import (
    AnalyzeUseCase,
    BatchSummary,
    ClonedSource,
    MemoryReading,
    to_json,
    with_max_concurrent_clones,
    with_memory_budget,
)
from clonegate._adapters.memory import SystemMemorySensor
from clonegate._usecase.thrash import Thrash, ThrashWatch
from clonegate_cli._output import summary_line

from .support.fakes import FakeAnalyzer, FakeVCS, Readings, url

MiB = 1 << 20
GiB = 1 << 30

CALM = MemoryReading(limit=GiB, available=GiB // 2, pressure=0.0)
STALLED = MemoryReading(limit=GiB, available=20 * MiB, pressure=0.8)


def watch(running: int = 4, readings: int = 3) -> tuple[ThrashWatch, list[Thrash], list[int]]:
    said: list[Thrash] = []
    progress = [0]
    made = ThrashWatch(
        lambda: running, lambda: progress[0], said.append, readings=readings, interval=1.0
    )
    return made, said, progress


# The watch on its own ------------------------------------------------------------------


def test_pressure_without_progress_is_said_once_with_its_figures() -> None:
    made, said, _ = watch()
    assert [made.observe(STALLED) for _ in range(2)] == [None, None]
    assert said == []
    thrash = made.observe(STALLED)
    assert said == [thrash]
    assert thrash is not None
    assert made.episodes == 1
    text = thrash.message()
    assert "for 3 s some task stalled on memory 80% of the time" in text
    assert "20 MiB available of 1024 MiB" in text
    assert "none of the 4 running clones made progress" in text
    assert "--memory-budget auto" in text
    for _ in range(10):  # the same stretch goes on: counted once, said once
        made.observe(STALLED)
    assert made.episodes == 1
    assert len(said) == 1


def test_progress_ends_a_stretch_and_a_later_one_is_counted_not_said() -> None:
    made, said, progress = watch()
    made.observe(STALLED)
    made.observe(STALLED)
    progress[0] += 1  # bytes received, say: the clones move, slowly
    made.observe(STALLED)  # the reading that sees it: the stretch ends
    made.observe(STALLED)
    made.observe(STALLED)
    assert made.episodes == 0
    assert said == []
    made.observe(STALLED)
    assert made.episodes == 1
    for _ in range(5):  # the same stretch: counted once
        made.observe(STALLED)
    assert made.episodes == 1
    progress[0] += 1
    for _ in range(4):
        made.observe(STALLED)
    assert made.episodes == 2
    assert len(said) == 1  # said once a run, counted each time


def test_the_stalls_are_averaged_over_the_stretch() -> None:
    made, said, _ = watch()
    # Measured while -j 4 thrashed: 21-48% at each reading; a dip ends nothing.
    for stalled in (0.1, 0.1, 0.3):  # 17% on average: clones that wait, not thrash
        made.observe(MemoryReading(GiB, 10 * MiB, stalled))
    assert said == []
    made.observe(MemoryReading(GiB, 10 * MiB, 0.5))  # the last three: 30%
    assert len(said) == 1
    assert "stalled on memory 30% of the time" in said[0].message()


def test_no_clone_running_is_no_thrash() -> None:
    made, said, _ = watch(running=0)
    for _ in range(10):
        made.observe(STALLED)
    assert made.episodes == 0
    assert said == []


def test_without_psi_a_failure_count_rising_at_every_reading_is_thrash() -> None:
    made, said, _ = watch()
    # With PSI, the stalls decide: a cgroup at its limit reclaims its page cache
    # cheaply, its failure count rising all the while.
    for count in (100, 150, 210, 260, 300):
        made.observe(MemoryReading(GiB, 10 * MiB, 0.02, failures=count))
    assert said == []
    made, said, _ = watch()
    for count in (100, 100, 150, 210):  # no PSI; once not risen: no sign yet
        made.observe(MemoryReading(GiB, 10 * MiB, None, failures=count))
    assert said == []
    made.observe(MemoryReading(GiB, 10 * MiB, None, failures=260))  # risen at 3 in a row
    assert len(said) == 1
    text = said[0].message()
    assert "for 3 s the cgroup hit its memory limit 160 times" in text
    assert "stalled" not in text


def test_a_budget_is_named_with_its_size() -> None:
    thrash = Thrash(15, 0.6, None, 5 * MiB, GiB, 2, budget=(96, 130))
    text = thrash.message()
    assert "the memory budget admits 96 of 130 MiB now" in text
    assert "--memory-budget" not in text


# Through the use case ------------------------------------------------------------------


class TrickleVCS(FakeVCS):
    """Each clone receives a little every second for a minute: slow, never stalled."""

    async def clone(self, url: str, *args: object, **kwargs: object) -> ClonedSource:
        on_progress = kwargs.get("on_progress")
        for second in range(60):
            await trio.sleep(1)
            if callable(on_progress):
                on_progress(second * 1024)
        return await super().clone(url, *args, **kwargs)  # type: ignore[arg-type]


async def test_a_stalled_batch_without_budget_warns_once_and_counts_it(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    sensor = Readings(STALLED)
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(4), vcs=vcs, analyzer=FakeAnalyzer(), memory_sensor=sensor
    )
    urls = [url(i) for i in range(4)]
    with caplog.at_level(logging.WARNING, logger="clonegate"):
        async with uc.analyze_many(urls) as batch:
            await trio.sleep(60)  # a minute of stalls while the four clones hang
            assert sensor.reads >= 15
            for u in urls:
                vcs.release[u].set()
            reports = [report async for report in batch]
    assert [r.status for r in reports] == ["ok"] * 4
    warnings = [r.getMessage() for r in caplog.records if "memory thrashes" in r.getMessage()]
    assert len(warnings) == 1
    assert "none of the 4 running clones made progress" in warnings[0]
    assert "try --memory-budget auto" in warnings[0]
    assert batch.summary.memory_thrash == 1


async def test_clones_that_trickle_under_pressure_are_no_thrash(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(4),
        vcs=TrickleVCS(tmp_path),
        analyzer=FakeAnalyzer(),
        memory_sensor=Readings(STALLED),
    )
    with caplog.at_level(logging.WARNING, logger="clonegate"):
        async with uc.analyze_many([url(i) for i in range(4)]) as batch:
            reports = [report async for report in batch]
    assert [r.status for r in reports] == ["ok"] * 4
    assert not [r for r in caplog.records if "memory thrashes" in r.getMessage()]
    assert batch.summary.memory_thrash == 0


async def test_with_a_budget_the_controller_shrinks_on_the_thrash_readings(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    vcs = FakeVCS(tmp_path, blocking=True)
    vcs.max_memory = 50 * MiB  # nothing learned yet: each clone reserves its cap, 50 MiB
    uc = AnalyzeUseCase(
        with_max_concurrent_clones(4),
        with_memory_budget("400M"),
        vcs=vcs,
        analyzer=FakeAnalyzer(),
        memory_sensor=Readings(STALLED),
    )
    urls = [url(i) for i in range(4)]
    with caplog.at_level(logging.WARNING, logger="clonegate"):
        async with uc.analyze_many(urls) as batch:
            await trio.sleep(60)
            shrunk = uc.clone_gate_statistics().memory_size
            for u in urls:
                vcs.release[u].set()
            reports = [report async for report in batch]
    assert [r.status for r in reports] == ["ok"] * 4
    # The budget's answer to the same readings: it shrank, down to the heaviest clone.
    assert shrunk == 50
    (warning,) = [r.getMessage() for r in caplog.records if "memory thrashes" in r.getMessage()]
    assert "none of the 4 running clones made progress" in warning
    assert "--memory-budget" not in warning
    # Shrunk at readings 1, 5, 9 and 13 (three of cooldown after each): 400 x 0.75^4.
    assert "admits 126 of 400 MiB now" in warning
    assert batch.summary.memory_thrash == 1


async def test_a_sensor_that_fails_ends_the_readings_not_the_run(
    tmp_path: Path, autojump_clock: trio.testing.MockClock, caplog: pytest.LogCaptureFixture
) -> None:
    class Gone:
        def read(self) -> MemoryReading:
            raise OSError("the cgroup is gone")

    uc = AnalyzeUseCase(
        vcs=FakeVCS(tmp_path, delay=5), analyzer=FakeAnalyzer(), memory_sensor=Gone()
    )
    with caplog.at_level(logging.WARNING, logger="clonegate"):
        async with uc.analyze_many([url(1)]) as batch:
            reports = [report async for report in batch]
    assert [r.status for r in reports] == ["ok"]
    assert any("memory readings stopped" in r.getMessage() for r in caplog.records)


# What the summary says -----------------------------------------------------------------


def test_the_summary_counts_thrash_in_json_and_in_its_line() -> None:
    calm, thrashed = BatchSummary(repositories=4), BatchSummary(repositories=4, memory_thrash=2)
    assert "memory_thrash" not in to_json(calm)
    assert to_json(thrashed)["memory_thrash"] == 2
    assert "thrash" not in summary_line(calm)
    assert ", 2 memory thrashes;" in summary_line(thrashed)


# The sensor's failure count ------------------------------------------------------------


def fake_proc(root: Path, mount: str, membership: str) -> Path:
    proc = root / "proc"
    (proc / "self").mkdir(parents=True)
    (proc / "meminfo").write_text("MemTotal: 8388608 kB\nMemAvailable: 4194304 kB\n")
    (proc / "self" / "mountinfo").write_text(mount + "\n")
    (proc / "self" / "cgroup").write_text(membership + "\n")
    return proc


def test_the_sensor_reads_v1_failcnt_and_memsw_failcnt(tmp_path: Path) -> None:
    group = tmp_path / "memory" / "run"
    group.mkdir(parents=True)
    (group / "memory.stat").write_text(
        f"hierarchical_memory_limit {200 * MiB}\ntotal_inactive_file {10 * MiB}\n"
    )
    (group / "memory.usage_in_bytes").write_text(str(150 * MiB))
    (group / "memory.failcnt").write_text("2\n")
    # With a memory+swap limit, its counter is charged first and counts the failures.
    (group / "memory.memsw.failcnt").write_text("40\n")
    mount = f"30 25 0:26 / {tmp_path / 'memory'} rw - cgroup cgroup rw,memory"
    proc = fake_proc(tmp_path, mount, "4:memory:/run")
    reading = SystemMemorySensor(proc).read()
    assert (reading.limit, reading.available, reading.failures) == (200 * MiB, 60 * MiB, 42)


def test_the_sensor_reads_v2_max_events(tmp_path: Path) -> None:
    group = tmp_path / "unified" / "run"
    group.mkdir(parents=True)
    (group / "memory.max").write_text(str(200 * MiB))
    (group / "memory.current").write_text(str(150 * MiB))
    (group / "memory.stat").write_text(f"inactive_file {10 * MiB}\n")
    (group / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 0\noom_kill 0\n")
    mount = f"30 25 0:26 / {tmp_path / 'unified'} rw - cgroup2 cgroup2 rw"
    proc = fake_proc(tmp_path, mount, "0::/run")
    reading = SystemMemorySensor(proc).read()
    assert (reading.limit, reading.failures) == (200 * MiB, 7)


def test_no_limiting_cgroup_no_failure_count(tmp_path: Path) -> None:
    proc = fake_proc(tmp_path, "30 25 0:26 / /nowhere rw - ext4 /dev/x rw", "0::/")
    assert SystemMemorySensor(proc).read().failures is None

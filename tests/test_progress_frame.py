"""The live display's parts on their own (ADR 0021): where each repository is, the slot
rows, and a frame as text; and the table's tests per status. What a person sees on a
terminal: test_progress_display.py."""

from __future__ import annotations

import io
import re

from rich.console import Console

from clonegate import (
    AnalysisTotals,
    BatchSummary,
    CloneGateStatistics,
    Event,
    EventKind,
    RepositoryReport,
    RepositoryStatus,
)
from clonegate._usecase.gate import GateEntry
from clonegate_cli._frame import Figures, SlotRows, duration, frame, size
from clonegate_cli._output import summary_line, write_table
from clonegate_cli._tally import State, Tally


def _events(tally: Tally, *steps: tuple[EventKind, int, str]) -> None:
    for kind, index, status in steps:
        tally.on_event(Event(kind, f"https://example.com/r{index}.git", index, status=status))


def test_every_repository_is_in_one_state_through_a_retry() -> None:
    tally = Tally(total=3)
    assert tally.counts()[State.QUEUED] == 3
    _events(
        tally,
        (EventKind.QUEUED, 0, ""),
        (EventKind.CLONING, 0, ""),
        (EventKind.RETRY, 0, "rate_limited"),
        (EventKind.QUEUED, 1, ""),
        (EventKind.CLONING, 1, ""),
        (EventKind.STUCK, 1, ""),  # moves nothing
        (EventKind.BUDGET, -1, "shrink"),  # names no repository
    )
    assert tally.counts() == {
        State.QUEUED: 1,
        State.RETRY: 1,
        State.CLONING: 1,
        State.ANALYZING: 0,
        State.DONE: 0,
        State.FAILED: 0,
    }
    _events(
        tally,
        (EventKind.CLONED, 1, ""),
        (EventKind.ANALYZING, 1, ""),
        (EventKind.DONE, 1, "ok"),
        (EventKind.QUEUED, 0, ""),
        (EventKind.CLONING, 0, ""),
        (EventKind.DONE, 0, "failed"),
        (EventKind.DONE, 2, "ok"),  # a duplicate, or reused: no clone, only its report
    )
    counts = tally.counts()
    assert (counts[State.DONE], counts[State.FAILED], tally.finished) == (2, 1, 3)
    assert sum(counts.values()) == 3


def test_without_a_total_only_the_waiting_count_as_queued() -> None:
    tally = Tally(total=None)
    _events(tally, (EventKind.QUEUED, 0, ""), (EventKind.QUEUED, 1, ""))
    assert tally.counts()[State.QUEUED] == 2
    text = _drawn(Figures(None, tally.counts(), 1.0), _stats(size=2), [None, None])
    assert " 0/? · 0 failed · rate ? · ETA ?" in text


def test_a_clone_keeps_its_row() -> None:
    rows = SlotRows()
    assert rows.assign(3, [7]) == [7, None, None]
    assert rows.assign(3, [7, 8, 9]) == [7, 8, 9]
    assert rows.assign(3, [9, 10]) == [10, None, 9]  # 7 and 8 ended; 10 takes row 1
    assert rows.assign(1, [9]) == [None, None, 9]  # the limit shrank: 9 stays on row 3
    assert rows.assign(1, []) == [None]


def _stats(size: int, *active: GateEntry, memory: bool = False) -> CloneGateStatistics:
    return CloneGateStatistics(
        size=size,
        held=len(active),
        queued=(),
        active=active,
        acquired=len(active),
        released=0,
        done=0,
        failed=0,
        memory_budget=1024 if memory else None,
        memory_size=512 if memory else None,
        memory_held=sum(e.memory for e in active),
        memory_estimate=200 if memory else None,
    )


def _drawn(figures: Figures, stats: CloneGateStatistics, rows: list[int | None]) -> str:
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(frame(figures, stats, rows, (80, 40)))
    return out.getvalue()


def test_a_frame_shows_a_servers_text_as_text() -> None:
    hostile = "https://example.com/[bold]x\x1b[2J.git"
    entry = GateEntry(hostile, 0, 1, 3.25, memory=200)
    counts = dict.fromkeys(State, 0) | {State.CLONING: 1}
    text = _drawn(Figures(1, counts, 2.0), _stats(2, entry, memory=True), [0, None])
    assert "\x1b" not in text
    assert "https://example.com/[bold]x\\x1b[2J.git" in text
    assert "memory 200/512 MiB held (budget 1024 MiB)" in text
    assert "slot 2  idle" in text


def test_rows_past_the_terminal_are_counted() -> None:
    entries = [GateEntry(f"https://example.com/r{i}.git", i, 1, 1.0) for i in range(50)]
    counts = dict.fromkeys(State, 0) | {State.CLONING: 50}
    out = io.StringIO()
    figures = Figures(50, counts, 2.0)
    drawn = frame(figures, _stats(64, *entries), [*range(50), *[None] * 14], (80, 12))
    Console(file=out, width=80, color_system=None).print(drawn)
    lines = out.getvalue().splitlines()
    assert len(lines) <= 12
    assert lines[-1] == "… 57 more slots, 43 cloning"


def test_durations() -> None:
    assert [duration(s) for s in (0.04, 59.94, 65, 3723)] == ["0.0 s", "59.9 s", "1:05", "1:02:03"]


def test_the_table_counts_tests_that_would_not_simply_run() -> None:
    """Issue 44: skipped, todo, focused and xfail tests, per repository and in all."""
    statuses = {"active": 5, "skipped": 2, "todo": 0, "focused": 0, "xfail": 1}
    analysis = AnalysisTotals(1, 8, {"pytest": 8}, {"python": 8}, statuses, 0, 3, "v")
    reports = [
        RepositoryReport(f"https://example.com/r{i}.git", i, RepositoryStatus.OK, analysis=analysis)
        for i in range(2)
    ]
    summary = BatchSummary(repositories=2, ok=2, test_files=2, tests=16, elapsed=1.0)
    out = io.StringIO()
    write_table(out, reports, summary, width=120)
    text = out.getvalue()
    assert text.count("8 tests in 1 file, pytest 8 · 2 skipped, 1 xfail") == 2
    assert "16 tests in 2 files (4 skipped, 2 xfail); 1.0 s" in text
    assert "todo" not in text  # none: not shown


def test_without_tests_aside_the_lines_stay_as_they_were() -> None:
    summary = BatchSummary(repositories=1, ok=1, test_files=1, tests=3, elapsed=1.0)
    assert summary_line(summary, {"active": 3, "skipped": 0}) == summary_line(summary)
    assert "3 tests in 1 file; 1.0 s" in summary_line(summary)


def test_a_clone_keeps_its_bytes_received_while_it_clones() -> None:
    tally = Tally(total=2)
    received = Event(EventKind.RECEIVED, "https://example.com/r0.git", 0, received=300_000)
    tally.on_event(received)  # not cloning yet: nothing kept
    assert tally.received == {}
    _events(tally, (EventKind.QUEUED, 0, ""), (EventKind.CLONING, 0, ""))
    tally.on_event(received)
    assert tally.received == {0: 300_000}
    assert tally.counts()[State.CLONING] == 1  # a report moves no repository
    _events(tally, (EventKind.RETRY, 0, "rate_limited"))  # the attempt's figure ends
    assert tally.received == {}
    _events(tally, (EventKind.CLONING, 0, ""))
    tally.on_event(received)
    _events(tally, (EventKind.CLONED, 0, ""))
    tally.on_event(received)  # late: the clone is over
    assert tally.received == {}


def test_a_slot_shows_the_bytes_its_clone_received() -> None:
    hostile = "https://example.com/[bold]x\x1b[2J.git"
    entries = (GateEntry(hostile, 0, 1, 3.25, memory=200), GateEntry("https://e.com/b", 1, 1, 1.0))
    counts = dict.fromkeys(State, 0) | {State.CLONING: 2}
    figures = Figures(2, counts, 2.0, received={0: 12_900_000})
    lines = _drawn(figures, _stats(3, *entries, memory=True), [0, 1, None]).splitlines()
    slots = [line for line in lines if line.startswith("slot ")]
    assert slots[0].endswith("3.2 s  12.3 MiB received  200 MiB"), slots
    assert "cloning  https://example.com/[bold]x" in slots[0]  # text: no markup read
    assert "\x1b" not in "".join(lines)
    assert re.search(r"1\.0 s +\d+ MiB$", slots[1]), slots  # not said yet: blank
    assert slots[2] == "slot 3  idle"
    # Without a figure for any slot, the rows are as they were.
    plain = _drawn(Figures(2, counts, 2.0), _stats(3, *entries, memory=True), [0, 1, None])
    assert "received" not in plain


def test_sizes() -> None:
    assert [size(n) for n in (0, 1023, 1024, 262_144, 12_900_000, 5 << 30)] == [
        "0 bytes",
        "1023 bytes",
        "1.0 KiB",
        "256.0 KiB",
        "12.3 MiB",
        "5.0 GiB",
    ]

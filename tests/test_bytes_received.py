"""A clone's bytes received (issue 44): told by its worker now and then, passed on by
the use case as RECEIVED events, never more often than the bounds say, whatever a
server or a worker does."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

import trio
from trio.testing import MockClock

from clonegate import AnalyzeUseCase, Event, EventKind, with_event_hook
from clonegate._adapters.git.dulwich_vcs import DulwichVCS
from clonegate._adapters.git.pack_intake import NOTE_EVERY_BYTES, ReceivedNotes
from clonegate._adapters.git.settings import CloneSettings
from clonegate._usecase.clone_step import RECEIVED_EVERY, throttled

from .support.fakes import FakeAnalyzer, FakeVCS, collect, url
from .support.repos import make_repo
from .support.servers import http_git_server

PACK = 20 << 20  # a 20 MiB pack: at most 80 notes of 256 KiB, and 81 of stalls


def _fed(notes: ReceivedNotes, total: int, piece: int) -> None:
    received = 0
    while received < total:
        received += min(piece, total - received)
        notes(received)


def test_notes_wait_for_256_kib_and_a_quarter_second() -> None:
    told: list[int] = []
    now = [0.0]
    # A server as fast as can be: every piece a second after the last, 8 KiB each.

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    _fed(ReceivedNotes(told.append, clock), PACK, 8 << 10)
    assert len(told) == PACK // NOTE_EVERY_BYTES == 80
    assert told == sorted(told)
    assert told[0] == NOTE_EVERY_BYTES
    # A clock that does not move: one note for the whole pack, the first.
    told.clear()
    _fed(ReceivedNotes(told.append, lambda: 5.0), PACK, 1 << 10)
    assert told == [NOTE_EVERY_BYTES]
    # Pieces of one byte (a server that trickles) count as bytes, not as pieces.
    told.clear()
    _fed(ReceivedNotes(told.append, clock), 1 << 20, 1)
    assert len(told) == 4


def test_a_stall_sends_what_came_since_the_last_note_once() -> None:
    told: list[int] = []
    now = [0.0]
    notes = ReceivedNotes(told.append, lambda: now[0])
    _fed(notes, 1 << 20, 64 << 10)  # 1 MiB in no time: the first 256 KiB told
    assert told == [NOTE_EVERY_BYTES]
    notes.flush()  # a watchdog tick: bytes came since the last tick, no stall
    now[0] = 0.1
    notes.flush()  # a stall, but the last note is not 0.25 s old
    assert told == [NOTE_EVERY_BYTES]
    now[0] = 0.3
    notes.flush()
    assert told == [NOTE_EVERY_BYTES, 1 << 20]
    for n in range(100):  # the stall goes on: nothing new, nothing told
        now[0] = 1.0 + n
        notes.flush()
    assert told == [NOTE_EVERY_BYTES, 1 << 20]
    # Data again, then another stall: not told before 256 KiB more came (a note of
    # its own), so that stalls cannot make more notes than bytes do.
    notes((1 << 20) + 1000)
    now[0] += 1.0
    notes.flush()
    notes.flush()
    assert told == [NOTE_EVERY_BYTES, 1 << 20]
    notes((1 << 20) + NOTE_EVERY_BYTES)
    now[0] += 1.0
    notes((1 << 20) + NOTE_EVERY_BYTES + 5)
    notes.flush()
    notes.flush()  # a note of 256 KiB more came: this stall is told
    assert told == [NOTE_EVERY_BYTES, 1 << 20, (1 << 20) + NOTE_EVERY_BYTES, told[-1]]
    assert told[-1] == (1 << 20) + NOTE_EVERY_BYTES + 5
    # A server trickling a byte between ticks never stalls a tick: no flush note.
    before = list(told)
    for n in range(100):
        notes(told[-1] + n + 1)
        now[0] += 1.0
        notes.flush()
    assert told == before


async def test_a_20_mib_pack_sends_a_bounded_number_of_notes(tmp_path: Path) -> None:
    """A real clone from a server on 127.0.0.1: each note a figure the worker had,
    increasing, within the pack; as many as the pack's 256 KiB at most."""
    make_repo(tmp_path, "huge", commits=1, other_branches=(), files={"blob": os.urandom(PACK)})
    told: list[int] = []
    with http_git_server(tmp_path) as server:
        vcs = DulwichVCS(CloneSettings(work_dir=tmp_path / "work"))
        (tmp_path / "work").mkdir()
        source = await vcs.clone(server.url("huge"), on_progress=told.append)
        await source.aclose()
    # One per 256 KiB, and one per stall between two of those: on a loaded machine
    # the transfer stalls now and then.
    assert 1 <= len(told) <= 2 * (PACK // NOTE_EVERY_BYTES) + 1
    assert told == sorted(set(told))
    assert told[0] > 0  # at 256 KiB, or sooner at a stall (the server packing)
    assert told[-1] <= PACK + (1 << 20)


async def test_a_workers_notes_are_believed_only_as_byte_counts() -> None:
    """A worker a hostile repository took over can send anything as a note: only a
    byte count within the envelope's limit reaches the caller."""
    told: list[int] = []
    vcs = DulwichVCS(CloneSettings(max_repo_size=1 << 30))
    heard = vcs._progress_to(told.append)
    for note in ("1000", -5, 2.5, True, None, [1], 1 << 40, 300_000):
        heard(note)
    assert told == [1 << 30, 300_000]
    vcs._progress_to(None)(300_000)  # a caller that asked for none hears none


async def test_the_hook_hears_the_bytes_received(tmp_path: Path) -> None:
    vcs = FakeVCS(tmp_path)
    vcs.received[url(0)] = [300_000]
    events: list[Event] = []
    uc = AnalyzeUseCase(with_event_hook(events.append), vcs=vcs, analyzer=FakeAnalyzer())
    await collect(uc, [url(0)])
    received = [e for e in events if e.kind is EventKind.RECEIVED]
    assert [(e.url, e.index, e.received) for e in received] == [(url(0), 0, 300_000)]
    kinds = [e.kind for e in events]
    assert kinds.index(EventKind.CLONING) < kinds.index(EventKind.RECEIVED)
    assert kinds.index(EventKind.RECEIVED) < kinds.index(EventKind.CLONED)


async def test_a_flood_of_reports_makes_one_event_a_quarter_second(tmp_path: Path) -> None:
    """However often a VCS reports (a worker that ignores its bound), the hook hears
    at most one figure per 0.25 s of the run's clock per clone: here, at one instant,
    the first."""
    vcs = FakeVCS(tmp_path)
    vcs.received = {url(i): list(range(1, 100_001)) for i in range(2)}
    events: list[Event] = []
    uc = AnalyzeUseCase(with_event_hook(events.append), vcs=vcs, analyzer=FakeAnalyzer())
    await collect(uc, [url(0), url(1)])
    received = sorted((e.index, e.received) for e in events if e.kind is EventKind.RECEIVED)
    assert received == [(0, 1), (1, 1)]


async def test_a_vcs_that_does_not_report_is_asked_for_nothing(tmp_path: Path) -> None:
    class Silent(FakeVCS):
        reports_progress = False

    vcs = Silent(tmp_path)
    vcs.received[url(0)] = [300_000]
    events: list[Event] = []
    uc = AnalyzeUseCase(with_event_hook(events.append), vcs=vcs, analyzer=FakeAnalyzer())
    reports = await collect(uc, [url(0)])
    assert [r.status for r in reports] == ["ok"]
    assert not [e for e in events if e.kind is EventKind.RECEIVED]


def test_reports_reach_the_hook_a_quarter_second_apart() -> None:
    """On the run's clock: a report every 0.1 s, and one of every three passes on."""
    emitted: list[tuple[float, int]] = []

    async def main() -> None:
        heard = throttled(lambda received: emitted.append((trio.current_time(), received)))
        for n in range(10):
            heard(n)
            await trio.sleep(0.1)

    trio.run(main, clock=MockClock(autojump_threshold=0))
    assert [received for _, received in emitted] == [0, 3, 6, 9]
    assert all(b - a >= RECEIVED_EVERY for (a, _), (b, _) in itertools.pairwise(emitted))

"""What a person sees while a run goes (issue 44, ADR 0021): ``clonegate analyze`` on a
pseudo-terminal at 80 and 160 columns, its output read through a terminal emulator,
against repositories a server on 127.0.0.1 holds to freeze a state."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest
import trio

from .support.repos import make_repo
from .support.screen import Frame, Terminal
from .support.throttling_http import ThrottlingHttp, throttling_http

NAMES = ("alpha", "beta", "gamma", "delta", "epsilon")
TOTAL = len(NAMES)
SAFETY_NET = 120  # seconds: only turns a hang into a failure, never a synchronization
_SUMMARY = re.compile(
    r"(\d+) repositor(?:y|ies): (\d+) ok, (\d+) failed, (\d+) timed out, (\d+) cancelled"
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served")
    for name in NAMES:
        make_repo(root, name, commits=1, other_branches=())
    return root


async def _run_held(
    server: ThrottlingHttp,
    terminal: Terminal,
    args: list[str],
    tmp_path: Path,
    frozen: Callable[[Frame], bool],
    then: Callable[[Frame], None],
    pack_bytes: int = 0,
) -> tuple[Frame, int]:
    """Run clonegate while the server holds every answer (a pack's after ``pack_bytes``
    of it); the first frame ``frozen`` accepts, given to ``then`` before the server
    lets go; and the exit status."""
    server.hold(pack_bytes=pack_bytes)
    code: list[int] = []

    async def run() -> None:
        code.append(await terminal.run(*args, env={"TMPDIR": str(tmp_path)}))

    with trio.fail_after(SAFETY_NET):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(run)
            seen = await terminal.wait_for(frozen)
            then(seen)
            server.release()
    return seen, code[0]


def _assert_every_frame_adds_up(terminal: Terminal, total: int) -> list[Frame]:
    """Each frame the display drew: every repository in exactly one state, and the bar
    agreeing with the states. The frames, in order."""
    drawn = [frame for frame in terminal.frames if frame.states() is not None]
    assert drawn, terminal.raw.decode(errors="replace")
    for frame in drawn:
        assert frame.text.count("waiting to retry") == 1, frame.lines  # drawn once
        states, bar = frame.states(), frame.bar()
        assert states is not None, frame.lines
        assert bar is not None, frame.lines
        assert sum(states.values()) == total, frame.lines
        assert all(n >= 0 for n in states.values()), frame.lines
        assert bar == (states["done"] + states["failed"], total, states["failed"]), frame.lines
    return drawn


@pytest.fixture(scope="module")
def served_big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("served_big")
    # Random bytes do not compress: the pack is as big as the blob.
    make_repo(root, "big", commits=1, other_branches=(), files={"blob": os.urandom(4 << 20)})
    return root


# Under the memory budget (the default, issue 46) the row ends with its reserved MiB.
_RECEIVED = re.compile(
    r"slot 1 +cloning +\S+ +\d+\.\d s +(\d+\.\d) (KiB|MiB) received(?: +\d+ MiB)?$"
)


def _kib(row: str) -> float:
    """The KiB a slot's row says its clone received; 0 if it says none."""
    found = _RECEIVED.search(row)
    return 0.0 if found is None else float(found[1]) * (1024 if found[2] == "MiB" else 1)


@pytest.mark.parametrize("columns", [80, 160])
async def test_a_clone_held_mid_pack_shows_the_bytes_it_received(
    served_big: Path, tmp_path: Path, columns: int
) -> None:
    """The server sends 1 MiB of a 4 MiB pack and holds the rest: the slot's row shows
    what the clone received (the side-band's packets aside, most of the 1 MiB; never
    more), not only its first report; ``-v`` logs the other events, never a report."""
    async with throttling_http(served_big) as server:
        terminal = Terminal(columns)
        args = ["analyze", "-v", "-j", "1", server.url("big")]

        def received(frame: Frame) -> bool:
            # The first note (256 KiB), then, the transfer stalled, what came since.
            return any(_kib(row) > 768 for row in frame.slots())

        held, code = await _run_held(
            server, terminal, args, tmp_path, received, lambda frame: None, pack_bytes=1 << 20
        )
    (row,) = held.slots()
    found = _RECEIVED.search(row)
    assert found is not None, held.lines
    assert _kib(row) <= 1024, row
    assert code == 0
    logged = terminal.raw.decode(errors="replace")
    assert re.search(r"\d\d:\d\d:\d\d cloning ", logged), logged
    assert not re.search(r"\d\d:\d\d:\d\d received ", logged), logged
    assert _assert_every_frame_adds_up(terminal, 1)[-1].bar() == (1, 1, 0)


@pytest.mark.parametrize("columns", [80, 160])
async def test_a_held_run_shows_each_slot_and_ends_on_the_summary(
    served: Path, tmp_path: Path, columns: int
) -> None:
    async with throttling_http(served) as server:
        urls = [server.url(name) for name in NAMES]
        terminal = Terminal(columns)
        args = ["analyze", "-j", "2", "--memory-budget", "4G", *urls]

        def two_cloning(frame: Frame) -> bool:
            return (frame.states() or {}).get("cloning") == 2

        def fail_one_waiting(frame: Frame) -> None:
            # Whichever two the gate let in first, one of the three still waiting (no
            # request sent yet) will find its repository gone: a failure to count.
            waiting = [
                name for name in NAMES if not any(f"/{name}.git" in row for row in frame.slots())
            ]
            assert len(waiting) == 3, frame.lines
            server.fail(waiting[0], 404)

        held, code = await _run_held(
            server, terminal, args, tmp_path, two_cloning, fail_one_waiting
        )

    # Frozen: two clones hold the two slots, the three others wait; nothing finished.
    assert held.states() == {
        "queued": 3,
        "waiting to retry": 0,
        "cloning": 2,
        "analyzing": 0,
        "done": 0,
        "failed": 0,
    }
    assert held.bar() == (0, TOTAL, 0)
    assert "clone slots 2/2 held" in held.text
    # 4 GiB less what the two slots' idle workers may keep (2 x 32 MiB, reserved).
    assert re.search(r"memory \d+/\d+ MiB held \(budget 4032 MiB\)", held.text), held.lines
    cloned = []
    for row in held.slots():
        found = re.match(r"slot (\d) +cloning +(\S+) +\d+\.\d s +\d+ MiB$", row)
        assert found is not None, held.lines
        cloned.append(found[2])
    assert len(set(cloned)) == 2, held.lines
    assert set(cloned) <= set(urls), held.lines
    # The bar fills the row beside its figures, at 80 columns as at 160: nothing
    # finished yet, so it is all light, and there is no rate or ETA to claim.
    (bar_row,) = [line for line in held.lines if "0/5 · " in line]
    assert re.fullmatch(r"─+ 0/5 · 0 failed · rate \? · ETA \?", bar_row), bar_row
    assert len(bar_row) == columns

    assert code == 1  # one was not found
    drawn = _assert_every_frame_adds_up(terminal, TOTAL)
    # The last frame stays on the terminal, above the table: the same figures as the
    # table's summary line, which is whole (no frame drawn over it).
    final, screen = drawn[-1], terminal.screen
    assert final.slots() == []
    summary = _SUMMARY.search(screen.text)
    assert summary is not None, screen.lines
    repositories, ok, failed, timed_out, cancelled = map(int, summary.groups())
    assert (repositories, ok, failed) == (TOTAL, TOTAL - 1, 1)
    assert final.bar() == (repositories, TOTAL, failed + timed_out + cancelled)
    assert final.states() == {
        "queued": 0,
        "waiting to retry": 0,
        "cloning": 0,
        "analyzing": 0,
        "done": ok,
        "failed": failed + timed_out + cancelled,
    }
    assert screen.states() == final.states()  # still on the screen at the end
    # The time taken, as the summary line gives it (its last words).
    taken = re.search(r"; (\d+\.\d s)$", screen.text)
    assert taken is not None, screen.lines
    (bar_row,) = [line for line in final.lines if f" {TOTAL}/{TOTAL} · " in line]
    assert bar_row.endswith(f" · {taken[1]}"), bar_row


async def test_a_clone_the_server_pushed_back_waits_to_retry(served: Path, tmp_path: Path) -> None:
    """One clone at a time on the server: the other one is refused (429, try again in
    600 s) and shows as waiting to retry, holding no slot, until Ctrl-C. With ``-v``,
    the log line that says so is printed above the display, which is drawn once."""
    async with throttling_http(served, limit=1, retry_after=600) as server:
        urls = [server.url(name) for name in NAMES[:2]]
        terminal = Terminal(80)
        server.hold()

        def one_of_each(frame: Frame) -> bool:
            states = frame.states() or {}
            return states.get("waiting to retry") == 1 and states.get("cloning") == 1

        code: list[int] = []

        async def run() -> None:
            args = ["analyze", "-v", "-j", "2", *urls]
            code.append(await terminal.run(*args, env={"TMPDIR": str(tmp_path)}))

        with trio.fail_after(SAFETY_NET):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(run)
                frame = await terminal.wait_for(one_of_each)
                terminal.interrupt()
    assert frame.states() == {
        "queued": 0,
        "waiting to retry": 1,
        "cloning": 1,
        "analyzing": 0,
        "done": 0,
        "failed": 0,
    }
    assert len(frame.slots()) == 2  # a row per slot: the one waiting holds none
    assert sum("idle" in row for row in frame.slots()) == 1
    assert re.search(r"INFO clonegate: .* HTTP 429: .* attempt again in 600\.0 s", frame.text)
    assert sum(bool(re.search(r" \d+/\d+ · \d+ failed · ", line)) for line in frame.lines) == 1
    assert code == [130]
    _assert_every_frame_adds_up(terminal, 2)


# An SGR parameter that sets a colour: 30-39 and 40-49 (38 and 48: 256 colours or RGB),
# 90-97 and 100-107. Bold, dim and resets are no colour.
_COLOUR = re.compile(r"^(3\d|4\d|9[0-7]|10[0-7])$")


def _colours(raw: bytes) -> set[str]:
    found = set()
    for params in re.findall(rb"\x1b\[([0-9;]*)m", raw):
        found |= {p for p in params.decode().split(";") if _COLOUR.match(p)}
    return found


@pytest.mark.parametrize("no_color", [False, True])
async def test_no_color_is_honoured(served: Path, tmp_path: Path, no_color: bool) -> None:
    async with throttling_http(served) as server:
        server.fail("beta", 404)  # a failure: drawn in red, unless NO_COLOR
        urls = [server.url(name) for name in NAMES[:2]]
        terminal = Terminal(80)
        env = {"TMPDIR": str(tmp_path), **({"NO_COLOR": "1"} if no_color else {})}
        with trio.fail_after(SAFETY_NET):
            code = await terminal.run("analyze", *urls, env=env)
    assert code == 1
    _assert_every_frame_adds_up(terminal, 2)
    assert bool(_colours(bytes(terminal.raw))) is not no_color


def _json_lines(rows: list[str]) -> list[dict[str, object]]:
    """The JSON documents on a screen: each starts a row, and goes on over the rows the
    terminal wrapped it onto."""
    found = []
    for start, row in enumerate(rows):
        if not row.startswith('{"url": '):
            continue
        text = ""
        for more in rows[start:]:
            text += more
            try:
                found.append(json.loads(text))
                break
            except json.JSONDecodeError:
                continue
    return found


async def test_json_lines_on_the_same_terminal_go_above_the_display(
    served: Path, tmp_path: Path
) -> None:
    """Results written to the terminal the display is drawn on were drawn over by its
    next frame: now each JSON line is printed above it, whole."""
    async with throttling_http(served) as server:
        urls = [server.url(name) for name in NAMES]
        terminal = Terminal(80, rows=120)
        with trio.fail_after(SAFETY_NET):
            code = await terminal.run(
                "analyze", "--format", "jsonl", *urls, env={"TMPDIR": str(tmp_path)}
            )
    assert code == 0
    reports = _json_lines(terminal.rows_as_drawn)
    assert sorted(str(r["url"]) for r in reports) == sorted(urls)
    _assert_every_frame_adds_up(terminal, TOTAL)
    assert terminal.screen.bar() == (TOTAL, TOTAL, 0)  # the last frame, below them


async def test_quiet_draws_no_display(served: Path, tmp_path: Path) -> None:
    """``-q`` on a terminal: the table and nothing else, as before."""
    async with throttling_http(served) as server:
        terminal = Terminal(80)
        with trio.fail_after(SAFETY_NET):
            code = await terminal.run(
                "analyze", "-q", server.url("alpha"), env={"TMPDIR": str(tmp_path)}
            )
    assert code == 0
    assert all(frame.states() is None for frame in terminal.frames)
    assert "1 repository: 1 ok" in terminal.screen.text


async def test_json_lines_piped_stay_on_stdout(served: Path, tmp_path: Path) -> None:
    """``clonegate analyze URL... | jq`` from a terminal: the display on the terminal,
    every result in the pipe, none on the screen."""
    async with throttling_http(served) as server:
        urls = [server.url(name) for name in NAMES]
        terminal = Terminal(80, piped=True)
        with trio.fail_after(SAFETY_NET):
            code = await terminal.run("analyze", *urls, env={"TMPDIR": str(tmp_path)})
    assert code == 0
    reports = [json.loads(line) for line in terminal.stdout.decode().splitlines()]
    assert sorted(r["url"] for r in reports) == sorted(urls)
    assert b'{"url": ' not in terminal.raw
    _assert_every_frame_adds_up(terminal, TOTAL)
    assert f"{TOTAL} repositories: {TOTAL} ok" in terminal.screen.text  # the summary on stderr

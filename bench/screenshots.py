"""The README's pictures, made again from a real run (issue 44).

    python bench/screenshots.py             # writes docs/img/terminal.svg, .png, report.png
    python bench/screenshots.py --report-command "clonegate report {run} --db {db} -o {out}"

The demo's six sample repositories are served on 127.0.0.1 (``clonegate demo``'s
server, in this process, at ``--rate`` KiB/s per clone) and ``clonegate analyze -j 2
--db`` runs over them on a pseudo-terminal of 80 columns (``tests/support/screen.py``:
the bytes through a terminal emulator, one screen per frame the live display drew).
The first frame with both clone slots at work and some repositories done is the
terminal's picture: its text as an SVG, and that SVG as a PNG (headless Chromium). Then
``--report-command`` writes the run's report from the same store, and a PNG of it is
taken in Chromium (the window, ``--width`` CSS pixels wide); a report that is not HTML
(``--format json``, before the HTML report exists) is said, not pictured.
"""

from __future__ import annotations

import argparse
import html
import shlex
import shutil
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import trio

from clonegate_cli import _demo
from tests.support.browser import open_page
from tests.support.screen import Frame, Terminal

ROOT = Path(__file__).resolve().parents[1]
PICTURES = ROOT / "docs" / "img"
DEFAULT_REPORT = "clonegate report {run} --db {db} -o {out}"
# The terminal's look: a dark background, light text, a cell 8.4 x 18 pixels.
CELL_WIDTH, LINE_HEIGHT, PADDING = 8.4, 18, 12
FOREGROUND, BACKGROUND = "#d8dee9", "#1d2128"
BAR_DONE, BAR_COLOUR = "━", "#f92672"  # Rich's bar.complete


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=16, help="KiB/s per clone (default 16)")
    parser.add_argument("--report-command", default=DEFAULT_REPORT)
    parser.add_argument("--width", type=int, default=1280, help="the report's window")
    parser.add_argument("--height", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=PICTURES)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="clonegate-screenshots-") as scratch:
        root, db = Path(scratch), Path(scratch) / "runs.db"
        for name, files in _demo.SAMPLES.items():
            _demo.build_repository(root / f"{name}.git", files)
        with _demo.serve(root, args.rate * 1024) as port:
            urls = [f"git://127.0.0.1:{port}/{name}.git" for name in _demo.SAMPLES]
            frame = trio.run(_run_on_a_terminal, urls, db)
        svg = args.out / "terminal.svg"
        svg.write_text(terminal_svg(frame))
        trio.run(_picture, svg, args.out / "terminal.png", _svg_size(frame))
        print(f"wrote {svg} and {args.out / 'terminal.png'}")
        report = root / "report.html"
        _run(args.report_command.format(run="latest", db=db, out=report))
        if (
            not report.read_text(errors="replace")
            .lstrip()
            .lower()
            .startswith(("<!doctype", "<html"))
        ):
            print(f"{report.name} is not HTML: no picture of the report", file=sys.stderr)
            return 0
        trio.run(_picture, report, args.out / "report.png", (args.width, args.height))
        print(f"wrote {args.out / 'report.png'}")
    return 0


async def _run_on_a_terminal(urls: list[str], db: Path) -> Frame:
    """``clonegate analyze`` on a terminal of 80 columns; the frame to show."""
    terminal = Terminal(columns=80, rows=24)
    command = ["analyze", "-j", "2", "--db", str(db), *urls]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(partial(terminal.run, *command, env={"NO_COLOR": "1"}))
        frame = await terminal.wait_for(_busy)
    if terminal.process is None or terminal.process.returncode != 0:
        sys.exit(f"clonegate analyze failed:\n{terminal.raw.decode(errors='replace')}")
    return frame


def _busy(frame: Frame) -> bool:
    """Both slots cloning and some repositories done: the semaphore at work."""
    states = frame.states()
    return states is not None and states["cloning"] == 2 and states["done"] >= 2


def terminal_svg(frame: Frame) -> str:
    """The frame's text as an SVG of a terminal: every character escaped, as data; the
    progress bar's done part coloured as Rich draws it."""
    width, height = _svg_size(frame)
    rows = "\n".join(
        f'<text xml:space="preserve" x="{PADDING}" y="{PADDING + (n + 1) * LINE_HEIGHT - 5}">'
        f"{_coloured(line)}</text>"
        for n, line in enumerate(_lines(frame))
    )
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">\n'
        f'<rect width="100%" height="100%" rx="6" fill="{BACKGROUND}"/>\n'
        f'<g font-family="DejaVu Sans Mono, monospace" font-size="14" fill="{FOREGROUND}">\n'
        f"{rows}\n</g>\n</svg>\n"
    )


def _coloured(line: str) -> str:
    done = len(line) - len(line.lstrip(BAR_DONE))
    if not done:
        return html.escape(line)
    return f'<tspan fill="{BAR_COLOUR}">{line[:done]}</tspan>{html.escape(line[done:])}'


def _lines(frame: Frame) -> list[str]:
    lines = list(frame.lines)
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _svg_size(frame: Frame) -> tuple[int, int]:
    columns = max(len(line) for line in _lines(frame))
    return round(columns * CELL_WIDTH + 2 * PADDING), len(_lines(frame)) * LINE_HEIGHT + 2 * PADDING


async def _picture(page: Path, png: Path, size: tuple[int, int]) -> None:
    shown = await open_page(page, screenshot=png.name, size=size)
    if shown.errors:
        sys.exit(f"{page.name}: console errors: {[m.text for m in shown.errors]}")
    assert shown.screenshot is not None
    shutil.copyfile(shown.screenshot, png)


def _run(command: str) -> None:
    words = shlex.split(command)
    if words[0] == "clonegate":  # this checkout's, in this interpreter
        words = [sys.executable, "-m", "clonegate", *words[1:]]
    done = subprocess.run(words, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{shlex.join(words)} failed ({done.returncode}):\n{done.stderr}")


if __name__ == "__main__":
    sys.exit(main())

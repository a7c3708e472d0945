"""The headless browser harness (tests/support/browser.py) on small hand-written pages:
what it says a page did is what the page did. The HTML report's tests rely on it to
find a console error, an element a script drew, and a script that should never have
run (issue 44)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from .support.browser import open_page

PAGES = Path(__file__).parent / "fixtures" / "browser"
PNG = b"\x89PNG\r\n\x1a\n"
EXECUTED = "document.body.dataset.executed ?? null"  # what the injected script sets
IMAGE_LOADED = "document.getElementById('remote').naturalWidth > 0"


async def test_an_element_a_script_adds_is_in_the_dom() -> None:
    page = await open_page(PAGES / "adds.html", evaluate=["document.title"])
    assert 'id="static"' in page.dom
    assert '<p id="added">added by a script</p>' in page.dom
    assert page.values == ("adds",)
    assert page.errors == []  # a console.log is not an error
    assert [m.text for m in page.messages if m.source == "console"] == ["a log line, not an error"]


async def test_a_script_that_throws_is_a_console_error() -> None:
    page = await open_page(PAGES / "throws.html")
    errors = [(m.source, m.text.splitlines()[0]) for m in page.errors]
    assert errors == [
        ("console", "said on the console"),
        ("exception", "Error: thrown by the fixture"),
    ]
    assert 'id="before"' in page.dom  # the page is there; only its script failed


async def test_a_script_inside_an_escaped_json_blob_is_data() -> None:
    page = await open_page(PAGES / "data_blob_escaped.html", evaluate=[EXECUTED])
    assert page.values == (None,)  # the injected script never ran
    assert "data-executed" not in page.dom
    # Shown as text: the browser writes it back escaped in the cell.
    script = "document.body.dataset.executed = 'yes'"
    assert f'<td id="name">&lt;/script&gt;&lt;script&gt;{script}&lt;/script&gt;</td>' in page.dom
    assert page.errors == []


async def test_a_script_inside_a_raw_json_blob_runs_and_the_harness_sees_it() -> None:
    # The control for the test above: unescaped, the blob's "</script>" ends its element.
    page = await open_page(PAGES / "data_blob_raw.html", evaluate=[EXECUTED])
    assert page.values == ("yes",)
    assert 'data-executed="yes"' in page.dom
    assert [m.source for m in page.errors] == ["exception"]  # the JSON cut short


async def test_a_screenshot_is_kept_as_an_artifact_at_the_size_asked(tmp_path: Path) -> None:
    page = await open_page(PAGES / "adds.html", screenshot="test-browser-adds.png", size=(640, 360))
    assert page.screenshot is not None
    data = page.screenshot.read_bytes()
    assert data.startswith(PNG)
    assert struct.unpack(">II", data[16:24]) == (640, 360)  # IHDR: width, height


async def test_a_page_is_timed_and_its_requests_are_listed() -> None:
    page = await open_page(PAGES / "adds.html")
    assert page.requests == (page.url,)
    assert page.external_requests == []
    # Instants in order, not durations: the benchmark measures time, tests do not.
    assert page.timing.first_paint is not None
    assert 0 < page.timing.load_event_end <= page.timing.opened


async def test_a_request_outside_the_file_is_listed_and_goes_nowhere() -> None:
    page = await open_page(PAGES / "reaches_out.html", evaluate=[IMAGE_LOADED])
    assert page.external_requests == ["https://example.org/picture.png"]
    assert page.values == (False,)  # the host resolved to nothing: no picture came
    assert [m.source for m in page.errors] == ["network"]


async def test_a_page_that_cannot_be_opened_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="ERR_FILE_NOT_FOUND"):
        await open_page(tmp_path / "missing.html")

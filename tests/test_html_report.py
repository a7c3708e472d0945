"""``clonegate report -o report.html`` on real SQLite stores (issue 44, ADR 0022): one
self-contained page, read here without a browser (``html.parser``): no network, what
servers named shown as text only, the store's counts, one timeline row per slot used
and every clone attempt's bar, aggregation for 5,000 repositories, under 10 MB."""

from __future__ import annotations

import dataclasses
import html
import json
import re
import sqlite3
import webbrowser
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import trio
from typer.testing import CliRunner

from clonegate import Inventory, RepositoryReport, TestCase, TestFile
from clonegate.store import open_store, open_store_reader
from clonegate_cli.app import app

from .support.drawn_runs import HOSTILE_NAMES, save_run, schedule
from .support.hostile_servers import renaming_git_daemon
from .support.repos import FixtureRepo

# Every element the page is made of: anything else came from a server's text.
_TAGS = {
    *("html", "head", "meta", "title", "style", "body", "h1", "h2", "h3", "p", "div"),
    *("span", "i", "table", "caption", "thead", "tbody", "tr", "th", "td", "figure"),
    *("figcaption", "svg", "g", "rect", "text", "line", "polyline", "polygon", "path"),
    *("details", "summary", "ul", "li", "code", "input", "select", "option", "button"),
    "script",
}


class Page(HTMLParser):
    """What a browser's parser would see: elements with their attributes, the text of
    each element, the script elements' contents."""

    def __init__(self, document: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._in_script: dict[str, str | None] | None = None
        self.feed(document)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._in_script = dict(attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = None

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            self.scripts.append((self._in_script, data))
        else:
            self.text.append(data)

    def data(self) -> Any:
        (blob,) = [t for a, t in self.scripts if a.get("type") == "application/json"]
        return json.loads(blob)


def report(runner: CliRunner, db: Path, out: Path, *extra: str) -> str:
    result = runner.invoke(app, ["report", "--db", str(db), "-o", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out.read_text()


def counts(document: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r'data-count="(\w+)">(\d+)<', document)}


@pytest.fixture(scope="module")
def hostile_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    where = tmp_path_factory.mktemp("html-report")
    db = where / "runs.db"
    save_run(db, 20, 4, hostile=True)
    save_run(db, 20, 4, hostile=True)
    return db, report(CliRunner(), db, where / "report.html")


def test_the_page_is_html_by_default_and_needs_no_network(hostile_page: tuple[Path, str]) -> None:
    _, document = hostile_page
    assert document.startswith("<!DOCTYPE html>")
    page = Page(document)
    # Nothing is fetched: no attribute names a resource, no style imports one.
    for tag, attrs in page.tags:
        assert not {"src", "href", "srcset", "action", "data"} & attrs.keys(), (tag, attrs)
    assert not re.search(r"@import|url\(", document)
    assert not re.search(r"""(src|href)\s*=\s*["']?https?:""", document, re.IGNORECASE)
    assert [t for t, _ in page.tags if t == "script"] == ["script", "script"]


def test_hostile_names_are_text_only(hostile_page: tuple[Path, str]) -> None:
    _, document = hostile_page
    page = Page(document)
    assert {t for t, _ in page.tags} <= _TAGS  # no <b>, no third <script> from a name
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", document)  # no raw escape at all
    shown = "".join(page.text)
    assert "https://example.org/<script>alert(1)</script>/r0" in shown  # as text
    assert "https://example.org/</svg><b>x/r3" in shown
    assert "\\x1b[2J\\x1b]0;title\\x07" in shown  # the escape sequence, visible
    data = page.data()
    urls = data["columns"]["url"]
    assert "https://example.org/\\x1b[2J\\x1b]0;title\\x07/r6" in urls
    names = [t[0] for f in data["files"][0]["files"] for t in f[4]]
    assert f"Suite > {HOSTILE_NAMES[0]}" in names
    # The script reads names as data and sets them as text, never as markup.
    (code,) = [t for a, t in page.scripts if "type" not in a]
    for sink in ("innerHTML", "outerHTML", "eval(", "document.write", "Function("):
        assert sink not in code


async def _store_summary(db: Path) -> dict[str, int]:
    async with open_store_reader(db) as store:
        (run,) = await store.runs(1)
        assert run.summary is not None
        return run.summary


def test_the_summary_and_the_table_give_the_stores_counts(
    hostile_page: tuple[Path, str],
) -> None:
    db, document = hostile_page
    stored = trio.run(_store_summary, db)
    shown = counts(document)
    assert shown == {k: stored[k] for k in shown}
    assert (shown["repositories"], shown["failed"], shown["tests"]) == (20, 1, 38)
    columns = Page(document).data()["columns"]
    assert len(columns["url"]) == 20
    assert sum(t or 0 for t in columns["tests"]) == stored["tests"]
    assert columns["status"].count("failed") == stored["failed"]


def test_the_drill_down_has_files_tests_statuses_and_history(
    hostile_page: tuple[Path, str],
) -> None:
    data = Page(hostile_page[1]).data()
    files = data["files"][1]
    (path, framework, language, statuses, tests) = files["files"][0]
    assert (path, framework, language) == ("tests/test_1.py", "pytest", "python")
    assert statuses == {"active": 1, "skipped": 1}
    assert tests == [[f"Suite > {HOSTILE_NAMES[1]}", "active"], ["Suite > b", "skipped"]]
    assert [h[1] for h in data["history"][1]] == [2, 2]
    assert data["files"][5] is None  # failed: no inventory, said so (not "no files")


def test_the_timeline_has_a_row_per_slot_used_and_every_attempts_bar(
    hostile_page: tuple[Path, str],
) -> None:
    document = hostile_page[1]
    rows = re.findall(r'<text class="row"[^>]*>slot (\d+)</text>', document)
    assert rows == ["1", "2", "3", "4"]  # four slots were used, as the limit allowed
    bars = re.findall(r'<g class="slot-bar"><title>([^<]*): attempt (\d+)', document)
    expected = sorted(
        (r.url.replace("\x1b", "\\x1b").replace("\x07", "\\x07"), p.attempt)
        for r in schedule(20, 4, hostile=True)
        for p in r.phases
        if p.name == "clone"
    )
    assert sorted((html.unescape(u), int(a)) for u, a in bars) == expected
    assert 'class="limit"' in document  # the clone limit drawn
    assert 'class="host-limit"' in document  # the host that pushed back marked


def test_a_run_of_5000_repositories_is_aggregated_and_under_10_mb(
    runner: CliRunner, tmp_path: Path
) -> None:
    db = tmp_path / "runs.db"
    save_run(db, 5000, 16)
    document = report(runner, db, tmp_path / "report.html")
    assert len(document.encode()) < 10 * 2**20
    assert 'class="slot-bar"' not in document  # bars thinner than a pixel: not drawn
    assert 'class="busy"' in document  # the busy slots per pixel column, an area
    assert 'class="phase-area"' in document
    assert 'class="host-limit"' in document  # throttling marked on the area too
    assert counts(document)["repositories"] == 5000
    assert len(Page(document).data()["columns"]["url"]) == 5000


def test_json_stays_a_format(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    save_run(db, 3, 2)
    text = report(runner, db, tmp_path / "run.json", "--format", "json")
    assert len(json.loads(text)["repositories"]) == 3


def test_open_shows_the_written_page_where_a_browser_exists(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "runs.db"
    save_run(db, 3, 2)
    opened: list[str] = []
    browser = [True]

    def fake_open(url: str) -> bool:
        opened.append(url)
        return browser[0]

    monkeypatch.setattr(webbrowser, "open", fake_open)
    page = tmp_path / "run.html"
    shown = runner.invoke(app, ["report", "--db", str(db), "-o", str(page), "--open"])
    assert shown.exit_code == 0, shown.output
    assert opened == [page.resolve().as_uri()]
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    # No browser: the page is written all the same, and the command says where.
    browser[0] = False
    again = runner.invoke(app, ["report", "--db", str(db), "-o", str(page), "--open"])
    assert again.exit_code == 0, again.output
    assert "no browser to open the report" in again.output
    # Nothing to open without a file.
    stdout = runner.invoke(app, ["report", "--db", str(db), "--open"])
    assert stdout.exit_code == 2
    assert "--open needs -o FILE" in stdout.output
    assert len(opened) == 2


SCRIPT_BRANCH = "main</script><script>x()</script>\u202egnp"  # a valid git branch name


def test_a_real_run_against_a_hostile_server_is_drawn_as_data(
    runner: CliRunner, repo_root: Path, repos: dict[str, FixtureRepo], tmpdir_env: Path
) -> None:
    db = tmpdir_env.parent / "runs.db"
    with renaming_git_daemon(repo_root / "basic.git", SCRIPT_BRANCH.encode()) as port:
        url = f"git://127.0.0.1:{port}/basic.git"
        analyzed = runner.invoke(app, ["analyze", "--db", str(db), url])
    assert analyzed.exit_code == 0, analyzed.output
    document = report(runner, db, tmpdir_env / "report.html")
    page = Page(document)
    assert {t for t, _ in page.tags} <= _TAGS
    assert [t for t, _ in page.tags].count("script") == 2
    columns = page.data()["columns"]
    assert columns["branch"] == ["main</script><script>x()</script>\\u202egnp"]
    # One clone, one slot: a row and its bar, from the phases the run recorded.
    assert re.findall(r'<text class="row"[^>]*>slot (\d+)</text>', document) == ["1"]
    assert document.count('class="slot-bar"') == 1
    assert counts(document)["tests"] == columns["tests"][0]


def test_a_damaged_row_is_named_once_and_left_out(runner: CliRunner, tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    save_run(db, 3, 2)
    with sqlite3.connect(db) as edit:  # anyone may edit the file
        edit.execute("UPDATE phases SET started = 'soon' WHERE report_id = 2")
    result = runner.invoke(app, ["report", "--db", str(db), "-o", str(tmp_path / "r.html")])
    assert result.exit_code == 1
    assert result.stderr.count("reports row 2") == 1
    document = (tmp_path / "r.html").read_text()
    assert len(Page(document).data()["columns"]["url"]) == 2
    # The page says what it lacks: its summary (the store's) counts three.
    assert 'id="damaged"' in document
    assert "reports row 2" in document
    assert counts(document)["repositories"] == 3


def test_a_run_without_phases_says_so_rather_than_drawing_nothing(
    runner: CliRunner, tmp_path: Path
) -> None:
    # As a run stored before phases were kept: no timeline, and the page says why.
    db = tmp_path / "runs.db"
    save_run(db, 3, 2)
    with sqlite3.connect(db) as edit:
        for report_id, document in edit.execute("SELECT id, document FROM reports").fetchall():
            kept = {k: v for k, v in json.loads(document).items() if k != "phases"}
            edit.execute(
                "UPDATE reports SET document = ? WHERE id = ?", (json.dumps(kept), report_id)
            )
        edit.execute("DELETE FROM phases")
    document = report(runner, db, tmp_path / "old.html")
    assert 'id="no-phases"' in document
    assert '<svg class="timeline"' not in document
    assert counts(document)["repositories"] == 3


def test_a_repository_of_long_test_names_stays_in_the_size_bound(
    runner: CliRunner, tmp_path: Path
) -> None:
    # 3,000 tests named 4,000 characters each: 12 MB of names from one repository.
    (first, *_) = schedule(1, 1)
    huge = TestFile(
        "tests/test_huge.py",
        "pytest",
        "python",
        tests=tuple(TestCase(f"{n:05}" + "x" * 4000, n + 1) for n in range(3000)),
    )
    bloated = dataclasses.replace(first, inventory=Inventory(files=(huge,)))
    db = tmp_path / "runs.db"

    async def save() -> None:
        async with open_store(db) as store:
            run_id = await store.begin_run({})
            await store.save(run_id, "example.org/huge", bloated)
            await store.finish_run(run_id)

    trio.run(save)
    document = report(runner, db, tmp_path / "report.html")
    assert len(document.encode()) < 10 * 2**20
    files = Page(document).data()["files"][0]
    (path, _, _, statuses, listed) = files["files"][0]
    assert path == "tests/test_huge.py"
    assert statuses == {"active": 3000}  # every test counted, listed or not
    assert 0 < len(listed) < 3000
    assert files["leftOut"] == 3000 - len(listed)  # and the page says how many it left out


def test_a_long_server_message_is_cut_and_says_so(runner: CliRunner, tmp_path: Path) -> None:
    url = "https://example.org/team/chatty.git"
    failed = RepositoryReport.failure(url, 0, "clone", "protocol", "\x1b[2J" + "e" * 200_000)
    db = tmp_path / "runs.db"

    async def save() -> None:
        async with open_store(db) as store:
            run_id = await store.begin_run({})
            await store.save(run_id, "example.org/team/chatty", failed)
            await store.finish_run(run_id)

    trio.run(save)
    document = report(runner, db, tmp_path / "report.html")
    assert len(document) < 100_000  # the message is in the list and the table: cut in both
    # 200,007 characters shown ("\\x1b" is four), the first 1,000 kept.
    (shown,) = Page(document).data()["columns"]["message"]
    assert shown.startswith("\\x1b[2Jeee")
    assert shown.endswith(f"\u2026 ({200_007 - 1000} more characters)")
    assert f"({200_007 - 1000} more characters)" in "".join(Page(document).text)


def test_the_charts_give_the_stores_tests_by_framework_language_and_status(
    hostile_page: tuple[Path, str],
) -> None:
    document = hostile_page[1]

    def bars(field: str) -> dict[str, int]:
        figure = re.search(f'<figure id="tests-by-{field}">(.*?)</figure>', document)
        assert figure is not None
        found = re.findall(r'<g class="bar"><title>([^<:]*): (\d+)</title>', figure.group(1))
        return {label: int(n) for label, n in found}

    # 19 repositories analyzed, each one active and one skipped pytest test.
    assert bars("framework") == {"pytest": 38}
    assert bars("language") == {"python": 38}
    assert bars("status") == {"active": 19, "skipped": 19}

"""A repository is parsed once, at input, into a value that flows to the report (issue 42).

The refactor changed no output: a mixed batch of URLs (duplicates spelled several ways,
credentials, a token's host, hostile lines) gives byte for byte the JSON reports, the
events, the store's rows and the command line's usage error recorded before it, in
``tests/fixtures/repository_value.json``. Regenerate it (only for an intended change)
with ``CLONEGATE_REGENERATE_GOLDEN=1``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import SplitResult, urlsplit

import pytest
import typer

from clonegate import (
    AnalysisSettings,
    AnalyzeUseCase,
    DulwichVCS,
    Event,
    TestInventoryAnalyzer,
    parse_repo_url,
    with_breaker,
    with_event_hook,
    with_result_store,
    with_retries,
    with_token,
)
from clonegate._adapters.workers import open_worker_pool
from clonegate._domain import urls
from clonegate._domain.report_json import to_json
from clonegate._domain.repository import Repository
from clonegate.store import open_store
from clonegate_cli._input import read_list

from .support.fakes import FakeAnalyzer, FakeVCS
from .support.repos import make_repo
from .support.servers import free_port, git_daemon

GOLDEN = Path(__file__).parent / "fixtures" / "repository_value.json"

# What a batch may be given: {base} is a directory of bare repositories, {port} a git
# daemon serving it, {dead} a closed port on 127.0.0.1.
BATCH = [
    "file://{base}/alpha.git",
    "{base}/alpha.git",  # a local path: the same repository
    "file://{base}/alpha.git/",
    "file://{base}/beta.git",  # no such repository
    "git://127.0.0.1:{port}/alpha.git",
    "GIT://127.0.0.1:{port}/alpha",
    "git://127.0.0.1:{port}/alpha.git/",
    "git://127.0.0.1:{port}/missing.git",
    "git://127.0.0.1:{port}/missing",
    "https://user:s3cr3t@127.0.0.1:{dead}/o/r.git",
    "https://127.0.0.1:{dead}/o/r",  # a duplicate of a failure, credentials aside
    "HTTPS://other:pw@127.0.0.1:{dead}/o/r/",
    "https://127.0.0.1:{dead}/o/tokened.git",  # the token's host
    "http://127.0.0.1:{dead}/o/%1b[31mred.git",
    "https://evil.example/o/r.git?x=1",
    "https://evil.example/o/r.git#frag",
    "https://exa mple.com/r.git",
    "https://user:pa ss@example.com/r.git",
    "ssh://-oProxyCommand=touch${{IFS}}pwned/r.git",
    "-oProxyCommand=x:r.git",
    "ssh://-l@example.com/r.git",
    "ftp://example.com/r.git",
    "https://127.0.0.1:99999/r.git",
    "https://user:secret@127.0.0.1:port/r.git",
    "https://[::1/r.git",
    "https://example.com/",
    "https://example.com/%00x.git",
    "https://example.com/r\x1b]0;title\x07.git",
    "https://example.com/\u202eexe.git",
    "https://user:p%0asss@example.com/r.git",
    "",
    "   ",
    "not a url",
    "https://127.0.0.1:{dead}/" + "a" * 300 + ".git",
]


def _batch(base: Path, port: int, dead: int) -> list[str]:
    return [line.format(base=base, port=port, dead=dead) for line in BATCH]


def _normal(text: str, tmp: Path, port: int, dead: int) -> str:
    """``text`` without what changes from run to run: the directory and the ports."""
    text = text.replace(str(tmp), "<tmp>")
    return text.replace(f":{port}", ":<port>").replace(f":{dead}", ":<dead>")


def _stable(report: dict[str, Any]) -> dict[str, Any]:
    """A report's document without its timings, instants and measured memory (never the
    same twice): its phases by name only."""
    report = dict(report)
    report["timings"] = "<timings>"
    if "phases" in report:
        report["phases"] = [
            p["name"] if p["attempt"] is None else f"{p['name']}#{p['attempt']}"
            for p in report["phases"]
        ]
    if report.get("clone_memory") is not None:
        report["clone_memory"] = "<bytes>"
    return report


async def _run_batch(base: Path, port: int, dead: int, db: Path) -> dict[str, Any]:
    events: list[Event] = []
    async with open_worker_pool() as pool, open_store(db) as store:
        uc = AnalyzeUseCase(
            with_result_store(store),
            with_token("t0ken", f"127.0.0.1:{dead}"),
            with_event_hook(events.append),
            # One attempt each, no breaker (issue 43): the refused port's reports and
            # events are the same on every run, with no backoff drawn at random.
            with_retries(0),
            with_breaker(0),
            vcs=DulwichVCS(pool=pool, allow_local=True),
            analyzer=TestInventoryAnalyzer(AnalysisSettings(processes=1), pool=pool),
        )
        async with uc.analyze_many(_batch(base, port, dead)) as batch:
            reports = [to_json(report) async for report in batch]
        lone = to_json(await uc.execute(f"git://127.0.0.1:{port}/alpha.git", index=7))
    reports.sort(key=lambda r: r["index"])
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT run_id, line, key, url, status, error_kind, error, duplicate_of"
            " FROM reports ORDER BY run_id, line"
        ).fetchall()
    shown_events = sorted(
        (e.kind.value, e.url, e.index, e.status) for e in events if e.kind != "memory"
    )
    return {
        "reports": [_stable(r) for r in reports],
        "lone": _stable(lone),
        "events": [list(e) for e in shown_events],
        "stored": [list(row) for row in rows],
    }


def _cli_refusal(base: Path, port: int, dead: int, tmp: Path) -> None:
    listed = tmp / "urls.txt"
    listed.write_bytes(
        "\n".join(_batch(base, port, dead)).encode("utf-8", "surrogateescape")
        + b"\nhttps://ex\xffample.com/r.git\n"
    )
    with pytest.raises(typer.Exit):  # the problems, one a line, go to stderr
        read_list(["https://example.com/o/r.git", "file:///x.git"], str(listed))


async def test_reports_of_a_mixed_batch_are_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = tmp_path / "repos"
    base.mkdir()
    make_repo(base, "alpha", files={"tests/test_a.py": b"def test_one():\n    pass\n"})
    dead = free_port()
    with git_daemon(base) as daemon:
        found = await _run_batch(base, daemon.port, dead, tmp_path / "runs.db")
    capsys.readouterr()
    _cli_refusal(base, daemon.port, dead, tmp_path)
    found["cli"] = capsys.readouterr().err.splitlines()
    text = _normal(json.dumps(found, indent=1, ensure_ascii=True), tmp_path, daemon.port, dead)
    if os.environ.get("CLONEGATE_REGENERATE_GOLDEN"):
        GOLDEN.write_text(text + "\n")
    assert text + "\n" == GOLDEN.read_text()


def test_a_line_is_parsed_into_what_every_step_reads() -> None:
    line = "HTTPS://bob:s3cr3t@Git.Example:443/org/r.git/"
    repository = Repository.of(line, 4)
    assert repository.index == 4
    assert repository.url == line  # the VCS gets it as written
    assert repository.parsed == parse_repo_url(line)
    assert repository.problem is None
    assert repository.shown == "https://***@git.example:443/org/r.git/"
    assert repository.key == "https://git.example/org/r"
    assert repository.digest == Repository.of("https://git.example/org/r").digest
    assert len(repository.digest) == 16
    assert "s3cr3t" not in repr(repository)


def test_a_line_that_is_no_url_keeps_its_problem_and_is_no_duplicate() -> None:
    repository = Repository.of(" https://bob:s3cr3t@host/r.git?x ", 2)
    assert repository.parsed is None
    assert repository.problem is not None
    assert repository.problem.kind == "invalid_url"
    assert repository.shown == "https://***@host/r.git?x"
    assert (repository.key, repository.digest) == ("", b"")
    refused = repository.refused()
    assert (refused.index, refused.url, refused.status) == (2, repository.shown, "failed")
    assert refused.error is not None
    assert (refused.error.phase, refused.error.kind) == ("clone", "invalid_url")
    assert refused.error.message == str(repository.problem)


async def test_parsing_is_not_cached_each_line_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing hides a second parse: two parses are two values.
    assert parse_repo_url(LINES[0]) is not parse_repo_url(LINES[0])
    splits: list[str] = []

    def counted(text: str) -> SplitResult:
        splits.append(text)
        return urlsplit(text)

    monkeypatch.setattr(urls, "urlsplit", counted)
    uc = AnalyzeUseCase(vcs=FakeVCS(tmp_path), analyzer=FakeAnalyzer())
    async with uc.analyze_many(LINES) as batch:
        firsts = sorted([str(r.duplicate_of) async for r in batch])
    assert firsts == ["0", "0", "None", "None"]
    assert sorted(splits) == sorted(LINES)  # the fake VCS parses nothing


LINES = [
    "https://git.example/org/a.git",
    "HTTPS://Git.Example/org/a/",
    "https://bob:pw@git.example/org/a",
    "https://git.example/org/b.git",
]


async def test_a_line_with_terminal_controls_or_a_bad_byte_is_stored_escaped(
    tmp_path: Path,
) -> None:
    # A library caller may hand any str: an undecodable byte (a lone surrogate) once
    # crashed the store's save, and with it the batch; ESC and U+202E reached the
    # reports, events and rows raw. Each line now has its report, shown escaped.
    lines = [
        LINES[0],
        "https://ex\udcffample.com/r.git",
        "https://example.com/r\x1b]0;title\x07.git",
        "https://u:pw@example.com/\u202eexe.git",
    ]
    events: list[Event] = []
    async with open_store(tmp_path / "runs.db") as store:
        uc = AnalyzeUseCase(
            with_result_store(store),
            with_event_hook(events.append),
            vcs=FakeVCS(tmp_path),
            analyzer=FakeAnalyzer(),
        )
        async with uc.analyze_many(lines) as batch:
            reports = sorted([r async for r in batch], key=lambda r: r.index)
    assert [r.status for r in reports] == ["ok", "failed", "failed", "failed"]
    shown = [r.url for r in reports[1:]]
    assert shown == [
        "https://ex\\udcffample.com/r.git",
        "https://example.com/r\\x1b]0;title\\x07.git",
        "https://***@example.com/\\u202eexe.git",
    ]
    assert all(text.isprintable() for text in shown)
    assert {e.url for e in events} <= {reports[0].url, *shown}
    with sqlite3.connect(tmp_path / "runs.db") as db:
        stored = {row[0] for row in db.execute("SELECT url FROM reports")}
    assert stored == {reports[0].url, *shown}

"""Reports as JSON documents, JSON lines, or a table; the summary line for people."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Mapping, Sequence
from typing import Protocol, TextIO

from clonegate import (
    BatchSummary,
    RepositoryReport,
    RepositoryStatus,
    TestStatus,
    to_json,
    visible,
)

as_json = to_json  # the library's codec (clonegate.report_from_json reads it back)


def jsonl_line(report: RepositoryReport) -> str:
    return json.dumps(as_json(report)) + "\n"


def write_jsonl(stream: TextIO, report: RepositoryReport) -> None:
    stream.write(jsonl_line(report))
    stream.flush()


def json_document(reports: list[RepositoryReport], summary: BatchSummary) -> str:
    document = {
        "repositories": [as_json(r) for r in sorted(reports, key=lambda r: r.index)],
        "summary": as_json(summary),
    }
    return json.dumps(document, indent=2) + "\n"


def write_json(stream: TextIO, reports: list[RepositoryReport], summary: BatchSummary) -> None:
    stream.write(json_document(reports, summary))


def table_text(reports: list[RepositoryReport], summary: BatchSummary, *, terminal: bool) -> str:
    """The table :func:`write_table` writes, as text: styled, and as wide as the
    terminal, if it is meant for one."""
    text = io.StringIO()
    width = shutil.get_terminal_size().columns if terminal else None
    write_table(text, reports, summary, width=width, terminal=terminal or None)
    return text.getvalue()


_STATUS_STYLE = {
    RepositoryStatus.OK: "green",
    RepositoryStatus.FAILED: "red",
    RepositoryStatus.TIMEOUT: "yellow",
    RepositoryStatus.CANCELLED: "magenta",
}


def write_table(
    stream: TextIO,
    reports: list[RepositoryReport],
    summary: BatchSummary,
    *,
    width: int | None = None,
    terminal: bool | None = None,
) -> None:
    """One entry per input line, numbered from 1 like the lines of a file: the URL on a
    line of its own, whole (it breaks only if the terminal is narrower than it), then
    what was found or what went wrong.

    Every cell is a plain ``Text`` of visible characters: nothing a server sent (an
    error message, a branch name) is read as rich markup or reaches the terminal as a
    control character or escape sequence; those are shown escaped (``\\x1b``).
    """
    # Rich is imported here, not with the module: JSON output never needs it (issue 14).
    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    table = Table(box=box.SIMPLE_HEAD, title="clonegate", title_justify="left", pad_edge=False)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("repository", overflow="fold", ratio=1)
    for r in sorted(reports, key=lambda r: r.index):
        entry = Text(visible(r.url))
        entry.append("\n")
        entry.append(visible(_detail(r)), style="dim")
        table.add_row(
            Text(str(r.index + 1)), Text(str(r.status), style=_STATUS_STYLE[r.status]), entry
        )
    # width None: the terminal's, or 80; terminal None: whether ``stream`` is one.
    console = Console(file=stream, width=width, force_terminal=terminal)
    console.print(table)
    statuses: dict[str, int] = {}
    for r in reports:
        for status, n in (r.analysis.by_status if r.analysis else {}).items():
            statuses[status] = statuses.get(status, 0) + n
    console.print(Text(summary_line(summary, statuses)))


def _detail(report: RepositoryReport) -> str:
    parts = []
    if report.reused:
        parts.append("unchanged: reused from the store")
    if report.duplicate_of is not None:
        parts.append(f"same repository as #{report.duplicate_of + 1}")
    if report.redirected_to is not None:
        parts.append(f"moved to {report.redirected_to}")
    if report.error is not None:
        # Messages name their repository for logs; the entry already does.
        parts.append(report.error.message.removeprefix(f"{report.url}: "))
    if report.ref is not None:
        parts.append(f"{report.ref.branch or '(detached)'} {report.ref.commit[:10]}")
    if report.analysis is not None:
        totals = report.analysis
        parts.append(
            f"{_count(totals.tests, 'test')} in {_count(totals.test_files, 'file')}"
            + "".join(f", {name} {n}" for name, n in totals.by_framework.items())
        )
        if statuses := statuses_text(totals.by_status):
            parts.append(statuses)
        if totals.unread:
            parts.append(unread_text(totals.unread))
    return " · ".join(parts)


def unread_text(unread: dict[str, int]) -> str:
    """``34 test files in ruby not read``; ``36 test files not read: ruby 34, php 2``.

    "0 tests" next to it means not understood, not none (ADR 0004)."""
    files = _count(sum(unread.values()), "test file")
    if len(unread) == 1:
        ((name, _),) = unread.items()
        return f"{files} in {name} not read"
    return f"{files} not read: " + ", ".join(f"{name} {n}" for name, n in unread.items())


def statuses_text(by_status: dict[str, int]) -> str:
    """``2 skipped, 1 xfail``: the tests that would not simply run, in the order of
    ``clonegate.TestStatus`` (ADR 0005); "" when every test is active."""
    others = {status: n for status, n in by_status.items() if status != TestStatus.ACTIVE}
    return ", ".join(f"{n} {status}" for status, n in others.items() if n)


def _count(n: int, noun: str, plural: str | None = None) -> str:
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def thrash_text(thrash: int) -> str:
    """``, 2 memory thrashes`` for a summary line; nothing when none. Memory under
    pressure while no clone moved: said on stderr when it happens, counted here."""
    return f", {_count(thrash, 'memory thrash', 'memory thrashes')}" if thrash else ""


def summary_line(summary: BatchSummary, statuses: dict[str, int] | None = None) -> str:
    """``3 repositories: 2 ok, 1 failed, ...; 40 tests in 5 files; 1.2 s``, with
    ``34 test files not read`` before the time when some were not, and the tests per
    status after their count when given (``40 tests in 5 files (2 skipped)``)."""
    shown = statuses_text(statuses or {})
    return (
        f"{_count(summary.repositories, 'repository', 'repositories')}: {summary.ok} ok, "
        f"{summary.failed} failed, {summary.timeout} timed out, "
        f"{summary.cancelled} cancelled, {_count(summary.duplicates, 'duplicate')}"
        + (f", {summary.reused} reused" if summary.reused else "")
        + (
            f", {summary.retried} retried ({summary.retry_wait:.1f} s waiting)"
            if summary.retried
            else ""
        )
        + thrash_text(summary.memory_thrash)
        + "; "
        f"{_count(summary.tests, 'test')} in {_count(summary.test_files, 'file')}"
        + (f" ({shown})" if shown else "")
        + "; "
        + (
            f"{_count(summary.unread_files, 'test file')} not read; "
            if summary.unread_files
            else ""
        )
        + f"{summary.elapsed:.1f} s"
    )


def summary_of(reports: list[RepositoryReport], elapsed: float) -> BatchSummary:
    """The summary of reports gathered elsewhere (a cluster run's), over ``elapsed`` s."""

    def count(status: RepositoryStatus) -> int:
        return sum(r.status is status for r in reports)

    return BatchSummary(
        repositories=len(reports),
        ok=count(RepositoryStatus.OK),
        failed=count(RepositoryStatus.FAILED),
        timeout=count(RepositoryStatus.TIMEOUT),
        cancelled=count(RepositoryStatus.CANCELLED),
        test_files=sum(r.analysis.test_files for r in reports if r.analysis),
        tests=sum(r.analysis.tests for r in reports if r.analysis),
        elapsed=elapsed,
        unread_files=sum(r.analysis.unread_files for r in reports if r.analysis),
        retried=sum(bool(r.attempts) for r in reports),
        retry_wait=sum(a.waited for r in reports for a in r.attempts),
    )


class _Size(Protocol):
    @property
    def size(self) -> int: ...


class _HostLimit(Protocol):
    """What the summary reads of a host's limit (``AnalyzeUseCase.host_statistics``)."""

    @property
    def size(self) -> int: ...
    @property
    def decreases(self) -> int: ...
    @property
    def timeline(self) -> Sequence[_Size]: ...


def host_limits_line(statistics: Mapping[str, _HostLimit], shown: int = 3) -> str | None:
    """One line for the hosts whose limit came down: each one's size at the end and
    its lowest; None if none came down."""
    parts = [
        f"{visible(host)} {stats.size} (lowest {min(c.size for c in stats.timeline)}, "
        f"{stats.decreases} decreases)"
        for host, stats in statistics.items()
        if stats.decreases and stats.timeline
    ]
    if not parts:
        return None
    more = f", {len(parts) - shown} more" if len(parts) > shown else ""
    return "host limits lowered: " + ", ".join(parts[:shown]) + more

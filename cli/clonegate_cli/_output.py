"""Reports as JSON documents, JSON lines, or a table."""

from __future__ import annotations

import json
from typing import Any, TextIO

from rich.console import Console
from rich.table import Table

from clonegate import BatchSummary, RepositoryReport, RepositoryStatus


def report_dict(report: RepositoryReport) -> dict[str, Any]:
    """The JSON shape of a report; field names follow the use case's report."""
    error = report.error
    ref = report.ref
    analysis = report.analysis
    return {
        "url": report.url,
        "index": report.index,
        "status": str(report.status),
        "duplicate_of": report.duplicate_of,
        "error": None
        if error is None
        else {"phase": error.phase, "kind": error.kind, "message": error.message},
        "ref": None
        if ref is None
        else {
            "branch": ref.branch,
            "commit": ref.commit,
            "committed_at": ref.committed_at.isoformat(),
        },
        "timings": {
            "waited": round(report.timings.waited, 3),
            "setup": round(report.timings.setup, 3),
            "clone": round(report.timings.clone, 3),
            "analysis": round(report.timings.analysis, 3),
        },
        "analysis": None
        if analysis is None
        else {
            "test_files": analysis.test_files,
            "tests": analysis.tests,
            "by_framework": analysis.by_framework,
            "by_language": analysis.by_language,
            "by_status": analysis.by_status,
            "scan_errors": analysis.scan_errors,
            "files_scanned": analysis.files_scanned,
            "analyzer_version": analysis.analyzer_version,
        },
        "path": str(report.path) if report.path is not None else None,
    }


def summary_dict(summary: BatchSummary) -> dict[str, Any]:
    return {
        "repositories": summary.repositories,
        "ok": summary.ok,
        "failed": summary.failed,
        "timeout": summary.timeout,
        "cancelled": summary.cancelled,
        "duplicates": summary.duplicates,
        "test_files": summary.test_files,
        "tests": summary.tests,
        "elapsed": round(summary.elapsed, 3),
    }


def write_jsonl(stream: TextIO, report: RepositoryReport) -> None:
    stream.write(json.dumps(report_dict(report), sort_keys=False) + "\n")
    stream.flush()


def write_json(stream: TextIO, reports: list[RepositoryReport], summary: BatchSummary) -> None:
    document = {
        "repositories": [report_dict(r) for r in sorted(reports, key=lambda r: r.index)],
        "summary": summary_dict(summary),
    }
    stream.write(json.dumps(document, indent=2) + "\n")


_STATUS_STYLE = {
    RepositoryStatus.OK: "green",
    RepositoryStatus.FAILED: "red",
    RepositoryStatus.TIMEOUT: "yellow",
    RepositoryStatus.CANCELLED: "magenta",
}


def write_table(console: Console, reports: list[RepositoryReport], summary: BatchSummary) -> None:
    table = Table(title="clonegate", show_lines=False)
    for column in ("#", "repository", "status", "branch", "commit", "files", "tests", "detail"):
        table.add_column(column, overflow="fold")
    for r in sorted(reports, key=lambda r: r.index):
        detail = ""
        if r.error is not None:
            detail = r.error.message
        elif r.duplicate_of is not None:
            detail = f"same repository as #{r.duplicate_of}"
        elif r.analysis is not None:
            detail = ", ".join(f"{k} {v}" for k, v in r.analysis.by_framework.items())
        table.add_row(
            str(r.index),
            r.url,
            f"[{_STATUS_STYLE[r.status]}]{r.status}[/]",
            r.ref.branch if r.ref else "",
            r.ref.commit[:10] if r.ref else "",
            str(r.analysis.test_files) if r.analysis else "",
            str(r.analysis.tests) if r.analysis else "",
            detail,
        )
    console.print(table)
    console.print(
        f"{summary.repositories} repositories: {summary.ok} ok, {summary.failed} failed, "
        f"{summary.timeout} timed out, {summary.cancelled} cancelled, "
        f"{summary.duplicates} duplicates; {summary.tests} tests in "
        f"{summary.test_files} files; {summary.elapsed:.1f} s"
    )

"""What starting clonegate imports: a first result waits for every module the command
line loads, so the heavy ones load only where they are used (ADR 0003, issue 14)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def imported_by(*arguments: str) -> set[str]:
    """Every module a fresh ``python -X importtime ARGUMENTS`` imported, by name."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and line.count("|") == 2:
            names.add(line.rsplit("|", 1)[1].strip())
    assert "clonegate" in names or "clonegate_cli" in names, done.stderr[-2000:]
    return names


def top_level(names: set[str]) -> set[str]:
    return {name.split(".", 1)[0] for name in names}


def test_importing_the_library_loads_none_of_its_adapters() -> None:
    loaded = top_level(imported_by("-c", "import clonegate"))
    assert not loaded & {"trio", "dulwich", "tree_sitter", "rich", "typer", "coredis", "sqlite3"}


def test_the_version_answers_before_the_command_line_loads() -> None:
    loaded = top_level(imported_by("-m", "clonegate", "--version"))
    assert not loaded & {"trio", "typer", "rich", "dulwich", "coredis"}


@pytest.mark.parametrize(
    "arguments",
    [
        # A plain run that fails fast (nothing listens on port 1): options parsed, the
        # batch run, the report printed.
        ["analyze", "--format", "json", "git://127.0.0.1:1/nothing"],
        ["analyze", "--help"],
    ],
)
def test_analyze_loads_neither_redis_nor_sqlite_nor_pydantic(arguments: list[str]) -> None:
    # coredis alone took 0.2 s of every command's start when the cluster commands
    # imported it with their module; typer 0.29 added pydantic (0.12 s) to every
    # option's parsing; SQLite belongs to --db and the store commands.
    loaded = top_level(imported_by("-m", "clonegate", *arguments))
    assert "typer" in loaded  # the command line did run
    assert not loaded & {"coredis", "sqlite3", "pydantic"}

"""What starting clonegate imports: a first result waits for every module the command
line loads, so the heavy ones load only where they are used (ADR 0003, issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .support.repos import make_repo
from .support.servers import git_daemon


def imported_by(*arguments: str, env: dict[str, str] | None = None) -> set[str]:
    """Every module a fresh ``python -X importtime ARGUMENTS`` imported, by name.

    Only the process itself: ``-X importtime`` is not passed on to the workers'
    zygote, which starts a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *arguments],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
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


def test_the_zygote_starts_before_the_command_line_loads_typing_or_dataclasses() -> None:
    # clonegate_cli.main starts the workers' zygote once these modules are in; what they
    # import comes before the zygote's whole start-up (typing, dataclasses and inspect,
    # imported there, made the first result ~10 ms later).
    code = "import clonegate_cli, clonegate._adapters.preloads, clonegate._adapters.workers.spawn"
    loaded = top_level(imported_by("-c", code))
    assert not loaded & {"typing", "dataclasses", "inspect", "trio", "dulwich"}


def test_the_first_clone_is_read_and_its_zygote_started_before_typing_or_re() -> None:
    # The raw command line's reader and the zygote with a first clone (issue 47): what
    # they import comes before the first clone can start. (``re`` comes with
    # ``subprocess``, not before: neither ``json`` nor ``pickle`` loads it first.)
    code = (
        "import clonegate_cli, clonegate_cli._early, clonegate.workers, "
        "clonegate._adapters.git.first_clone; clonegate.workers.prestart_first_clone"
    )
    loaded = top_level(imported_by("-c", code))
    assert "clonegate_cli" in loaded
    assert not loaded & {"typing", "dataclasses", "inspect", "json", "pickle", "trio", "typer"}


@pytest.mark.parametrize(
    "arguments",
    [
        # A run that fails fast (nothing listens on port 1): options parsed by Typer
        # (--retries at its default: not a plain analyze), the batch run, the report
        # printed.
        ["analyze", "--retries", "2", "--format", "json", "git://127.0.0.1:1/nothing"],
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


def without_clonegate_variables() -> dict[str, str]:
    """This environment without ``CLONEGATE_*`` (CI sets some): with any, the command
    line is not read as a plain analyze (each may stand for an option)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("CLONEGATE_")}


def test_a_plain_analyze_runs_without_typer() -> None:
    # Typer and the commands' declarations were ~25 ms of a first result (issue 47).
    arguments = ["analyze", "-q", "--format", "json", "git://127.0.0.1:1/nothing"]
    loaded = imported_by("-m", "clonegate", *arguments, env=without_clonegate_variables())
    assert "clonegate_cli._plain" in loaded  # the batch did run, here
    assert "clonegate._adapters.git.dulwich_vcs" in loaded  # composed, and cloned
    assert not top_level(loaded) & {"typer", "click", "coredis", "sqlite3", "pydantic", "rich"}
    assert "clonegate_cli._root" not in loaded


def test_json_output_loads_no_rich_and_a_small_analysis_no_parser(tmp_path: Path) -> None:
    # Rich draws tables and a terminal's progress; a first result in JSON, with stderr
    # no terminal, needs neither it nor (one job lists and scans a small repository in
    # a worker) the parsers and frameworks' definitions in the parent (issue 14).
    root = tmp_path / "served"
    root.mkdir()
    make_repo(root, "tiny", files={"test_a.py": b"def test_a():\n    pass\n"})
    environment = {
        k: v for k, v in os.environ.items() if k not in {"FORCE_COLOR", "TTY_COMPATIBLE"}
    }
    with git_daemon(root) as daemon:
        loaded = imported_by(
            "-m", "clonegate", "analyze", "--format", "json", daemon.url("tiny"), env=environment
        )
    assert "clonegate._adapters.analysis.analyzer" in loaded  # it did analyze
    assert not {name for name in loaded if name.split(".")[0] == "rich"}
    assert not loaded & {
        "clonegate._adapters.analysis.scan",
        "clonegate._adapters.analysis.config",
        "clonegate._adapters.analysis.cache_keys",
        "tree_sitter",
        "dulwich",
        # The clone's worker side, named to the workers, not imported here (issue 47).
        "clonegate._adapters.git.clone_worker",
        "clonegate._adapters.git.head_worker",
        "clonegate._adapters.git.worker_errors",
        "clonegate._adapters.git.worker_http",
    }


@pytest.mark.parametrize(
    ("options", "runner"),
    [([], "clonegate_cli._plain"), (["--retries", "2"], "clonegate_cli._root")],
)
def test_analyze_loads_no_other_command_and_no_email_package(
    options: list[str], runner: str
) -> None:
    # The cluster's, the store's, the report's and the demo's modules were ~5 ms of a
    # first result, the email package (a Retry-After date's parser) ~3 ms (issue 47).
    arguments = ["analyze", *options, "--format", "json", "git://127.0.0.1:1/x"]
    loaded = imported_by("-m", "clonegate", *arguments, env=without_clonegate_variables())
    assert runner in loaded  # the command line did run, plain or through Typer
    assert not loaded & {
        "clonegate_cli.app",
        "clonegate_cli._cluster",
        "clonegate_cli._store",
        "clonegate_cli._report",
        "clonegate_cli._demo",
        "socketserver",
        "email",
    }

"""The public API: a short top level and public submodules, each from one table (ADR 0001).

Each public module keeps one table of where its names live (``_TABLE``); its
``__all__`` and lazy attributes come from it (clonegate._exports). The imports that
type checkers read are written out too, and checked here against the table, so the
two cannot drift.
"""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import clonegate
from clonegate._exports import where_each_name_lives

ROOT = Path(__file__).resolve().parents[1]
PUBLIC = [
    "clonegate",
    "clonegate.errors",
    "clonegate.store",
    "clonegate.cluster",
    "clonegate.workers",
    "clonegate.sources",
]
# The top level's bound: httpx exports about 70 names (issue 42); issue 43 added
# with_adaptive, with_host_rate and with_breaker.
MOST_TOP_LEVEL_NAMES = 73


def source_of(public: str) -> Path:
    relative = public.replace(".", "/")
    package = ROOT / relative / "__init__.py"
    return package if package.exists() else ROOT / f"{relative}.py"


def imports_for_type_checkers(public: str) -> dict[str, str]:
    """``{name: module}`` of the module's ``from .x import Name as Name`` imports."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(source_of(public).read_text())):
        if not isinstance(node, ast.ImportFrom) or node.level != 1:
            continue
        for alias in node.names:
            if alias.asname == alias.name:  # the explicit re-export form
                found[alias.name] = f".{node.module}"
    return found


def test_the_top_level_exports_at_most_73_names() -> None:
    assert len(clonegate.__all__) <= MOST_TOP_LEVEL_NAMES
    assert len(set(clonegate.__all__)) == len(clonegate.__all__)


@pytest.mark.parametrize("public", PUBLIC)
def test_the_type_checkers_imports_are_the_table(public: str) -> None:
    module = importlib.import_module(public)
    table = where_each_name_lives(module._TABLE)
    assert imports_for_type_checkers(public) == table
    assert module.__all__ == sorted(table)
    assert dir(module) == sorted(table)


@pytest.mark.parametrize("public", PUBLIC)
def test_each_name_is_the_object_of_the_module_the_table_names(public: str) -> None:
    module = importlib.import_module(public)
    for name, where in where_each_name_lives(module._TABLE).items():
        source = importlib.import_module(where, "clonegate")
        assert getattr(module, name) is getattr(source, name), (public, name)


def test_each_public_name_has_one_home() -> None:
    homes: dict[str, list[str]] = {}
    for public in PUBLIC:
        for name in importlib.import_module(public).__all__:
            homes.setdefault(name, []).append(public)
    assert {name: where for name, where in homes.items() if len(where) > 1} == {}


@pytest.mark.parametrize(
    "internal",
    [
        "RedisWaiter",
        "RedisHolder",
        "WorkerPool",
        "PressureController",
        "BudgetDecision",
        "GateEntry",
    ],
)
def test_internals_are_not_at_the_top_level(internal: str) -> None:
    assert internal not in clonegate.__all__
    with pytest.raises(AttributeError, match=f"module 'clonegate' has no attribute '{internal}'"):
        getattr(clonegate, internal)


def test_an_unknown_name_of_a_submodule_says_so() -> None:
    import clonegate.store

    with pytest.raises(AttributeError, match=r"module 'clonegate\.store' has no attribute 'x'"):
        clonegate.store.x  # noqa: B018


def test_importing_the_public_modules_loads_no_adapter_library() -> None:
    # In a fresh interpreter: the command line imports them before its zygote starts.
    check = (
        "import sys\n"
        f"for public in {PUBLIC!r}:\n"
        "    __import__(public)\n"
        "loaded = {'trio', 'sqlite3', 'coredis', 'dulwich', 'tree_sitter'} & set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True)


def test_the_command_line_loads_no_adapter_before_its_workers_start() -> None:
    # The composition (clonegate._app) imports dulwich's and the analyzer's adapters:
    # 40 ms the first result waited for when a module of the CLI imported it at the top.
    check = (
        "import sys, clonegate_cli.app\n"
        "loaded = {'clonegate._app', 'clonegate._adapters.git.dulwich_vcs',\n"
        "          'clonegate._adapters.analysis.analyzer', 'dulwich', 'coredis'}\n"
        "loaded &= set(sys.modules)\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True)


def test_the_changelog_says_where_each_moved_name_went() -> None:
    # Rows such as "| `clonegate.StoreError` | `from clonegate.store import StoreError` |".
    rows = re.findall(
        r"^\| `clonegate\.(\w+)` \| (?:`from (clonegate\.\w+) import (\w+)`|removed)",
        (ROOT / "CHANGELOG.md").read_text(),
        re.MULTILINE,
    )
    assert len(rows) >= 56  # the names that left the top level in issue 42
    for name, home, imported in rows:
        assert name not in clonegate.__all__, name
        if home:
            assert imported == name
            assert name in importlib.import_module(home).__all__, (name, home)

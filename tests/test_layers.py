"""The dependency rule (ADR 0001) holds, and the check that enforces it can fail.

`lint-imports` (import-linter) reads the contracts in pyproject.toml; .ci/run runs it
on the tree. Here it runs on a copy of the tree, first as it is, then with a use-case
module that imports an adapter, then with a domain module that imports dulwich, and
with a command-line module that reaches past the public API.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in ("clonegate", "cli", "pyproject.toml"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, tmp_path / name)
    return tmp_path


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    # The copy comes first on the path, ahead of the installed (editable) project.
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'cli'}"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


def test_the_tree_keeps_every_contract(tree: Path) -> None:
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "4 kept, 0 broken" in result.stdout


def test_a_use_case_importing_an_adapter_breaks_the_layers(tree: Path) -> None:
    append(tree / "clonegate/_usecase/analyze.py", "from .._adapters.git import dulwich_vcs")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "Layers point inward" in result.stdout
    assert "clonegate._usecase.analyze -> clonegate._adapters.git.dulwich_vcs" in result.stdout


def test_the_domain_importing_dulwich_is_forbidden(tree: Path) -> None:
    append(tree / "clonegate/_domain/vcs.py", "import dulwich.repo")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "The domain and the use case use no adapter library BROKEN" in result.stdout


def test_the_library_importing_the_cli_is_forbidden(tree: Path) -> None:
    append(tree / "clonegate/_domain/events.py", "import clonegate_cli.app")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "The library never imports the command line BROKEN" in result.stdout


def test_the_cli_importing_a_private_module_is_forbidden(tree: Path) -> None:
    # What the command line did before issue 42 (the Redis client's type).
    append(
        tree / "cli/clonegate_cli/_cluster_jobs.py", "from clonegate._adapters.redis import queue"
    )
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "The command line uses only the public API BROKEN" in result.stdout
    assert "clonegate_cli._cluster_jobs -> clonegate._adapters.redis" in result.stdout


def test_the_cli_may_import_the_public_submodules(tree: Path) -> None:
    append(tree / "cli/clonegate_cli/_cluster_jobs.py", "import clonegate.store, clonegate.workers")
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr

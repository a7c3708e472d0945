"""The wheel installs `clonegate` and `clonegate_cli`, never a bare `cli` (ADR 0001)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import clonegate

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # The build backend itself (PEP 517 build_wheel), as any frontend would call it; the
    # test environment has hatchling from the lock, and need not have pip.
    build = "import sys; from hatchling.build import build_wheel; build_wheel(sys.argv[1])"
    subprocess.run([sys.executable, "-c", build, str(out)], cwd=ROOT, check=True)
    (built,) = out.glob("clonegate-*.whl")
    return built


@pytest.fixture(scope="module")
def wheel_names(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def test_wheel_has_only_project_owned_top_level_names(wheel_names: set[str]) -> None:
    top_level = {name.split("/")[0] for name in wheel_names}
    assert top_level == {
        "clonegate",
        "clonegate_cli",
        f"clonegate-{clonegate.__version__}.dist-info",
    }


def test_wheel_is_typed_and_has_the_console_script(wheel: Path, wheel_names: set[str]) -> None:
    assert {"clonegate/py.typed", "clonegate_cli/py.typed"} <= wheel_names
    (entry_points,) = (n for n in wheel_names if n.endswith("entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(entry_points).decode()
    assert "clonegate = clonegate_cli:main" in text


def test_every_public_name_resolves_from_the_module_it_is_listed_under() -> None:
    # In a fresh interpreter: another test may have resolved some names already.
    check = (
        "import importlib\n"
        "for public in ('clonegate', 'clonegate.errors', 'clonegate.store', 'clonegate.cluster',"
        " 'clonegate.workers'):\n"
        "    module = importlib.import_module(public)\n"
        "    missing = [n for n in module.__all__ if getattr(module, n, None) is None]\n"
        "    assert not missing, (public, missing)\n"
    )
    subprocess.run([sys.executable, "-c", check], check=True)

"""The suite's layout (issue 42): a helper shared by test modules lives in the
``tests/support`` package, and no module of the suite imports a test module. Importing
one runs its module-level code and binds its names (fixtures included) in the
importer, and ties modules together that should run, read and move on their own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent


def _names_a_test_module(module: str) -> bool:
    """Whether a dotted name, absolute or relative to ``tests``, is a test module's."""
    parts = module.split(".")
    if parts[0] == "tests":
        parts = parts[1:]
    return bool(parts) and parts[0].startswith("test_")


def imports_of_test_modules(source: str) -> list[str]:
    """Each import of a test module in ``source``, as ``line N: name``, wherever it is
    (inside a function as well as at the top)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            # `from . import test_x` and `from tests import test_x` name the module last.
            names = [base] if base not in ("", "tests") else [a.name for a in node.names]
        else:
            continue
        found += [f"line {node.lineno}: {name}" for name in names if _names_a_test_module(name)]
    return found


def test_no_module_of_the_suite_imports_a_test_module() -> None:
    modules = sorted(TESTS.glob("*.py")) + sorted((TESTS / "support").rglob("*.py"))
    assert len(modules) > 100  # the suite itself, not an empty directory
    offending = {
        str(path.relative_to(TESTS.parent)): imports
        for path in modules
        if (imports := imports_of_test_modules(path.read_text()))
    }
    assert offending == {}, "move the shared helper into tests/support"


@pytest.mark.parametrize(
    "source",
    [
        "from .test_store import KEY",
        "from tests.test_store import KEY",
        "from . import test_store",
        "from tests import test_store",
        "import tests.test_store",
        "import tests.test_store as store",
        "def f():\n    from .test_store import KEY",
        "from ..test_store import KEY",  # from tests/support
    ],
)
def test_each_way_of_importing_a_test_module_is_found(source: str) -> None:
    assert len(imports_of_test_modules(source)) == 1


@pytest.mark.parametrize(
    "source",
    [
        "from .support.inventories import KEY",
        "from tests.support.fakes import FakeVCS",
        "from . import support",
        "from clonegate import TestCase, test_inventory",
        "from .conftest import anything",
        "import tests.support.servers",
    ],
)
def test_imports_of_helpers_and_of_the_library_are_not(source: str) -> None:
    assert imports_of_test_modules(source) == []

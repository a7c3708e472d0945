"""pytest: ``test_*.py``/``*_test.py`` files, or what its ini options say."""

from __future__ import annotations

import configparser
import dataclasses
import functools
import shlex
from typing import Any

from ..globs import check_globs, check_names, glob_matches, name_matches
from .definition import Framework, Scope, Settings
from .documents import toml_of

# pytest's own defaults (``pytest --help``: python_files, norecursedirs...).
DEFAULTS = Settings(
    names=("test_*.py", "*_test.py"),
    skip_dirs=("*.egg", ".*", "_darcs", "build", "CVS", "dist", "node_modules", "venv", "{arch}"),
    classes=("Test",),
    functions=("test",),
)
# Where its options live, by file, in pytest's order of precedence within one directory.
# pytest 9 added ``pytest.toml`` and ``[tool.pytest]`` with native TOML values.
_SECTIONS = {
    "pytest.toml": "pytest",
    ".pytest.toml": "pytest",
    "pytest.ini": "pytest",
    ".pytest.ini": "pytest",
    "pyproject.toml": "tool.pytest.ini_options",
    "tox.ini": "pytest",
    "setup.cfg": "tool:pytest",
}
_OPTIONS = {
    "python_files": "names",
    "python_classes": "classes",
    "python_functions": "functions",
    "testpaths": "roots",
    "norecursedirs": "skip_dirs",
}


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    """The options of ``pytest.toml``, ``pytest.ini``, ``pyproject.toml``, ``tox.ini`` or
    ``setup.cfg``;
    None for ``conftest.py``, which names pytest but holds no ini options."""
    if name == "conftest.py":
        return None
    values = _toml_values(name, content) if name.endswith(".toml") else _ini_values(name, content)
    changes: dict[str, Any] = {_OPTIONS[option]: value for option, value in values.items()}
    settings = dataclasses.replace(defaults, **changes)
    check_names(settings.names, "python_files pattern")
    check_names(settings.skip_dirs, "norecursedirs pattern")
    check_globs(tuple(_root(r) + "/**" for r in settings.roots), "testpaths entry")
    return settings


def _toml_values(name: str, content: bytes) -> dict[str, tuple[str, ...]]:
    """The options a ``pytest.toml`` or ``pyproject.toml`` sets, by ini name."""
    table: Any = toml_of(content)
    path = ("tool", "pytest") if name == "pyproject.toml" else ("pytest",)
    for key in path:
        table = table.get(key, {}) if isinstance(table, dict) else {}
    # ``[tool.pytest.ini_options]`` (ini-style strings) or pytest 9's native
    # ``[tool.pytest]``; pytest refuses a file that has both.
    if isinstance(table, dict) and isinstance(table.get("ini_options"), dict):
        table = table["ini_options"]
    values: dict[str, tuple[str, ...]] = {}
    for option in _OPTIONS:
        value = table.get(option)
        if isinstance(value, str):
            values[option] = tuple(shlex.split(value))
        elif isinstance(value, list):
            values[option] = tuple(str(v) for v in value)
    return values


def _ini_values(name: str, content: bytes) -> dict[str, tuple[str, ...]]:
    """The options a ``pytest.ini``, ``tox.ini`` or ``setup.cfg`` sets, by ini name."""
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.read_string(content.decode("utf-8", "replace"))
    section = _SECTIONS[name]
    values: dict[str, tuple[str, ...]] = {}
    if parser.has_section(section):
        for option in _OPTIONS:
            if parser.has_option(section, option):
                values[option] = tuple(shlex.split(parser.get(section, option)))
    return values


def selects(path: str, scope: Scope) -> bool:
    """Collected by pytest run from the config's directory with no arguments: under a
    ``testpaths`` entry (if any), in no ``norecursedirs`` directory, named by
    ``python_files``. (pytest takes ``conftest.py`` and ``__init__.py`` only as such.)"""
    settings = scope.settings
    relative = scope.relative(path)
    # The name first: most files of a tree are no test, and it tells them apart alone.
    if not name_matches(settings.names, relative):
        return False
    directory, _, name = relative.rpartition("/")
    if name in ("conftest.py", "__init__.py"):
        return False
    if settings.roots and not any(_under(root, relative) for root in settings.roots):
        return False
    return "/" not in relative or not _skipped(settings.skip_dirs, directory)


@functools.lru_cache(maxsize=4096)
def _skipped(skip_dirs: tuple[str, ...], directory: str) -> bool:
    # Asked for every file: once per directory (and norecursedirs) is enough.
    return any(name_matches(skip_dirs, name) for name in directory.split("/"))


def _root(root: str) -> str:
    return root.removeprefix("./").rstrip("/")


def _under(root: str, relative: str) -> bool:
    root = _root(root)
    if root in ("", "."):
        return True
    return relative.startswith(root + "/") or glob_matches(root + "/**", relative)


FRAMEWORK = Framework(
    name="pytest",
    family="python",
    selects=selects,
    defaults=DEFAULTS,
    imports=("pytest", "_pytest"),
    config_files=("pytest.toml", ".pytest.toml", "pytest.ini", ".pytest.ini", "conftest.py"),
    config_signs=(
        ("pyproject.toml", b"[tool.pytest"),
        ("tox.ini", b"[pytest]"),
        ("setup.cfg", b"[tool:pytest]"),
    ),
    read_config=read_config,
    fallback=True,
)

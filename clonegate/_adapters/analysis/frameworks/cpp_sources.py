"""Which C++ files are test sources, for GoogleTest, Catch2 and doctest alike (ADR 0004).

None of them has a file rule of its own: a test binary is whatever the build
compiles. The analyzer goes by the common conventions (``*_test.cc``,
``*_unittest.cc``, ``test/**``, ``tests/**``) and by what a ``CMakeLists.txt`` names
literally in its ``add_executable`` calls (a file whose test macros a build compiles
under any name). A selected file is read only if it holds the framework's macros (its
``requires``).
"""

from __future__ import annotations

import functools
import posixpath
import re

from .definition import Scope, Settings

EXTENSIONS = (".cc", ".cpp", ".cxx")
_SUFFIXES = tuple(s + e for s in ("_test", "_tests", "_unittest") for e in EXTENSIONS)
_DIRECTORIES = frozenset({"test", "tests"})
# ``add_executable(name [options] sources...)``; ``${…}`` and generator expressions
# are not data, and are left out.
_ADD_EXECUTABLE = re.compile(rb"add_executable\s*\(([^()]*)\)", re.I)
_SOURCE = re.compile(r"[\w./+-]+\.(?:cc|cpp|cxx)")
# Sources named by one CMakeLists.txt: a real one names tens.
MAX_SOURCES = 2_000


def read_cmake(name: str, content: bytes, defaults: Settings) -> Settings:
    """The sources a ``CMakeLists.txt`` compiles into executables, as literal paths
    relative to its directory (no glob character can be in one)."""
    files: list[str] = []
    for call in _ADD_EXECUTABLE.finditer(content):
        for word in call.group(1).decode("utf-8", "replace").split()[1:]:
            word = word.strip("\"'")
            if _SOURCE.fullmatch(word) and "${" not in word and len(files) < MAX_SOURCES:
                path = posixpath.normpath(word.removeprefix("./"))
                if not path.startswith("../"):
                    files.append(path)
    return Settings(files=tuple(files), interface=defaults.interface)


def selects(path: str, scope: Scope) -> bool:
    *directories, name = path.split("/")
    if not name.endswith(EXTENSIONS):
        return False
    if name.endswith(_SUFFIXES) or not _DIRECTORIES.isdisjoint(directories):
        return True
    if scope.directory is None or not scope.settings.files:
        return False
    return scope.relative(path) in _sources(scope.settings.files)


@functools.lru_cache(maxsize=256)
def _sources(files: tuple[str, ...]) -> frozenset[str]:
    """The literal paths as a set, made once per config: a file is one lookup, not
    one match per source named (2,000 of them times every file below)."""
    return frozenset(files)

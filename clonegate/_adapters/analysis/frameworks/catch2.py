"""Catch2: ``TEST_CASE``/``SCENARIO`` (and template test cases) with their
``SECTION``s in C++ test sources (:mod:`.cpp_sources`), read by :mod:`..cpp`."""

from __future__ import annotations

from .cpp_sources import read_cmake, selects
from .definition import Framework, Settings

FRAMEWORK = Framework(
    name="catch2",
    family="cpp",
    selects=selects,
    defaults=Settings(interface="catch2"),
    imports=("catch2",),
    exact_imports=("catch.hpp", "catch2.hpp"),
    config_files=("CMakeLists.txt",),
    read_config=read_cmake,
    signals=frozenset({"catch2"}),
    requires="catch2",
)

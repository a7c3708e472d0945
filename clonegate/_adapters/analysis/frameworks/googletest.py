"""GoogleTest: ``TEST``/``TEST_F``/``TEST_P``/``TYPED_TEST(_P)`` in C++ test sources
(:mod:`.cpp_sources`), read by :mod:`..cpp`."""

from __future__ import annotations

from .cpp_sources import read_cmake, selects
from .definition import Framework, Settings

FRAMEWORK = Framework(
    name="googletest",
    family="cpp",
    selects=selects,
    defaults=Settings(interface="googletest"),
    imports=("gtest", "gmock"),
    config_files=("CMakeLists.txt",),
    read_config=read_cmake,
    signals=frozenset({"googletest"}),
    requires="googletest",
)

"""doctest: ``TEST_CASE``/``SCENARIO`` (and template test cases) with their
``SUBCASE``s, in ``TEST_SUITE``s, in C++ test sources (:mod:`.cpp_sources`), read by
:mod:`..cpp` and :mod:`..cpp_doctest`. A file is doctest's when it includes
``doctest.h`` (or any header named ``doctest…``) or writes a macro only doctest has."""

from __future__ import annotations

from .cpp_sources import read_cmake, selects
from .definition import Framework, Settings

FRAMEWORK = Framework(
    name="doctest",
    family="cpp",
    selects=selects,
    defaults=Settings(interface="doctest"),
    imports=("doctest",),
    exact_imports=("doctest.h", "doctest.hpp"),
    config_files=("CMakeLists.txt",),
    read_config=read_cmake,
    signals=frozenset({"doctest"}),
    requires="doctest",
)

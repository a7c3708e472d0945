"""The test frameworks the analyzer knows, one module each, registered here (ADR 0004).

Adding a framework is one module with a :class:`Framework` definition and one line in
:data:`FRAMEWORKS`. The order is the priority where two could claim one file: JUnit
5 before 4 (a file importing both runs on Jupiter), vitest before jest (vitest
projects often keep jest's names around).
"""

from __future__ import annotations

import functools

from . import (
    cargo_test,
    catch2,
    cypress,
    doctest,
    go_testing,
    googletest,
    jest,
    junit4,
    junit5,
    kotest,
    kotlin_test,
    minitest,
    mocha,
    mstest,
    node_test,
    nunit,
    pest,
    phpunit,
    playwright,
    pytest,
    rspec,
    swift_testing,
    testng,
    unittest,
    vitest,
    xctest,
    xunit,
)
from .definition import Framework

__all__ = ["FRAMEWORKS", "KEEPS_UNNAMED", "Framework", "by_name", "of_family"]

FRAMEWORKS: tuple[Framework, ...] = (
    pytest.FRAMEWORK,
    unittest.FRAMEWORK,
    vitest.FRAMEWORK,
    jest.FRAMEWORK,
    mocha.FRAMEWORK,
    node_test.FRAMEWORK,
    playwright.FRAMEWORK,
    cypress.FRAMEWORK,
    go_testing.FRAMEWORK,
    kotest.FRAMEWORK,
    testng.FRAMEWORK,
    junit5.FRAMEWORK,
    junit4.FRAMEWORK,
    kotlin_test.FRAMEWORK,
    cargo_test.FRAMEWORK,
    swift_testing.FRAMEWORK,
    xctest.FRAMEWORK,
    pest.FRAMEWORK,
    phpunit.FRAMEWORK,
    rspec.FRAMEWORK,
    minitest.FRAMEWORK,
    googletest.FRAMEWORK,
    catch2.FRAMEWORK,
    doctest.FRAMEWORK,
    nunit.FRAMEWORK,
    mstest.FRAMEWORK,
    xunit.FRAMEWORK,
)

# Families whose test files are kept, as framework "unknown", when nothing names their
# framework and no config of theirs covers the file: jest and vitest (with globals) run
# the same ``*.test.js`` files with the same calls. A Java or Kotlin file that imports
# no framework of the analyzer is no test of its (a helper, or a framework not read).
KEEPS_UNNAMED = frozenset({"javascript"})


@functools.cache
def by_name(name: str) -> Framework:
    return next(f for f in FRAMEWORKS if f.name == name)


@functools.cache
def of_family(family: str) -> tuple[Framework, ...]:
    """The frameworks that read ``family``'s files, in :data:`FRAMEWORKS`' order: the
    listing asks for every file of the tree, and most of the frameworks read another
    family."""
    return tuple(f for f in FRAMEWORKS if f.reads(family))

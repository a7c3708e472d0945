"""JUnit 5 (Jupiter), in Java or Kotlin: test sources that import ``org.junit.jupiter``."""

from __future__ import annotations

from ..java import is_test_source
from .definition import Framework

FRAMEWORK = Framework(
    name="junit5",
    family="java",
    more_families=("kotlin",),
    selects=lambda path, scope: is_test_source(path),
    imports=("org.junit.jupiter",),
)

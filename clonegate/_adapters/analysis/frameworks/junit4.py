"""JUnit 4 (and JUnit 3's ``junit.framework``), in Java or Kotlin: test sources that import it."""

from __future__ import annotations

from ..java import is_test_source
from .definition import Framework

FRAMEWORK = Framework(
    name="junit4",
    family="java",
    more_families=("kotlin",),
    selects=lambda path, scope: is_test_source(path),
    imports=("org.junit", "junit.framework"),
)

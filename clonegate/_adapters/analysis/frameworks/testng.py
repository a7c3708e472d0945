"""TestNG, in Java or Kotlin: test sources that import ``org.testng``.

Its ``@Test`` on a method, or on a class (its public methods are tests), is read by
the language's reader with JUnit's (:mod:`..java`): TestNG's own forms never compile
in a JUnit file.
"""

from __future__ import annotations

from ..java import is_test_source
from .definition import Framework

FRAMEWORK = Framework(
    name="testng",
    family="java",
    more_families=("kotlin",),
    selects=lambda path, scope: is_test_source(path),
    imports=("org.testng",),
)

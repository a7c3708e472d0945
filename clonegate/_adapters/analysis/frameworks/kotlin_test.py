"""``kotlin.test``: Kotlin test sources that import it, run on JUnit (4 or 5) on the
JVM; its ``@Test``/``@Ignore`` are JUnit's under other names."""

from __future__ import annotations

from ..java import is_test_source
from .definition import Framework

FRAMEWORK = Framework(
    name="kotlin-test",
    family="kotlin",
    selects=lambda path, scope: is_test_source(path),
    imports=("kotlin.test",),
)

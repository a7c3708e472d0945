"""kotest: Kotlin test sources that import ``io.kotest``; its specs are read by
:mod:`..kotlin` (a class extending one of kotest's spec styles)."""

from __future__ import annotations

from ..java import is_test_source
from .definition import Framework

FRAMEWORK = Framework(
    name="kotest",
    family="kotlin",
    selects=lambda path, scope: is_test_source(path),
    imports=("io.kotest",),
)

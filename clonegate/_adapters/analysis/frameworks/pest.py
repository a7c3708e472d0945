"""Pest: files with top-level ``it``, ``test`` or ``describe`` calls, among the files
PHPUnit's configuration selects (Pest runs on PHPUnit and reads its ``phpunit.xml``).
A class-based file in a Pest project is PHPUnit's (:mod:`.phpunit`)."""

from __future__ import annotations

from . import phpunit
from .definition import Framework

FRAMEWORK = Framework(
    name="pest",
    family="php",
    selects=phpunit.selects,
    defaults=phpunit.DEFAULTS,
    imports=("Pest",),
    settings_from="phpunit",
    signals=frozenset({"pest"}),
    requires="pest",
)

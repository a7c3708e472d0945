"""Swift Testing: ``@Test`` functions and methods, ``@Suite`` types, in Swift test
files."""

from __future__ import annotations

import re

from .definition import Framework
from .swift_files import SIGNAL_TESTING, is_test_file

FRAMEWORK = Framework(
    name="swift-testing",
    family="swift",
    selects=is_test_file,
    exact_imports=("Testing",),
    config_files=("Package.swift",),
    signals=frozenset({SIGNAL_TESTING}),
    needs_import=True,
    hint=re.compile(rb"\bTesting\b|@Test\b|@Suite\b"),
)

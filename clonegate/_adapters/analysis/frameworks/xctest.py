"""XCTest: ``test*`` methods of ``XCTestCase`` subclasses, in Swift test files."""

from __future__ import annotations

import re

from .definition import Framework
from .swift_files import SIGNAL_XCTEST, is_test_file

FRAMEWORK = Framework(
    name="xctest",
    family="swift",
    selects=is_test_file,
    exact_imports=("XCTest",),
    config_files=("Package.swift",),
    signals=frozenset({SIGNAL_XCTEST}),
    needs_import=True,
    hint=re.compile(rb"XCTest"),
)

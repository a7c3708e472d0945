"""What XCTest and Swift Testing share: which Swift files are test files, and the
signals the Swift reader gives for each."""

from __future__ import annotations

from .definition import Scope

SIGNAL_XCTEST = "xctestcase"
SIGNAL_TESTING = "swift-testing"


def is_test_file(path: str, scope: Scope) -> bool:
    """``*Tests.swift`` anywhere (Xcode's test targets), and everything under
    ``Tests/`` beside a ``Package.swift`` (SwiftPM's test targets)."""
    if path.endswith("Tests.swift"):
        return True
    return scope.directory is not None and scope.relative(path).startswith("Tests/")

"""cargo test: ``#[test]`` functions in a crate's test targets.

Targets: ``src/**`` (unit tests), ``tests/*.rs`` and ``tests/<dir>/main.rs`` with the
modules beside it. Other files under ``tests/`` are not targets: trybuild and
compile-fail fixtures (``tests/ui/*.rs``) are compiled by a test, never run as tests.
Examples and benches are built by ``cargo test`` but their tests are off by default.
"""

from __future__ import annotations

import posixpath

from .definition import Framework, Scope


def selects(path: str, scope: Scope) -> bool:
    if scope.directory is None:  # no Cargo.toml above: no targets to go by
        return True
    parts = scope.relative(path).split("/")
    if len(parts) == 1 or parts[0] == "src":
        return True
    if parts[0] != "tests":
        return False
    if len(parts) == 2:
        return True
    return posixpath.join(scope.directory, "tests", parts[1]) in scope.mains


FRAMEWORK = Framework(
    name="cargo-test",
    family="rust",
    selects=selects,
    config_files=("Cargo.toml",),
    fallback=True,
)

"""cargo test: ``#[test]`` functions in a crate's test targets.

Targets: ``src/**`` (unit tests), ``tests/*.rs`` and ``tests/<dir>/main.rs`` with the
modules beside it, and the ``path`` of each ``[lib]``, ``[[bin]]`` and ``[[test]]`` the
manifest declares (a fuzz crate's ``fuzz_targets/x.rs``) with its modules. Other files
under ``tests/`` are not targets: trybuild and compile-fail fixtures (``tests/ui/*.rs``)
are compiled by a test, never run as tests. Examples and benches are built by
``cargo test`` but their tests are off by default.
"""

from __future__ import annotations

import posixpath
from typing import Any

from ..globs import check_globs, glob_matches
from .definition import Framework, Scope, Settings
from .documents import toml_of

_TESTED_TARGETS = ("lib", "bin", "test")  # what a plain ``cargo test`` runs


def read_config(name: str, content: bytes, defaults: Settings) -> Settings:
    """The files of the targets ``Cargo.toml`` places by ``path``, as globs."""
    manifest: Any = toml_of(content)
    files: list[str] = []
    for kind in _TESTED_TARGETS:
        targets = manifest.get(kind, [])
        for target in [targets] if isinstance(targets, dict) else targets:
            path = target.get("path") if isinstance(target, dict) else None
            if isinstance(path, str) and path.endswith(".rs"):
                path = posixpath.normpath(path.removeprefix("./"))
                files.append(path)
                # Its modules: beside a lib.rs/main.rs/mod.rs, else in a folder of its name.
                stem = path.removesuffix(".rs")
                base = posixpath.basename(stem)
                folder = posixpath.dirname(path) if base in ("lib", "main", "mod") else stem
                files.append(posixpath.join(folder, "**") if folder else "**")
    check_globs(tuple(files), "target path")
    return Settings(files=tuple(files))


def selects(path: str, scope: Scope) -> bool:
    if scope.directory is None:  # no Cargo.toml above: no targets to go by
        return True
    relative = scope.relative(path)
    parts = relative.split("/")
    if len(parts) == 1 or parts[0] == "src":
        return True
    if any(glob_matches(pattern, relative) for pattern in scope.settings.files):
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
    read_config=read_config,
    fallback=True,
)

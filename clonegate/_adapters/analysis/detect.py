"""Which files are test files, in which language, and for which framework (ADR 0004)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

# Directories never scanned, at any depth: dependencies, build output, caches.
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        "node_modules",
        "vendor",
        "dist",
        "build",
        "target",
        "out",
        ".next",
        ".nuxt",
        "__pycache__",
        ".cache",
        ".venv",
        "venv",
        ".tox",
        "site-packages",
        "bower_components",
        "third_party",
        "coverage",
        "__fixtures__",
        "__mocks__",
    }
)
MAX_FILE_BYTES = 10 * 1024 * 1024

LANGUAGE_BY_EXTENSION = {
    ".py": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".java": "java",
    ".rs": "rust",
}
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})

# Config files that place every file below their directory in a framework's scope.
CONFIG_FILES: dict[str, str] = {
    **{f"jest.config.{e}": "jest" for e in ("js", "ts", "mjs", "cjs", "json", "mts", "cts")},
    **{f"vitest.config.{e}": "vitest" for e in ("js", "ts", "mjs", "cjs", "mts", "cts")},
    **{f".mocharc.{e}": "mocha" for e in ("js", "cjs", "mjs", "json", "jsonc", "yaml", "yml")},
    "pytest.ini": "pytest",
    "conftest.py": "pytest",
}
# Config files that name a framework only if their content says so.
CONFIG_CONTENT: dict[str, tuple[tuple[bytes, str], ...]] = {
    "pyproject.toml": ((b"[tool.pytest", "pytest"),),
    "setup.cfg": ((b"[tool:pytest]", "pytest"),),
    "tox.ini": ((b"[pytest]", "pytest"),),
    "package.json": ((b'"vitest"', "vitest"), (b'"jest"', "jest"), (b'"mocha"', "mocha")),
}


def skipped_directory(path: str) -> bool:
    return any(part in SKIPPED_DIRECTORIES for part in path.split("/")[:-1])


def language_of(path: str) -> str | None:
    return LANGUAGE_BY_EXTENSION.get(posixpath.splitext(path)[1].lower())


def is_candidate(path: str) -> bool:
    """Whether ``path`` (relative, POSIX) may hold tests, by the conventions of its language.

    Rust files are all candidates: unit tests live inline in ``src``; a cheap
    content check in the analyzer spares parsing files without ``#[test``.
    """
    language = language_of(path)
    name = posixpath.basename(path)
    parts = path.split("/")
    if language == "python":
        if name in ("conftest.py", "__init__.py"):
            return False
        stem = name.removesuffix(".py")
        return stem.startswith("test_") or stem.endswith("_test") or "tests" in parts[:-1]
    if language in JS_LANGUAGES:
        lowered = name.lower()
        return ".test." in lowered or ".spec." in lowered or "__tests__" in parts[:-1]
    if language == "go":
        return name.endswith("_test.go")
    if language == "java":
        if "/".join(parts[:2]) == "src/main" or "/src/main/" in f"/{path}":
            return False
        stem = name.removesuffix(".java")
        in_test_tree = "test" in parts[:-1] or "tests" in parts[:-1]
        return stem.endswith(("Test", "Tests")) or stem.startswith("Test") or in_test_tree
    return language == "rust"


class ConfigScopes:
    """Framework config files by directory; the nearest one above a file decides (ADR 0004).

    Every config file is read once, when the scopes are made, so the scopes hold plain
    data: they are pickled to the worker processes that scan parts of one commit.
    """

    def __init__(self, paths: Iterable[str], read: Callable[[str], bytes]) -> None:
        # directory -> frameworks its config files name, in the order of their paths
        self._by_directory: dict[str, tuple[str, ...]] = {}
        for path in sorted(paths):
            name = posixpath.basename(path)
            if name in CONFIG_FILES or name in CONFIG_CONTENT:
                directory = posixpath.dirname(path)
                found = self._by_directory.get(directory, ()) + _frameworks_of(path, read)
                self._by_directory[directory] = found

    def framework_for(self, path: str, choices: frozenset[str]) -> str | None:
        """The framework of the nearest config, among ``choices``, in ``path``'s directories."""
        directory = posixpath.dirname(path)
        while True:
            for framework in self._by_directory.get(directory, ()):
                if framework in choices:
                    return framework
            if not directory:
                return None
            directory = posixpath.dirname(directory)


def _frameworks_of(config: str, read: Callable[[str], bytes]) -> tuple[str, ...]:
    name = posixpath.basename(config)
    if name in CONFIG_FILES:
        return (CONFIG_FILES[name],)
    try:
        content = read(config)
    except (OSError, KeyError, ValueError):  # unreadable: names no framework
        return ()
    return tuple(fw for sign, fw in CONFIG_CONTENT[name] if sign in content)


def js_framework_from_imports(imports: set[str]) -> str | None:
    for framework, prefixes in (
        ("vitest", ("vitest",)),
        ("jest", ("@jest/globals", "@jest/", "jest")),
        ("mocha", ("mocha",)),
    ):
        if any(i == p or i.startswith(p.rstrip("/") + "/") for i in imports for p in prefixes):
            return framework
    return None


def java_framework_from_imports(imports: set[str]) -> str | None:
    if any(i.startswith("org.junit.jupiter.") for i in imports):
        return "junit5"
    if any(i.startswith(("org.junit.", "junit.framework.")) for i in imports):
        return "junit4"
    return None

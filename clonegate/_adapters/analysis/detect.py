"""Which files the analyzer looks at, and in which language (ADR 0004); which of them
are test files is each framework's own rule (``frameworks/``)."""

from __future__ import annotations

import posixpath

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
    ".kt": "kotlin",
    ".rs": "rust",
    ".swift": "swift",
    ".php": "php",
    ".rb": "ruby",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".cs": "csharp",
}
JS_LANGUAGES = frozenset({"javascript", "typescript", "tsx"})
# Languages read by one reader and claimed by the same frameworks.
FAMILY = {language: language for language in set(LANGUAGE_BY_EXTENSION.values())} | dict.fromkeys(
    JS_LANGUAGES, "javascript"
)


def skipped_directory(path: str) -> bool:
    return any(part in SKIPPED_DIRECTORIES for part in path.split("/")[:-1])


def language_of(path: str) -> str | None:
    return LANGUAGE_BY_EXTENSION.get(posixpath.splitext(path)[1].lower())

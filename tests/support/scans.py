"""What the analyzer finds, in the forms the framework tables compare: a file's tests
as ``(suite/…/name, status)`` and a tree's test files with their framework."""

from __future__ import annotations

import contextlib
import textwrap
from collections.abc import Iterator

import pytest

from clonegate import TestFile, TestSuite
from clonegate._adapters.analysis.config import ConfigScopes
from clonegate._adapters.analysis.scan import analyze_file, is_candidate

NO_CONFIG = ConfigScopes([], lambda _: b"")


def found(path: str, source: str) -> list[tuple[str, str]]:
    """Every test of the file as ``(suite/…/name, status)``, in source order per level."""
    result = analyze_file(path, textwrap.dedent(source).encode(), NO_CONFIG)
    return [] if result is None else flattened(result)


def flattened(result: TestFile) -> list[tuple[str, str]]:
    """Every test of ``result`` as ``(suite/…/name, status)``, in source order per level."""
    out: list[tuple[str, str]] = [(t.name, t.status.value) for t in result.tests]

    def walk(prefix: str, suites: tuple[TestSuite, ...]) -> None:
        for suite in suites:
            out.extend((f"{prefix}{suite.name}/{t.name}", t.status.value) for t in suite.tests)
            walk(f"{prefix}{suite.name}/", suite.suites)

    walk("", result.suites)
    return out


def frameworks_of(files: dict[str, str]) -> dict[str, str]:
    """``{path: framework}`` for every file found to hold tests."""
    sources = {path: textwrap.dedent(text).encode() for path, text in files.items()}
    scopes = ConfigScopes(sources, sources.__getitem__)
    frameworks = {}
    for path, data in sources.items():
        if is_candidate(path, scopes):
            result = analyze_file(path, data, scopes)
            if result is not None:
                frameworks[path] = result.framework
    return frameworks


@contextlib.contextmanager
def grammars_built(monkeypatch: pytest.MonkeyPatch, language: str) -> Iterator[list[str]]:
    """The times ``language``'s grammar is built while the block runs: a worker builds
    the parser of a language when it first meets one of its files (ADR 0003)."""
    from clonegate._adapters.analysis import syntax

    built: list[str] = []
    real = syntax._LANGUAGES[language]

    def recorded() -> object:
        built.append(language)
        return real()

    monkeypatch.setitem(syntax._LANGUAGES, language, recorded)
    syntax.kit.cache_clear()
    try:
        yield built
    finally:
        syntax.kit.cache_clear()

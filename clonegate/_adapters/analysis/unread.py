"""Test files in a language or framework the analyzer does not read (issue 40, ADR 0004).

A repository whose tests are all RSpec specs has no test the analyzer can count, and
"0 tests" would say it has none. So the listing also counts the files that look like
tests by the common conventions of the languages and frameworks it does not read, and
the report says how many there are ("34 test files in ruby not read"). A repository
with no such file stays a plain zero.

:data:`UNREAD` is one line per language or framework: when the analyzer comes to read
one, its line goes. A file that some framework of the analyzer selects is never
counted here, whatever its name (it is read, or it is a scan error): a language read
at last drops out even before its line does.
"""

from __future__ import annotations

import functools
import posixpath
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..._domain.inventory import ScanError
from .globs import glob_alternatives
from .problems import describe, retire_after

__all__ = [
    "MAX_PROJECT_BYTES",
    "NOTHING_UNREAD",
    "UNREAD",
    "Conventions",
    "UnreadFiles",
    "unread_files",
]


@dataclass(frozen=True, slots=True)
class Conventions:
    """How test files of one language or framework are commonly laid out.

    ``patterns``: globs on the path below any directory (``spec/**/*_spec.rb`` matches
    ``spec/a_spec.rb`` and ``gems/x/spec/b/c_spec.rb``); the first one a file matches
    is the convention it is counted under. ``extensions``: the file extensions the
    patterns can match, to leave other files at one lookup. ``excludes``: globs (from
    the root) of files that are not tests under the same convention (AVA's helpers).
    ``project_file`` (``package.json``, or ``*.csproj`` for any name ending so) and
    ``project_signs``: the nearest directory above the file that holds a project file
    must hold one naming a sign (lowercase; the file's content is compared lowercased):
    AVA's files are tests in a package that depends on it. ``hints``:
    every path a pattern matches holds one of them, lowercased (checked by the tests):
    most files of a large tree are then passed over without running a pattern.
    """

    extensions: tuple[str, ...]
    patterns: tuple[str, ...]
    excludes: tuple[str, ...] = ()
    project_file: str = ""
    project_signs: tuple[bytes, ...] = ()
    hints: tuple[str, ...] = ("test", "spec")


_AVA_EXTENSIONS = (".js", ".mjs", ".cjs")
# AVA's own defaults (its ``files`` and the helper and fixture directories it skips).
# Its ``*.test.js``/``*.spec.js`` are jest's and vitest's defaults too: read, not here.
_AVA = Conventions(
    _AVA_EXTENSIONS,
    ("test.{js,mjs,cjs}", "{test,tests,__tests__}/**/*.{js,mjs,cjs}", "test-*.{js,mjs,cjs}"),
    excludes=("**/{helper,helpers,fixture,fixtures,__helper__,__helpers__}/**", "**/_*"),
    project_file="package.json",
    project_signs=(b'"ava"',),
)

# What counts, decided in ADR 0004: the layout each framework's own tool looks in by
# default, or one so common it is the convention.
UNREAD: dict[str, Conventions] = {
    "c": Conventions((".c",), ("*{_test,_unittest}.c", "{test,tests}/**/test_*.c")),
    "scala": Conventions((".scala",), ("src/test/**/*.scala", "test/src/**/*.scala")),
    "groovy": Conventions((".groovy",), ("src/test/**/*.groovy",)),
    "elixir": Conventions((".exs",), ("test/**/*_test.exs",)),
    "dart": Conventions((".dart",), ("test/**/*_test.dart",)),
    "clojure": Conventions((".clj", ".cljc", ".cljs"), ("test/**/*_test.{clj,cljc,cljs}",)),
    "haskell": Conventions((".hs",), ("test/**/?*Spec.hs",)),  # not hspec-discover's Spec.hs
    "lua": Conventions((".lua",), ("spec/**/*_spec.lua",)),
    "perl": Conventions((".t",), ("t/**/*.t",), hints=("t/",)),
    "ava": _AVA,
}


@dataclass(frozen=True, slots=True)
class _Rules:
    """One language's conventions compiled into one match: its excludes first, then
    its patterns, so that the index of the first alternative a path matches says both
    whether it is excluded and which pattern it is counted under."""

    name: str
    conventions: Conventions
    first: Callable[[str], int | None]


def _compile(name: str, conventions: Conventions) -> _Rules:
    patterns = tuple("**/" + p for p in conventions.patterns)
    return _Rules(name, conventions, glob_alternatives((*conventions.excludes, *patterns)))


@functools.cache
def _by_extension() -> dict[str, tuple[_Rules, ...]]:
    """The rules of each file extension, compiled once per process when first asked."""
    found: dict[str, list[_Rules]] = {}
    for name, conventions in UNREAD.items():
        rules = _compile(name, conventions)
        for extension in conventions.extensions:
            found.setdefault(extension, []).append(rules)
    return {extension: tuple(rules) for extension, rules in found.items()}


# A project file is read for its signs up to this size (a real one is a few KiB); a
# larger one is refused before it is inflated, and named as a scan error.
MAX_PROJECT_BYTES = 1 << 20


@dataclass(frozen=True, slots=True)
class UnreadFiles:
    """Files not read, per language or framework (``by_language``: ``{"ruby": 34}``)
    and per convention they matched (``by_convention``: ``{"spec/**/*_spec.rb": 30}``);
    each file counts once, under its first match. ``errors``: project files that could
    not be read for their signs (the files below them are then not counted)."""

    by_language: dict[str, int]
    by_convention: dict[str, int]
    errors: tuple[ScanError, ...] = ()


NOTHING_UNREAD = UnreadFiles({}, {})


def unread_files(
    paths: Iterable[str], is_read: Callable[[str], bool], read: Callable[[str], bytes]
) -> UnreadFiles:
    """The files of ``paths`` (a commit's files outside skipped directories) that look
    like tests of a language or framework in :data:`UNREAD` and that ``is_read`` says no
    framework of the analyzer selects. ``read(path)`` gives a project file's content
    (``package.json``, ``*.csproj``) for conventions that need one; it should refuse
    one over :data:`MAX_PROJECT_BYTES` (:class:`.blobs.BlobTooLarge`) before reading it."""
    paths = list(paths)
    projects = _Projects(paths, read)
    languages: Counter[str] = Counter()
    conventions: Counter[str] = Counter()
    by_extension = _by_extension()
    for path in paths:
        found = by_extension.get(posixpath.splitext(path)[1])
        if not found:
            continue
        lowered = path.lower()
        for rules in found:
            if not any(hint in lowered for hint in rules.conventions.hints):
                continue
            pattern = _matching(rules, path)
            if pattern is None:
                continue
            if rules.conventions.project_file and not projects.signed(path, rules.conventions):
                continue
            if not is_read(path):
                languages[rules.name] += 1
                conventions[pattern] += 1
            break
    return UnreadFiles(
        dict(sorted(languages.items())), dict(sorted(conventions.items())), projects.errors()
    )


def _matching(rules: _Rules, path: str) -> str | None:
    """The first of the rules' patterns ``path`` matches, unless an exclude does."""
    index = rules.first(path)
    excludes = len(rules.conventions.excludes)
    if index is None or index < excludes:
        return None
    return rules.conventions.patterns[index - excludes]


class _Projects:
    """Whether the nearest project file above a path names a sign. Each is read once,
    only when a file below it matches, and only the answer is kept: a hostile tree of
    many 10 MB ``package.json`` files costs reads, never their sum in memory."""

    def __init__(self, paths: list[str], read: Callable[[str], bytes]) -> None:
        self._paths = paths
        self._read = read
        self._directories: dict[str, dict[str, list[str]]] = {}
        self._answers: dict[tuple[str, Conventions], bool] = {}
        self._errors: dict[str, ScanError] = {}

    def errors(self) -> tuple[ScanError, ...]:
        return tuple(self._errors.values())

    def signed(self, path: str, conventions: Conventions) -> bool:
        projects = self._projects(conventions.project_file)
        directory = posixpath.dirname(path)
        while directory not in projects:
            if not directory:
                return False
            directory = posixpath.dirname(directory)
        key = (directory, conventions)
        if key not in self._answers:
            signs = conventions.project_signs
            self._answers[key] = any(
                any(sign in self._content(file) for sign in signs) for file in projects[directory]
            )
        return self._answers[key]

    def _projects(self, project_file: str) -> dict[str, list[str]]:
        """Directory -> its project files, looked for when first asked."""
        if project_file not in self._directories:
            found: dict[str, list[str]] = {}
            for path in self._paths:
                name = posixpath.basename(path)
                if name == project_file or (
                    project_file.startswith("*.") and name.endswith(project_file[1:])
                ):
                    found.setdefault(posixpath.dirname(path), []).append(path)
            self._directories[project_file] = found
        return self._directories[project_file]

    def _content(self, path: str) -> bytes:
        """The file lowercased; b"" (and an error naming it) if it cannot be read."""
        try:
            return self._read(path).lower()
        except Exception as exc:  # too large or corrupt: named, and the rest goes on
            retire_after(exc)
            reason = f"not read for the test files below it: {describe(exc)}"
            self._errors.setdefault(path, ScanError(path, "read", reason))
            return b""

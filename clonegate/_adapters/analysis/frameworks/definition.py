"""What a test framework is to the analyzer: one small, typed definition (ADR 0004).

A definition says which files the framework runs (its own rules and defaults, read
from its config files where they are data), which imports and config files name it,
what a file's content can say about it, and how to read its files (the reader of its
language, shared with the other frameworks of that language). The registry
(:mod:`.`) lists every definition once; its order is the priority when two frameworks
could claim one file.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..outline import Outline

__all__ = ["Framework", "Reading", "Scope", "Settings"]


@dataclass(frozen=True, slots=True)
class Settings:
    """A framework's options, from one config file or the framework's defaults.

    ``files``: glob patterns of test files relative to the config's directory (``**``
    any depth, ``{a,b}`` either); ``names``: patterns a file must match, in the
    framework's own syntax (pytest: globs on the name, or on the relative path when
    they hold a ``/``; jest: ``testRegex`` regular expressions); ``roots``:
    directories below the config's to look in, all when empty; ``skip_dirs``:
    directory names not entered;
    ``classes``/``functions``: pytest's ``python_classes``/``python_functions``;
    ``typecheck``: vitest type tests are on; ``note``: why these are defaults although
    a config file exists (it is code, read by no one but its framework), or which of
    its values were computed; ``excludes``: patterns of files not run, in the
    framework's syntax (jest: ``testPathIgnorePatterns`` regular expressions; the
    others: globs); ``projects``: one settings per project of the config (vitest,
    jest, Playwright), a file being run when one of them runs it; ``interface``: how
    the file's calls read (``playwright``: ``test.describe``, ``test.step``;
    ``cypress``: mocha's, an ``it`` without a callback a todo; ``rspec``,
    ``minitest``: the Ruby reader's two readings; "": jest's, vitest's, mocha's).
    """

    files: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    roots: tuple[str, ...] = ()
    skip_dirs: tuple[str, ...] = ()
    classes: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    typecheck: bool = False
    note: str = ""
    excludes: tuple[str, ...] = ()
    projects: tuple[Settings, ...] = ()
    interface: str = ""

    def each_project(self) -> tuple[Settings, ...]:
        """The settings of each project, or these alone: a file runs if one runs it."""
        return self.projects or (self,)


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a framework's settings come from for one file: the config's directory
    ("" is the repository's root; None: no config, the defaults) and the layout facts
    some rules need (directories holding a ``main.rs``; C#'s ``projects``, the
    directories holding a ``*.csproj``, and the ``test_projects`` among them:
    :mod:`.dotnet`)."""

    directory: str | None
    settings: Settings
    mains: frozenset[str] = frozenset()
    projects: frozenset[str] = frozenset()
    test_projects: frozenset[str] = frozenset()

    def relative(self, path: str) -> str:
        """``path`` relative to the scope's directory."""
        if not self.directory:
            return path
        return posixpath.relpath(path, self.directory)


@dataclass(frozen=True, slots=True)
class Reading:
    """What a language's reader found in one file, before its framework is known:
    imported modules, signals (names a framework by its content: ``vi``, a
    ``TestCase`` subclass), and how to outline it under a framework's settings."""

    imports: frozenset[str]
    signals: frozenset[str]
    outline: Callable[[Settings], Outline]


@dataclass(frozen=True, slots=True)
class Framework:
    """One test framework.

    ``family``: the language family whose reader reads its files (``python``,
    ``javascript`` for JS/TS/TSX, ``go``, ``java``, ``kotlin``, ``rust``, ``ruby``);
    ``more_families``: other families it reads too (JUnit in Kotlin), each by its own
    reader. ``selects(path,
    scope)``: whether the framework runs ``path`` (its own file rules). ``imports``:
    modules whose import names it (``x`` matches ``x``, ``x.y`` and ``x/y``).
    ``config_files`` put their directory in its scope; ``config_signs`` do when the
    file's content holds the sign (``package.json`` naming ``"mocha"``);
    ``read_config(name, content, defaults)`` reads its options from either, or returns
    None for a file that only names it. ``settings_from``: another framework whose
    config files hold this one's options (unittest files run by pytest). ``signals``
    name it when no import or config does; a file lacking ``requires`` is never its.
    ``scoped``: it selects files only below one of its config files (mocha's
    ``./test`` means nothing in a project that does not use mocha). ``needs_import``:
    it runs only files that import it or hold one of its signals (node:test has no
    globals); ``hint``: what such a file's bytes must match (its import, its signal), so
    that a file only it selects and that does not is never parsed. ``trusts_imports``:
    where its rules for a file could not be read (its config in scope is code or
    unreadable: the settings carry a ``note``), a file that imports it is its test file
    whatever its name; where they were read, or are its defaults, they alone select its
    files (ADR 0004's import rule). ``fallback``: the family's framework when nothing
    names one.
    """

    name: str
    family: str
    selects: Callable[[str, Scope], bool]
    defaults: Settings = field(default_factory=Settings)
    imports: tuple[str, ...] = ()
    exact_imports: tuple[str, ...] = ()
    config_files: tuple[str, ...] = ()
    config_signs: tuple[tuple[str, bytes], ...] = ()
    read_config: Callable[[str, bytes, Settings], Settings | None] | None = None
    settings_from: str | None = None
    signals: frozenset[str] = frozenset()
    requires: str | None = None
    scoped: bool = False
    needs_import: bool = False
    hint: re.Pattern[bytes] | None = None
    trusts_imports: bool = False
    fallback: bool = False
    more_families: tuple[str, ...] = ()

    def reads(self, family: str) -> bool:
        """Whether it runs files of ``family``."""
        return family == self.family or family in self.more_families

    def imported_by(self, imports: frozenset[str]) -> bool:
        return any(
            i == p or i.startswith((p + ".", p + "/")) for i in imports for p in self.imports
        ) or any(i in imports for i in self.exact_imports)

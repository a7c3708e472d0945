"""Playwright Test: ``**/*.@(spec|test).?(c|m)[jt]s?(x)`` under the config's directory,
or the literal ``testDir``/``testMatch``/``testIgnore`` of ``playwright.config.*`` and
of each of its ``projects`` (:mod:`.js_literals`; a computed value leaves that
option's default, said in the file's note).

Only in a project that uses it (a config, or ``package.json`` naming
``@playwright/test``). Its files are read with the ``playwright`` interface of the
JavaScript reader: ``test``, ``test.describe`` and their modifiers; ``test.step`` is
no test (ADR 0005). As Playwright does, a glob not starting with ``**/`` matches at
any depth, and a regular expression is searched in the path.
"""

from __future__ import annotations

import dataclasses
import posixpath

from ..globs import check_globs, glob_matches
from ..patterns import check_count, compile_regex, searchable
from .definition import Framework, Scope, Settings
from .js_config import computed_note
from .js_literals import COMPUTED, Array, Object, Regex, Value, config_of

DEFAULT_MATCH = "**/*.@(spec|test).?(c|m)[jt]s?(x)"
DEFAULTS = Settings(files=(DEFAULT_MATCH,), interface="playwright")
_EXTENSIONS = ("ts", "js", "mts", "mjs", "cts", "cjs")
_REGEX = "regex:"  # marks a regular expression among globs (testIgnore)


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    if name == "package.json":
        return None  # names Playwright; no options there
    config = config_of(name, content)
    computed: list[str] = []
    if not isinstance(config, Object):
        computed.append("config")
        settings = defaults
    else:
        settings = _with_projects(config, _project(config, defaults, computed), computed)
    for one in (settings, *settings.projects):
        _check(one)
    note = computed_note(name, computed, "Playwright")
    return dataclasses.replace(settings, note=note)


def _with_projects(config: Object, settings: Settings, computed: list[str]) -> Settings:
    """``settings`` with the config's projects, when each one is written out."""
    projects = config.get("projects")
    if projects is COMPUTED or (isinstance(projects, Array) and not projects.complete):
        computed.append("projects")  # the top-level options stand for them
    elif isinstance(projects, Array):
        inline = [p for p in projects.items if isinstance(p, Object)]
        found = tuple(_project(p, settings, computed) for p in inline)
        if found and len(found) == len(projects.items):
            return dataclasses.replace(settings, projects=found)
    return settings


def _check(one: Settings) -> None:
    """:class:`.patterns.PatternError` if a glob or regular expression of ``one`` cannot
    be run, or if it holds too many."""
    check_globs(tuple(g for g in (*one.files, *one.excludes) if not g.startswith(_REGEX)))
    check_count(one.names, "testMatch pattern")
    for regex in (*one.names, *(g for g in one.excludes if g.startswith(_REGEX))):
        compile_regex(regex.removeprefix(_REGEX), "testMatch")


def _project(config: Object, base: Settings, computed: list[str]) -> Settings:
    """The options ``config`` sets, the others from ``base`` (a project inherits them)."""
    settings = base
    test_dir = config.get("testDir")
    if isinstance(test_dir, str):
        where = posixpath.normpath(test_dir.removeprefix("./"))
        settings = dataclasses.replace(settings, roots=() if where == "." else (where,))
    elif test_dir is COMPUTED:
        computed.append("testDir")
    match = _patterns(config.get("testMatch"), computed, "testMatch")
    if match is not None:
        globs = tuple(p for p in match if not p.startswith(_REGEX))
        regexes = tuple(p.removeprefix(_REGEX) for p in match if p.startswith(_REGEX))
        settings = dataclasses.replace(settings, files=globs, names=regexes)
    ignore = _patterns(config.get("testIgnore"), computed, "testIgnore")
    if ignore is not None:
        settings = dataclasses.replace(settings, excludes=ignore)
    return settings


def _patterns(value: Value, computed: list[str], key: str) -> tuple[str, ...] | None:
    """Globs (``**/`` put before one that lacks it, as Playwright does) and regular
    expressions (marked); None when the option is not set or is computed."""
    items = value.items if isinstance(value, Array) and value.complete else [value]
    if value is None:
        return None
    found = []
    for item in items:
        if isinstance(item, str):
            glob = item.removeprefix("./")
            found.append(glob if glob.startswith("**/") else "**/" + glob)
        elif isinstance(item, Regex):
            found.append(_REGEX + ("(?i)" if "i" in item.flags else "") + item.pattern)
        else:
            computed.append(key)
            return None
    return tuple(found)


def selects(path: str, scope: Scope) -> bool:
    settings = scope.settings
    relative = scope.relative(path)
    return any(_runs(relative, project) for project in settings.each_project())


def _runs(relative: str, settings: Settings) -> bool:
    if settings.roots and not any(relative.startswith(r + "/") for r in settings.roots):
        return False
    if any(_matches(p, relative) for p in settings.excludes):
        return False
    return any(glob_matches(g, relative) for g in settings.files) or any(
        _matches(_REGEX + r, relative) for r in settings.names
    )


def _matches(pattern: str, relative: str) -> bool:
    if pattern.startswith(_REGEX):
        regex = compile_regex(pattern.removeprefix(_REGEX), "testMatch")
        return regex.search("/" + searchable(relative)) is not None
    return glob_matches(pattern, relative)


FRAMEWORK = Framework(
    name="playwright",
    family="javascript",
    selects=selects,
    defaults=DEFAULTS,
    imports=("@playwright/test",),
    config_files=tuple(f"playwright.config.{e}" for e in _EXTENSIONS),
    config_signs=(("package.json", b'"@playwright/test"'),),
    read_config=read_config,
    signals=frozenset({"playwright"}),
    scoped=True,
)

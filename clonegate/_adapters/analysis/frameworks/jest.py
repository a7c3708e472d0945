"""jest: its default ``testMatch``, or ``testMatch``/``testRegex``/``roots``/
``testPathIgnorePatterns``/``rootDir`` and inline ``projects`` where the config
spells them: JSON (``jest.config.json``, ``package.json``'s ``"jest"``) or literals in
code (``jest.config.js``, read by :mod:`.js_literals`; a computed value leaves that
option's default, said in the file's note).

``testRegex`` and ``testPathIgnorePatterns`` run on RE2 (:mod:`..patterns`), in time
linear in the path whatever the pattern (``^(a+)+$`` made ``re`` backtrack for
minutes), a leading negative lookahead included (:func:`..patterns.compile_test_regex`);
one RE2 cannot run (any other lookaround, a backreference) makes the config a scan
error. jest searches them in the absolute path: here, ``/`` and the path from the
config's directory.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re

from ..globs import check_globs, glob_matches
from ..patterns import check_count, compile_test_regex, searchable
from .definition import Framework, Scope, Settings
from .js_config import computed_note, json_of, package_key, with_projects
from .js_literals import COMPUTED, Object, Value, config_of, literal_strings, of_json

DEFAULT_MATCH = ("**/__tests__/**/*.[jt]s?(x)", "**/?(*.)+(spec|test).[jt]s?(x)")
DEFAULT_IGNORE = "/node_modules/"
DEFAULTS = Settings(files=DEFAULT_MATCH, excludes=(DEFAULT_IGNORE,))
_EXTENSIONS = ("js", "ts", "mjs", "cjs", "json", "mts", "cts")


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    config: Value
    if name == "package.json":
        config = of_json(package_key(content, "jest"))
        if not isinstance(config, Object):
            return defaults  # jest only named, in the dependencies
    elif name.endswith(".json"):
        config = of_json(json_of(content))
    else:
        config = config_of(name, content)
    computed: list[str] = []
    settings = _project(config, "", defaults, computed, top=True)
    for one in (settings, *settings.projects):
        check_globs(one.files, "testMatch pattern")
        check_count(one.names, "testRegex pattern")
        check_count(one.excludes, "testPathIgnorePatterns pattern")
        for regex in (*one.names, *one.excludes):
            compile_test_regex(regex, "testRegex")
    note = computed_note(name, computed, "jest")
    return dataclasses.replace(settings, note=note)


def _project(
    config: Value, base: str, defaults: Settings, computed: list[str], top: bool
) -> Settings:
    if not isinstance(config, Object):
        if config is COMPUTED:
            computed.append("config")
        return defaults
    where = _root_dir(config, base, computed)
    files = tuple(_rooted(p, where) for p in _strings(config, "testMatch", computed))
    regexes = _strings(config, "testRegex", computed)
    roots = tuple(_rooted(r, where).rstrip("/") for r in _strings(config, "roots", computed))
    ignored = config.get("testPathIgnorePatterns")
    ignores = (
        _strings(config, "testPathIgnorePatterns", computed)
        if ignored is not None
        else (DEFAULT_IGNORE,)
    )
    settings = dataclasses.replace(
        defaults,
        files=files or (() if regexes else defaults.files),
        names=regexes,
        roots=tuple(r for r in roots if r and r != ".") or ((where,) if where else ()),
        excludes=tuple(_anchored(p, where) for p in ignores),
    )
    projects = config.get("projects") if top else None
    return with_projects(
        settings, projects, computed, lambda p: _project(p, where, defaults, computed, top=False)
    )


def _root_dir(config: Object, base: str, computed: list[str]) -> str:
    """The config's ``rootDir`` from ``base``, normalized ("" for the top)."""
    root_dir = config.get("rootDir")
    if root_dir is COMPUTED:
        computed.append("rootDir")
    where = posixpath.normpath(posixpath.join(base, root_dir if isinstance(root_dir, str) else ""))
    return "" if where == "." else where


def _strings(config: Object, key: str, computed: list[str]) -> tuple[str, ...]:
    found = literal_strings(config.get(key))
    if found is None:
        computed.append(key)
        return ()
    return found


def _rooted(pattern: str, where: str) -> str:
    """A glob or root with ``<rootDir>`` made relative to the config's directory."""
    if pattern.startswith("<rootDir>"):
        return posixpath.join(where, pattern.removeprefix("<rootDir>").lstrip("/"))
    return pattern


def _anchored(pattern: str, where: str) -> str:
    """An ignore pattern, with ``<rootDir>`` anchored where the searched path starts."""
    root = re.escape("/" + where) if where else ""
    return pattern.replace("<rootDir>", "^" + root)


def selects(path: str, scope: Scope) -> bool:
    settings = scope.settings
    absolute = "/" + searchable(scope.relative(path))
    return any(_runs(absolute, project) for project in settings.each_project())


def _runs(absolute: str, settings: Settings) -> bool:
    relative = absolute[1:]
    if settings.roots and not any(relative.startswith(r + "/") for r in settings.roots):
        return False
    if any(
        compile_test_regex(p, "testPathIgnorePatterns").search(absolute) for p in settings.excludes
    ):
        return False
    if any(glob_matches(pattern, relative) for pattern in settings.files):
        return True
    # Searched in the absolute path by jest; a pattern anchored at the start (``^src/``)
    # can only mean the path from the config's directory.
    return any(
        compile_test_regex(p, "testRegex").search(absolute) is not None
        or compile_test_regex(p, "testRegex").search(relative) is not None
        for p in settings.names
    )


FRAMEWORK = Framework(
    name="jest",
    family="javascript",
    selects=selects,
    defaults=DEFAULTS,
    imports=("@jest", "jest"),
    config_files=tuple(f"jest.config.{e}" for e in _EXTENSIONS),
    config_signs=(("package.json", b'"jest"'),),
    read_config=read_config,
    signals=frozenset({"jest"}),
    trusts_imports=True,
)

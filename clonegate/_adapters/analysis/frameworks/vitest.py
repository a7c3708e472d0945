"""vitest: its default ``include`` (``**/*.{test,spec}.?(c|m)[jt]s?(x)``), or the
literal ``test.include``/``exclude``/``dir``/``root`` and inline ``test.projects`` of
``vitest.config.*``, ``vitest.workspace.*`` or ``vite.config.*`` (:mod:`.js_literals`);
and the type tests of ``typecheck.include`` (``*.{test,spec}-d.*``) when type checking
is on (the config mentions ``typecheck``).

A value that is computed leaves that option's default, said in the file's note.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re

from ..globs import check_globs, glob_matches
from .definition import Framework, Scope, Settings
from .js_config import JS_EXTENSIONS, computed_note, json_of, with_projects
from .js_literals import COMPUTED, Array, Object, Value, config_of, literal_strings, of_json

TESTS = re.compile(rf"(?:.*/)?[^/]+\.(?:test|spec)\.{JS_EXTENSIONS}")
TYPE_TESTS = re.compile(rf"(?:.*/)?[^/]+\.(?:test|spec)-d\.{JS_EXTENSIONS}")
_EXTENSIONS = ("js", "ts", "mjs", "cjs", "mts", "cts")
# What vitest itself exports, as a config may spread it (``...configDefaults.exclude``).
_DEFAULT_EXCLUDE = Array(["**/node_modules/**", "**/.git/**"])
KNOWN: dict[str, Value] = {
    "configDefaults.exclude": _DEFAULT_EXCLUDE,
    "defaultExclude": _DEFAULT_EXCLUDE,
    "configDefaults.include": Array(["**/*.{test,spec}.?(c|m)[jt]s?(x)"]),
    "defaultInclude": Array(["**/*.{test,spec}.?(c|m)[jt]s?(x)"]),
}


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    typecheck = b"typecheck" in content
    if name == "package.json":
        return dataclasses.replace(defaults, typecheck=typecheck)
    if name.endswith(".json"):  # vitest.workspace.json: a list of projects
        config: Value = Object({"test": Object({"projects": of_json(json_of(content))})})
    else:
        config = config_of(name, content, KNOWN)
    if name.startswith("vitest.workspace.") and not isinstance(config, Object):
        config = Object({"test": Object({"projects": config})})
    computed: list[str] = []
    settings = _project(config, "", defaults, typecheck, computed, top=True)
    check_globs((*settings.files, *settings.excludes, *settings.names), "include pattern")
    for project in settings.projects:
        check_globs((*project.files, *project.excludes, *project.names), "include pattern")
    note = computed_note(name, computed, "vitest")
    return dataclasses.replace(settings, note=note)


def _project(
    config: Value, base: str, defaults: Settings, typecheck: bool, computed: list[str], top: bool
) -> Settings:
    """One project's settings (the config's own when ``top``), relative to the config's
    directory; the options it computes are added to ``computed``."""
    if config is COMPUTED:
        computed.append("config")
        return dataclasses.replace(defaults, typecheck=typecheck)
    test = config.get("test") if isinstance(config, Object) else None
    if test is COMPUTED:
        computed.append("test")
    if not isinstance(test, Object):
        return dataclasses.replace(defaults, typecheck=typecheck)
    where = _directory(config, test, base, computed)
    include = _globs(test.get("include"), computed, "include")
    exclude = _globs(test.get("exclude"), computed, "exclude")
    type_test = test.get("typecheck")
    type_include = (
        _globs(type_test.get("include"), computed, "typecheck.include")
        if isinstance(type_test, Object)
        else ()
    )
    settings = Settings(
        files=tuple(posixpath.join(where, g) for g in include) if include else (),
        excludes=tuple(posixpath.join(where, g) for g in exclude),
        names=tuple(posixpath.join(where, g) for g in type_include),
        roots=(where,) if where else (),
        typecheck=typecheck,
    )
    projects = test.get("projects") if top else None
    return with_projects(
        settings,
        projects,
        computed,
        lambda p: _project(p, where, defaults, typecheck, computed, top=False),
    )


def _directory(config: Value, test: Object, base: str, computed: list[str]) -> str:
    """Where a project's tests are searched: its ``root`` (``test.root`` first) and
    ``test.dir`` from ``base``, normalized ("" for the top)."""
    root = _path(test.get("root"), computed, "root")
    if root is None and isinstance(config, Object):
        root = _path(config.get("root"), computed, "root")
    where = posixpath.normpath(
        posixpath.join(base, root or "", _path(test.get("dir"), computed, "dir") or "")
    )
    return "" if where == "." else where


def _path(value: Value, computed: list[str], key: str) -> str | None:
    if value is COMPUTED:
        computed.append(key)
    if not isinstance(value, str):
        return None
    return value.removeprefix("./").rstrip("/") or None


def _globs(value: Value, computed: list[str], key: str) -> tuple[str, ...]:
    found = literal_strings(value)
    if found is None:
        computed.append(key)
        return ()
    return tuple(g.removeprefix("./") for g in found)


def selects(path: str, scope: Scope) -> bool:
    settings = scope.settings
    relative = scope.relative(path)
    return any(_runs(relative, project) for project in settings.each_project())


def _runs(relative: str, settings: Settings) -> bool:
    if settings.roots and not any(relative.startswith(r + "/") for r in settings.roots):
        return False
    if any(glob_matches(g, relative) for g in settings.excludes):
        return False
    if settings.files:
        if any(glob_matches(g, relative) for g in settings.files):
            return True
    elif TESTS.fullmatch(relative.rsplit("/", 1)[-1]):
        return True
    if not settings.typecheck:
        return False
    if settings.names:
        return any(glob_matches(g, relative) for g in settings.names)
    return TYPE_TESTS.fullmatch(relative.rsplit("/", 1)[-1]) is not None


FRAMEWORK = Framework(
    name="vitest",
    family="javascript",
    selects=selects,
    imports=("vitest",),
    config_files=(
        *(f"vitest.workspace.{e}" for e in (*_EXTENSIONS, "json")),
        *(f"vitest.config.{e}" for e in _EXTENSIONS),
    ),
    # In this order of precedence in one directory (the workspace file first).
    config_signs=(
        *((f"vite.config.{e}", b"test") for e in _EXTENSIONS),
        ("package.json", b'"vitest"'),
    ),
    read_config=read_config,
    signals=frozenset({"vi"}),
    trusts_imports=True,
)

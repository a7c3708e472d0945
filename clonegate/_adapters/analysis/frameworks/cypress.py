"""Cypress: the ``specPattern`` files of its end-to-end tests (default
``cypress/e2e/**/*.cy.{js,jsx,ts,tsx}``) and, where the config sets up ``component``
testing, of its component tests (default ``**/*.cy.{js,jsx,ts,tsx}``), less
``excludeSpecPattern``; from the literals of ``cypress.config.*``
(:mod:`.js_literals`; a computed value leaves that option's default, said in the
file's note), or Cypress 9's ``cypress.json`` (``integrationFolder``, ``testFiles``).

Only in a project that uses it (a config, or ``package.json`` naming ``cypress``).
Its files are read with the ``cypress`` interface of the JavaScript reader: mocha's
BDD calls, an ``it`` without a callback being a todo (ADR 0005).
"""

from __future__ import annotations

import dataclasses

from ..globs import check_globs, glob_matches
from .definition import Framework, Scope, Settings
from .js_config import computed_note, json_of
from .js_literals import COMPUTED, Object, Value, config_of, literal_strings, of_json

E2E = "cypress/e2e/**/*.cy.{js,jsx,ts,tsx}"
COMPONENT = "**/*.cy.{js,jsx,ts,tsx}"
DEFAULTS = Settings(files=(E2E,), interface="cypress")
_EXTENSIONS = ("js", "ts", "mjs", "cjs", "mts", "cts")


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    if name == "package.json":
        return None  # names Cypress; no options there
    if name == "cypress.json":
        return _legacy(of_json(json_of(content)), defaults)
    config = config_of(name, content)
    computed: list[str] = []
    files: list[str] = []
    excludes: list[str] = []
    if not isinstance(config, Object):
        computed.append("config")
        files.extend((E2E, COMPONENT))
    else:
        excludes.extend(_globs(config.get("excludeSpecPattern"), computed, ()))
        for kind, default in (("e2e", E2E), ("component", COMPONENT)):
            options = config.get(kind)
            if options is COMPUTED:
                computed.append(kind)
                files.append(default)
            elif isinstance(options, Object) or (kind == "e2e" and options is None):
                options = options or Object()
                files.extend(_globs(options.get("specPattern"), computed, (default,)))
                excludes.extend(_globs(options.get("excludeSpecPattern"), computed, ()))
    # A pattern without a ``/`` matches a file's name (minimatch's matchBase).
    excludes = [g if "/" in g else "**/" + g for g in excludes]
    check_globs((*files, *excludes), "specPattern")
    note = computed_note(name, computed, "Cypress")
    return dataclasses.replace(defaults, files=tuple(files), excludes=tuple(excludes), note=note)


def _legacy(config: Value, defaults: Settings) -> Settings:
    """Cypress 9 and older: ``testFiles`` (default ``**/*.*``) below ``integrationFolder``
    (default ``cypress/integration``), and below ``componentFolder`` where it is set,
    less ``ignoreTestFiles`` (default ``*.hot-update.js``, a name)."""
    options = config if isinstance(config, Object) else Object()
    files: list[str] = []
    folders = [options.get("integrationFolder"), options.get("componentFolder")]
    if not isinstance(folders[0], str):
        folders[0] = "cypress/integration"
    tests = literal_strings(options.get("testFiles")) or ("**/*.*",)
    for folder in folders:
        if isinstance(folder, str) and folder:
            files.extend(f"{folder.removeprefix('./').rstrip('/')}/{t}" for t in tests)
    ignored = literal_strings(options.get("ignoreTestFiles")) or ("*.hot-update.js",)
    excludes = [g if "/" in g else "**/" + g for g in ignored]
    check_globs((*files, *excludes), "testFiles")
    return dataclasses.replace(defaults, files=tuple(files), excludes=tuple(excludes))


def _globs(value: Value, computed: list[str], default: tuple[str, ...]) -> tuple[str, ...]:
    found = literal_strings(value)
    if found is None:
        computed.append("specPattern")
        return default
    return tuple(g.removeprefix("./") for g in found) or default


def selects(path: str, scope: Scope) -> bool:
    settings = scope.settings
    relative = scope.relative(path)
    if any(glob_matches(g, relative) for g in settings.excludes):
        return False
    return any(glob_matches(g, relative) for g in settings.files)


FRAMEWORK = Framework(
    name="cypress",
    family="javascript",
    selects=selects,
    defaults=DEFAULTS,
    imports=("cypress",),
    config_files=(*(f"cypress.config.{e}" for e in _EXTENSIONS), "cypress.json"),
    config_signs=(("package.json", b'"cypress"'),),
    read_config=read_config,
    scoped=True,
)

"""jest: its default ``testMatch``, or ``testMatch``/``testRegex``/``roots`` where the
config is JSON (``jest.config.json``, ``package.json``'s ``"jest"``).

``testRegex`` runs on RE2 (:mod:`..patterns`), in time linear in the path whatever
the pattern (``^(a+)+$`` made ``re`` backtrack for minutes), a leading negative
lookahead included (:func:`..patterns.compile_test_regex`); one RE2 cannot run (any
other lookaround, a backreference) makes the config a scan error.
"""

from __future__ import annotations

import dataclasses

from ..globs import check_globs, glob_matches
from ..patterns import check_count, compile_test_regex, searchable
from .definition import Framework, Scope, Settings
from .js_config import json_of, package_key, strings

# ``**/__tests__/**/*.[jt]s?(x)`` and ``**/?(*.)+(spec|test).[jt]s?(x)``
DEFAULT_PATTERN = r"(?:.*/)?(?:__tests__/(?:.*/)?[^/]+\.[jt]sx?|(?:[^/]*\.)?(?:spec|test)\.[jt]sx?)"
DEFAULTS = Settings(names=(DEFAULT_PATTERN,))


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    if name == "package.json":
        config = package_key(content, "jest")
        if not isinstance(config, dict):
            return defaults  # jest only named, in the dependencies
    elif name.endswith(".json"):
        config = json_of(content)
    else:
        return dataclasses.replace(defaults, note=f"{name} is code: jest's default testMatch")
    if not isinstance(config, dict):
        return defaults
    files = tuple(p.replace("<rootDir>/", "") for p in strings(config.get("testMatch")))
    regexes = strings(config.get("testRegex"))
    roots = tuple(r.replace("<rootDir>", "").strip("/") for r in strings(config.get("roots")))
    check_globs(files, "testMatch pattern")
    check_count(regexes, "testRegex pattern")
    for regex in regexes:
        compile_test_regex(regex, "testRegex")
    return dataclasses.replace(
        defaults,
        files=files,
        names=regexes or (() if files else defaults.names),
        roots=tuple(r for r in roots if r),
    )


def selects(path: str, scope: Scope) -> bool:
    settings = scope.settings
    relative = scope.relative(path)
    if settings.roots and not any(relative.startswith(r + "/") for r in settings.roots):
        return False
    if any(glob_matches(pattern, relative) for pattern in settings.files):
        return True
    relative = searchable(relative)
    return any(compile_test_regex(p, "testRegex").search(relative) for p in settings.names)


FRAMEWORK = Framework(
    name="jest",
    family="javascript",
    selects=selects,
    defaults=DEFAULTS,
    imports=("@jest", "jest"),
    config_files=tuple(
        f"jest.config.{e}" for e in ("js", "ts", "mjs", "cjs", "json", "mts", "cts")
    ),
    config_signs=(("package.json", b'"jest"'),),
    read_config=read_config,
    signals=frozenset({"jest"}),
    trusts_imports=True,
)

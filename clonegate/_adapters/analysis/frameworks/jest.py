"""jest: its default ``testMatch``, or ``testMatch``/``testRegex``/``roots`` where the
config is JSON (``jest.config.json``, ``package.json``'s ``"jest"``)."""

from __future__ import annotations

import dataclasses
import re

from ..globs import glob_matches
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
    return any(re.search(pattern, relative) for pattern in settings.names)


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

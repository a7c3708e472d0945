"""vitest: its default ``include`` (``**/*.{test,spec}.?(c|m)[jt]s?(x)``), and the
type tests of ``typecheck.include`` (``*.{test,spec}-d.*``) when type checking is on.

vitest's configs are code (``vitest.config.ts``), so its defaults apply; that the
config mentions ``typecheck`` turns the type tests on.
"""

from __future__ import annotations

import dataclasses
import re

from .definition import Framework, Scope, Settings
from .js_config import JS_EXTENSIONS

TESTS = re.compile(rf"(?:.*/)?[^/]+\.(?:test|spec)\.{JS_EXTENSIONS}")
TYPE_TESTS = re.compile(rf"(?:.*/)?[^/]+\.(?:test|spec)-d\.{JS_EXTENSIONS}")


def read_config(name: str, content: bytes, defaults: Settings) -> Settings | None:
    typecheck = b"typecheck" in content
    if name == "package.json":
        return dataclasses.replace(defaults, typecheck=typecheck)
    note = f"{name} is code: vitest's default include"
    return dataclasses.replace(defaults, typecheck=typecheck, note=note)


def selects(path: str, scope: Scope) -> bool:
    relative = scope.relative(path)
    if TESTS.fullmatch(relative):
        return True
    return scope.settings.typecheck and TYPE_TESTS.fullmatch(relative) is not None


FRAMEWORK = Framework(
    name="vitest",
    family="javascript",
    selects=selects,
    imports=("vitest",),
    config_files=tuple(f"vitest.config.{e}" for e in ("js", "ts", "mjs", "cjs", "mts", "cts")),
    config_signs=(("package.json", b'"vitest"'),),
    read_config=read_config,
    signals=frozenset({"vi"}),
    trusts_imports=True,
)

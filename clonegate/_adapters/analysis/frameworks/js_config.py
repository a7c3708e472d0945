"""Reading JavaScript frameworks' configs where they are data: JSON files, the
``package.json`` key of a framework; the literals of configs that are code are
:mod:`.js_literals`'s."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from .definition import Settings
from .documents import json_of
from .js_literals import COMPUTED, Array, Object, Value

__all__ = [
    "JS_EXTENSIONS",
    "computed_note",
    "json_of",
    "package_key",
    "scripts",
    "strings",
    "with_projects",
]

JS_EXTENSIONS = r"[cm]?[jt]sx?"


def package_key(content: bytes, key: str) -> Any:
    """``package.json``'s ``key`` (a framework's own config there), or None."""
    document = json_of(content)
    return document.get(key) if isinstance(document, dict) else None


def scripts(content: bytes) -> list[str]:
    """The commands of ``package.json``'s ``scripts``."""
    document = json_of(content)
    found = document.get("scripts") if isinstance(document, dict) else None
    return [v for v in found.values() if isinstance(v, str)] if isinstance(found, dict) else []


def strings(value: Any) -> tuple[str, ...]:
    """A config value that is a string or a list of strings, as a tuple."""
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(v for v in value if isinstance(v, str))
    return ()


def computed_note(name: str, computed: list[str], framework: str) -> str:
    """The file record's note for a config that is code with ``computed`` values ("" if
    none): which options only running it would give, now the framework's defaults."""
    if not computed:
        return ""
    if "config" in computed:
        return f"{name} is code, not literals: {framework}'s defaults"
    keys = ", ".join(dict.fromkeys(computed))
    return f"{name} is code: {keys} computed, {framework}'s default for them"


def with_projects(
    settings: Settings,
    projects: Value | None,
    computed: list[str],
    project: Callable[[Object], Settings],
) -> Settings:
    """``settings`` with a config's inline ``projects`` (jest's, vitest's), each read by
    ``project``. Entries that are not objects (paths of projects with configs of their
    own) keep ``settings`` itself among the projects; a computed list is noted."""
    if projects is COMPUTED:
        computed.append("projects")
    if not isinstance(projects, Array):
        return settings
    inline = [p for p in projects.items if isinstance(p, Object)]
    if not inline:
        return settings
    found = [project(p) for p in inline]
    if not projects.complete or len(inline) < len(projects.items):
        found.append(settings)  # other projects: files their own configs or these select
    return dataclasses.replace(settings, projects=tuple(found))

"""Reading JavaScript frameworks' configs where they are data: JSON files, the
``package.json`` key of a framework, and quoted strings in code that cannot be run."""

from __future__ import annotations

import functools
import re
from typing import Any

from ..patterns import Compiled, linear, searchable
from .documents import json_of

__all__ = ["JS_EXTENSIONS", "json_of", "package_key", "quoted_after", "scripts", "strings"]

JS_EXTENSIONS = r"[cm]?[jt]sx?"
_QUOTED = re.compile(r"""['"`]([^'"`]+)['"`]""")


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


def quoted_after(key: str, code: str) -> tuple[str, ...] | None:
    """The quoted strings of ``key: 'x'`` or ``key: ['x', 'y']`` in code, or None."""
    # On RE2: with re, each unclosed ``spec: [`` was scanned to the end of the file.
    match = _quoted_value(key).search(searchable(code))
    return tuple(_QUOTED.findall(match.group(1) or "")) if match else None


@functools.cache
def _quoted_value(key: str) -> Compiled:
    return linear(rf"""\b{key}['"]?\s*:\s*(\[[^\]]*\]|['"`][^'"`]*['"`])""")

"""Config documents read as data (JSON, JSON with comments, TOML), refused by depth
before they are parsed (ADR 0012).

``json`` and ``tomllib`` recurse once per level of nesting: 200,000 ``[`` in a
``.mocharc.json`` or 50,000 in a ``pyproject.toml`` raised ``RecursionError`` from
deep inside them. A scan of the bytes outside strings and comments, linear and
without recursion, refuses a document nested deeper than :data:`MAX_DEPTH` first;
real configs nest a handful of levels.
"""

from __future__ import annotations

import json
import re
import tomllib
from typing import Any

from ..problems import Refused

__all__ = ["MAX_DEPTH", "json_of", "toml_of"]

MAX_DEPTH = 64

# Each alternative also matches where its closing is missing (to the end): every
# match then succeeds where it starts, so a scan is linear whatever the bytes.
_JSON_SKIPPED = re.compile(rb'"(?:[^"\\]|\\.)*"?|//[^\n]*|/\*.*?(?:\*/|\Z)', re.S)
_TOML_SKIPPED = re.compile(
    rb'"""(?:[^\\]|\\.)*?(?:"""|\Z)|\'\'\'.*?(?:\'\'\'|\Z)'
    rb'|"(?:[^"\\\n]|\\.)*"?|\'[^\'\n]*\'?|#[^\n]*',
    re.S,
)
_BRACKETS = re.compile(rb"[\[\]{}]")


def json_of(content: bytes, *, comments: bool = False) -> Any:
    """The JSON document; with ``comments`` (``.jsonc``, ``.mocharc.json``), ``//`` and
    ``/* */`` comments outside strings are dropped first. ValueError if it is not one."""
    if comments:
        content = _JSON_SKIPPED.sub(_keep_strings, content)
    _check_depth(_JSON_SKIPPED.sub(b"", content), "JSON")
    return json.loads(content.decode("utf-8"))


def toml_of(content: bytes) -> Any:
    """The TOML document (``tomllib``'s ValueError if it is not one)."""
    _check_depth(_TOML_SKIPPED.sub(b"", content), "TOML")
    return tomllib.loads(content.decode("utf-8"))


def _keep_strings(match: re.Match[bytes]) -> bytes:
    found = match[0]
    if found.startswith(b'"'):
        return found
    return b"" if found.startswith(b"//") else b" "  # a /* */ comment separates tokens


def _check_depth(bare: bytes, kind: str) -> None:
    """:class:`Refused` if the brackets of ``bare`` (strings and comments removed) nest
    deeper than :data:`MAX_DEPTH`."""
    depth = 0
    for bracket in _BRACKETS.finditer(bare):
        if bracket[0] in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                raise Refused(f"{kind} nested deeper than {MAX_DEPTH} levels: not read", "config")
        else:
            depth -= 1

"""Glob patterns as test frameworks write them in their configs (mocha's ``spec``,
jest's ``testMatch``, pytest's ``python_files``), matched against POSIX paths.

``**`` is any number of directories, ``*`` and ``?`` stay inside one name, ``{a,b}``
is either, ``[...]`` a character class. Patterns are turned into regular
expressions once and cached.
"""

from __future__ import annotations

import fnmatch
import functools
import re

__all__ = ["glob_matches", "name_matches"]


def glob_matches(pattern: str, path: str) -> bool:
    """Whether ``path`` (relative, no leading ``./``) matches ``pattern``."""
    return _compiled(pattern.removeprefix("./")).fullmatch(path) is not None


def name_matches(patterns: tuple[str, ...], path: str) -> bool:
    """pytest's way: a pattern without ``/`` matches the file name, one with a ``/``
    the end of the path (``test/*test_*.py``)."""
    name = path.rsplit("/", 1)[-1]
    for pattern in patterns:
        if "/" in pattern:
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, "*/" + pattern):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(_translate(pattern))


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")  # any directories, none included
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            end = pattern.find("}", i)
            if end < 0:
                out.append(re.escape(char))
            else:
                options = pattern[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_translate(o) for o in options) + ")")
                i = end + 1
                continue
        elif char == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end + 1
                continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)

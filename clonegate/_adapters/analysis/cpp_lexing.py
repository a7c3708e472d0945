"""The C++ reader's lexing of the bytes (:mod:`.cpp`): a macro's arguments, the space
after them, and where each ``{`` closes by the tokens alone, its fallback where
tree-sitter cannot place a test macro's block.

A test body calling a project's own macros without a ``;`` (``CHECK_ALL(a, b)`` on
line after line) can make tree-sitter-cpp give the whole file up as one error, every
block in it unplaced. The braces are then matched here: comments, string, raw string
and character literals skipped, one pass over the file whatever it holds (an unclosed
comment or string runs to the end of the file or line, never rescanned).
"""

from __future__ import annotations

import re

# A macro's arguments are lexed up to this many bytes: real ones are a line or two.
MAX_ARGUMENTS = 64 * 1024

_TOKEN = re.compile(
    rb"//[^\n]*"
    rb"|/\*.*?(?:\*/|\Z)"
    rb'|R"([^()\\\s"]{0,16})\(.*?(?:\)\1"|\Z)'
    rb'|"(?:[^"\\\n]|\\.)*"?'
    rb"|'(?:[^'\\\n]|\\.)*'?"
    rb"|[{}]",
    re.S,
)


def closing_braces(data: bytes) -> dict[int, int]:
    """The offset of each ``{`` that closes -> the offset after its ``}``."""
    closing: dict[int, int] = {}
    open_at: list[int] = []
    for match in _TOKEN.finditer(data):
        token = match.group()
        if token == b"{":
            open_at.append(match.start())
        elif token == b"}" and open_at:
            closing[open_at.pop()] = match.end()
    return closing


def arguments(data: bytes, at: int) -> tuple[list[str] | None, int]:
    """The top-level arguments of the parenthesised list at ``at``, as source text,
    and the offset after its ``)``; None (and where the lexing stopped) if it has no
    end before a ``;``, a brace or :data:`MAX_ARGUMENTS` bytes."""
    limit = min(len(data), at + MAX_ARGUMENTS)
    depth, begin, found = 0, at + 1, []
    i = at
    while i < limit:
        byte = data[i]
        if byte in b"\"'":
            i = end_of_quoted(data, i, limit)
            continue
        if byte in b";{}":
            return None, i  # no macro's arguments hold these: a string or comment misread
        if byte in b"([":
            depth += 1
        elif byte in b")]":
            depth -= 1
            if depth == 0:
                found.append(data[begin:i])
                return [a.decode("utf-8", "replace").strip() for a in found], i + 1
        elif byte == ord(",") and depth == 1:
            found.append(data[begin:i])
            begin = i + 1
        i += 1
    return None, i


def end_of_quoted(data: bytes, start: int, limit: int) -> int:
    quote, i = data[start], start + 1
    while i < limit and data[i] != quote:
        i += 2 if data[i] == ord("\\") else 1
    return i + 1


def skip_space(data: bytes, at: int) -> int:
    """The offset of the next byte that is not space or part of a comment."""
    while at < len(data):
        if data[at : at + 1].isspace():
            at += 1
        elif data.startswith(b"//", at):
            newline = data.find(b"\n", at)
            at = len(data) if newline < 0 else newline + 1
        elif data.startswith(b"/*", at):
            close = data.find(b"*/", at + 2)
            at = len(data) if close < 0 else close + 2
        else:
            break
    return at

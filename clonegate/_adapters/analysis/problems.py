"""What a file or config the scan could not take in becomes: one line (ADR 0012).

A repository's content must never stop a scan nor put a traceback on the terminal:
every exception its files or configs make a reader raise is caught where the file
is read, and becomes a :class:`ScanError` whose message is :func:`describe`'s line.
:class:`Refused` is the analyzer's own refusal of something past a bound (a pattern
RE2 cannot run, a document nested too deep, a syntax tree too deep or too large),
with the phase it belongs to.
"""

from __future__ import annotations

import string

from ..workers.zygote import end_after_reply

__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_PUNCTUATION",
    "Refused",
    "check_size",
    "describe",
    "retire_after",
]

MAX_MESSAGE_CHARS = 300
# Punctuation marks in one file: about its tokens, counted at the speed of memchr
# before any parser runs. ast and tree-sitter hold about 1 KB and 200 bytes a node:
# this bounds a parse to about 500 MB and 2 s. The corpus's largest test file has
# 26,000 (yargs's usage.mjs); a 9.8 MB ``x = [0,0,…]`` has 4,900,000.
MAX_PUNCTUATION = 500_000
_PUNCTUATION = string.punctuation.encode()


class Refused(ValueError):
    """Content past one of the analyzer's bounds; ``phase``: ``config``, ``parse`` or
    ``query``. Deterministic: the same bytes are always refused the same way."""

    def __init__(self, reason: str, phase: str = "parse") -> None:
        super().__init__(reason)
        self.phase = phase


def check_size(data: bytes) -> None:
    """:class:`Refused` for a file with more than :data:`MAX_PUNCTUATION` punctuation marks."""
    marks = len(data) - len(data.translate(None, _PUNCTUATION))
    if marks > MAX_PUNCTUATION:
        raise Refused(
            f"too large to parse: {marks:,} punctuation marks, over the limit of "
            f"{MAX_PUNCTUATION:,}"
        )


def retire_after(exc: BaseException) -> None:
    """After a ``MemoryError`` (maybe the worker's memory cap), end this worker once its
    job has replied: a parser or a native library whose allocation failed may have
    left the process's state behind, and the next job gets a fresh fork (2 ms)."""
    if isinstance(exc, MemoryError):
        end_after_reply()


def describe(exc: BaseException) -> str:
    """``exc`` as one line of at most :data:`MAX_MESSAGE_CHARS` characters."""
    if isinstance(exc, Refused):
        text = str(exc)
    elif isinstance(exc, SyntaxError):
        if exc.filename and exc.lineno is not None:  # from ast, with Python's own message
            text = f"syntax error at line {exc.lineno}: {exc.msg}"
        else:
            text = str(exc)  # from tree-sitter: "syntax error at line N"
    elif isinstance(exc, RecursionError):
        text = "too deeply nested to read (RecursionError)"
    else:
        text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    text = " ".join(text.split())
    return text if len(text) <= MAX_MESSAGE_CHARS else text[: MAX_MESSAGE_CHARS - 3] + "..."

"""The entries of a run (URLs, shorthands, sources): arguments and a list file (or
stdin), every line checked first; and the credentials the command line binds to hosts.

A list is bytes from somewhere else: it may not be UTF-8, may start with a byte-order
mark, may end lines with CRLF. Each line is decoded on its own, so one bad line is
named by its line number in the file, and nothing is cloned until every line is good.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from clonegate import InvalidURLError, Option, visible, with_netrc, with_token
from clonegate.sources import Source, read_entries

from ._run import usage_error

__all__ = ["credential_options", "read_list"]

_BOM = b"\xef\xbb\xbf"
# A comment runs from a '#' at the start of a line or after whitespace; a '#' inside
# a URL is a fragment, which parse_repo_url refuses by itself.
_COMMENT = re.compile(r"(?:^|\s)#.*$")


def read_list(arguments: list[str], from_file: str | None) -> list[str | Source]:
    """The run's entries, in order: URLs to clone (an ``owner/repo`` shorthand as the
    URL it stands for) and sources to list (ADR 0023); a usage error listing every
    bad line otherwise."""
    lines = [(f"argument {n}", url) for n, url in enumerate(arguments, 1)]
    problems: list[str] = []
    if from_file is not None:
        file_lines, problems = _read_list(from_file)
        lines += file_lines
    if not lines and not problems:
        raise usage_error(
            "no repository URLs or sources given (arguments, or --from-file PATH or -)"
        )
    entries: list[str | Source] = []
    for where, entry in read_entries(lines):
        if isinstance(entry, InvalidURLError):
            problems.append(f"{where}: {entry}")
        else:
            entries.append(entry)
    if problems:
        raise usage_error(
            "invalid repository URLs, nothing was cloned:\n"
            + "\n".join(f"  {problem}" for problem in problems)
        )
    return entries


def _read_list(from_file: str) -> tuple[list[tuple[str, str]], list[str]]:
    name = "stdin" if from_file == "-" else visible(from_file)
    try:
        data = sys.stdin.buffer.read() if from_file == "-" else Path(from_file).read_bytes()
    except OSError as exc:
        raise usage_error(f"cannot read {name}: {exc.strerror}") from None
    lines: list[tuple[str, str]] = []
    problems: list[str] = []
    for number, raw in enumerate(data.removeprefix(_BOM).split(b"\n"), 1):
        raw = raw.removesuffix(b"\r")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            shown = visible(raw.decode("utf-8", "surrogateescape"))
            problems.append(
                f"{name} line {number}: not UTF-8 (byte 0x{raw[exc.start]:02x} at column "
                f"{exc.start + 1}): {shown}"
            )
            continue
        url = _COMMENT.sub("", text).strip()
        if url:
            lines.append((f"{name} line {number}", url))
    return lines, problems


def credential_options(
    token: str | None, token_host: str | None, netrc: Path | None
) -> list[Option]:
    """The options for --token/--token-host and --netrc, shared by `analyze` and `worker`.

    Raises ValueError for a token without its host (or the reverse), OSError for a
    netrc file that cannot be read."""
    options: list[Option] = []
    if netrc is not None:
        options.append(with_netrc(netrc))
    if token is not None:
        if token_host is None:
            raise ValueError(
                "a token needs its host: add --token-host HOST (or CLONEGATE_TOKEN_HOST);"
                " clonegate sends a token to that host only"
            )
        options.append(with_token(token, token_host))
    elif token_host is not None:
        raise ValueError("--token-host names the host of a token; give the token too")
    # Read once, then out of the environment: worker processes, ssh and anything
    # they start inherit it, and none of them needs it (jobs carry the token).
    os.environ.pop("CLONEGATE_TOKEN", None)
    return options

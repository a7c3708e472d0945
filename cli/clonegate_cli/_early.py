"""The raw command line's first clone: read before Typer, trio or the library load
(ADR 0003, issue 47).

A first result waited for the command line's imports (trio and Typer, ~100 ms of
CPU) and only then cloned. When the arguments are a plain ``analyze`` of
URLs, every one of them understood here, the first URL's clone starts in the
workers' zygote at once, and the use case's own clone of it takes that clone over
(its job is compared field by field; a different one is killed first). Anything
else here, or any doubt, starts nothing early: the command runs as it would have.

Understood, and nothing more: ``-q``, ``--quiet``, ``-v``, ``--verbose``, ``--format
table|json|jsonl``, ``-j``/``--max-concurrent-clones N`` (neither changes a clone),
``--depth N``, and git://, http:// and https:// URLs without user-info, in plain
characters. No ``CLONEGATE_*`` variable may be set: each one stands for an option
(a token, a netrc file, an ssh command, a memory budget, a store).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: this runs before the zygote starts (ADR 0003)
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["MEMORY_BUDGET_DEFAULT", "first_clone"]

# --memory-budget's default, here so that the early start knows it without Typer: a
# first clone under a budget asks its memory forecasts, as the use case's would.
MEMORY_BUDGET_DEFAULT = "auto"

_FLAGS = frozenset({"-q", "--quiet", "-v", "--verbose"})
_FORMATS = frozenset({"table", "json", "jsonl"})
_COUNTS = frozenset({"-j", "--max-concurrent-clones", "--depth"})
_SCHEMES = ("git://", "http://", "https://")
# No user-info ("@"), no query or fragment, no space or control character: a URL
# the early start is sure to read as the use case does. Anything else waits.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~/:%+-")


def first_clone(
    arguments: Sequence[str], environ: Mapping[str, str]
) -> tuple[str, int | None] | None:
    """The first URL of a plain ``analyze`` run, and its ``--depth`` (None: not given);
    None when ``arguments`` (``sys.argv[1:]``) are anything else."""
    if list(arguments[:1]) != ["analyze"] or any(k.startswith("CLONEGATE_") for k in environ):
        return None
    urls: list[str] = []
    depth = None
    rest = list(arguments[1:])
    while rest:
        argument = rest.pop(0)
        if not argument.startswith("-"):
            if not _plain_url(argument):
                return None
            urls.append(argument)
            continue
        if argument in _FLAGS:
            continue
        name, equals, value = argument.partition("=")
        if not (equals and name.startswith("--")):
            name, value = argument, (rest.pop(0) if rest else "")
        if name == "--format" and value in _FORMATS:
            continue
        if name not in _COUNTS or not value.isdigit() or not value.isascii():
            return None
        if name == "--depth":
            depth = int(value)
    return (urls[0], depth) if urls else None


def _plain_url(argument: str) -> bool:
    scheme = next((s for s in _SCHEMES if argument.startswith(s)), None)
    return scheme is not None and len(argument) > len(scheme) and set(argument) <= _PLAIN

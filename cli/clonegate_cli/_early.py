"""The raw command line read before Typer, trio or the library load: a plain
``analyze``, and its first clone (ADR 0003, issue 47).

A first result waited for the command line's imports (trio and Typer, ~100 ms of
CPU) and only then cloned. When the arguments are a plain ``analyze`` of
URLs, every one of them understood here, the first URL's clone starts in the
workers' zygote at once, and the use case's own clone of it takes that clone over
(its job is compared field by field; a different one is killed first). Anything
else here, or any doubt, starts nothing early: the command runs as it would have.
A plain ``analyze`` then runs without Typer (``_plain``), as Typer would run it.

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

__all__ = ["MEMORY_BUDGET_DEFAULT", "PlainAnalyze", "first_clone", "plain_analyze"]

# --memory-budget's default, here so that the early start knows it without Typer: a
# first clone under a budget asks its memory forecasts, as the use case's would.
MEMORY_BUDGET_DEFAULT = "auto"

_QUIET = frozenset({"-q", "--quiet"})
_VERBOSE = frozenset({"-v", "--verbose"})
_FORMATS = frozenset({"table", "json", "jsonl"})
_COUNTS = frozenset({"-j", "--max-concurrent-clones", "--depth"})
_SCHEMES = ("git://", "http://", "https://")
# No user-info ("@"), no query or fragment, no space or control character: a URL
# the early start is sure to read as the use case does. Anything else waits.
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~/:%+-")


class PlainAnalyze:
    """A plain ``analyze`` command line, read whole: what ``_plain`` runs without Typer."""

    __slots__ = ("depth", "jobs", "output_format", "quiet", "urls", "verbose")

    def __init__(self) -> None:
        self.urls: list[str] = []
        self.depth: int | None = None  # None: not given
        self.jobs: int | None = None  # None: not given
        self.output_format: str | None = None
        self.quiet = self.verbose = False


def plain_analyze(arguments: Sequence[str], environ: Mapping[str, str]) -> PlainAnalyze | None:
    """``arguments`` (``sys.argv[1:]``) read as the plain ``analyze`` they are, every one
    of them understood here, as Typer would read them (a repeated option: its last
    value); None for anything else, and for what Typer would refuse (``-j 0``, ``-q``
    with ``-v``): Typer says why."""
    if list(arguments[:1]) != ["analyze"] or any(k.startswith("CLONEGATE_") for k in environ):
        return None
    plain = PlainAnalyze()
    rest = list(arguments[1:])
    while rest:
        argument = rest.pop(0)
        if not argument.startswith("-"):
            if not _plain_url(argument):
                return None
            plain.urls.append(argument)
        elif argument in _QUIET:
            plain.quiet = True
        elif argument in _VERBOSE:
            plain.verbose = True
        elif not _read_value(plain, argument, rest):
            return None
    if not plain.urls or (plain.quiet and plain.verbose) or plain.jobs == 0:
        return None
    return plain


def first_clone(
    arguments: Sequence[str], environ: Mapping[str, str]
) -> tuple[str, int | None] | None:
    """The first URL of a plain ``analyze`` run, and its ``--depth`` (None: not given);
    None when ``arguments`` (``sys.argv[1:]``) are anything else."""
    plain = plain_analyze(arguments, environ)
    return (plain.urls[0], plain.depth) if plain is not None else None


def _read_value(plain: PlainAnalyze, argument: str, rest: list[str]) -> bool:
    """Read the option ``argument`` and its value (in it after ``=``, or next in
    ``rest``) into ``plain``; whether it is one understood here."""
    name, equals, value = argument.partition("=")
    if not (equals and name.startswith("--")):
        name, value = argument, (rest.pop(0) if rest else "")
    if name == "--format":
        plain.output_format = value
        return value in _FORMATS
    if name not in _COUNTS or not value.isdigit() or not value.isascii():
        return False
    if name == "--depth":
        plain.depth = int(value)
    else:
        plain.jobs = int(value)
    return True


def _plain_url(argument: str) -> bool:
    scheme = next((s for s in _SCHEMES if argument.startswith(s)), None)
    return scheme is not None and len(argument) > len(scheme) and set(argument) <= _PLAIN

"""The repositories a forge server lists, forge-neutral, and how a fixture's documented
example becomes one of them.

:func:`made` generates ``n`` repositories of an owner, each attribute a function of its
index alone (the same list on every run, whatever the page size): every 5th a fork,
every 7th archived, every 11th empty (size 0), every 13th a mirror, every 17th disabled,
languages and topics in turn, stars spread over 0..4999, one push an hour from 2024-01-01.
A test that needs a hostile name or description builds :class:`Made` itself (or
``dataclasses.replace``s one) and gives the list to the server.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "forges"
LANGUAGES = ("Python", "Go", "Rust", None, "TypeScript", "C")
TOPICS = (("cli",), (), ("testing", "cli"), ("git",))
_START = datetime(2024, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Made:
    """One repository as the tests mean it; each forge shapes it its own way."""

    id: int
    owner: str  # an org, user or workspace; a GitLab group path may hold "/"
    name: str
    fork: bool = False
    archived: bool = False
    empty: bool = False
    mirror: bool = False
    disabled: bool = False
    private: bool = False
    language: str | None = "Python"
    topics: tuple[str, ...] = ()
    stars: int = 0
    size: int = 100  # KiB, as GitHub and Gitea count
    default_branch: str = "main"
    pushed_at: str = "2024-01-01T00:00:00Z"
    created_at: str = "2020-01-01T00:00:00Z"
    description: str | None = "A generated repository"

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def clone_url(self, git_base: str) -> str:
        """Where the loopback git server serves it: ``<git_base>/<owner>/<name>.git``."""
        return f"{git_base.rstrip('/')}/{self.full_name}.git"


def made(owner: str, n: int, *, first_id: int = 1000, prefix: str = "repo") -> list[Made]:
    """``n`` repositories of ``owner``, ids from ``first_id`` up (see the module docstring)."""
    return [_one(owner, i, first_id + i, prefix) for i in range(n)]


def _one(owner: str, i: int, id_: int, prefix: str) -> Made:
    empty = i % 11 == 10
    return Made(
        id=id_,
        owner=owner,
        name=f"{prefix}-{i:05d}",
        fork=i % 5 == 4,
        archived=i % 7 == 6,
        empty=empty,
        mirror=i % 13 == 12,
        disabled=i % 17 == 16,
        language=None if empty else LANGUAGES[i % len(LANGUAGES)],
        topics=TOPICS[i % len(TOPICS)],
        stars=(i * 7919) % 5000,
        size=0 if empty else 10 + (i * 31) % 9000,
        default_branch="master" if i % 3 == 2 else "main",
        pushed_at=_iso(_START + timedelta(hours=i)),
        created_at=_iso(_START - timedelta(days=365 + i)),
    )


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


@cache
def _fixture_text(forge: str, name: str) -> str:
    return (FIXTURES / forge / name).read_text()


def fixture(forge: str, name: str) -> Any:
    """A fresh copy of the fixture ``tests/fixtures/forges/<forge>/<name>``."""
    return copy.deepcopy(json.loads(_fixture_text(forge, name)))


def substitute(value: Any, replacements: list[tuple[str, str]]) -> Any:
    """``value`` (a fixture's example) with each string's example names replaced, in
    order: the URLs an example carries become the generated repository's. Only whole
    strings' substrings change; keys and non-strings stay as documented."""
    if isinstance(value, dict):
        return {k: substitute(v, replacements) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, replacements) for v in value]
    if isinstance(value, str):
        for old, new in replacements:
            value = value.replace(old, new)
    return value


def keys_of(value: Any, prefix: str = "") -> set[str]:
    """Every key path in ``value`` (``owner.login``, ``links.clone[].href``): the shape
    a generated answer must share with its fixture."""
    found: set[str] = set()
    if isinstance(value, dict):
        for k, v in value.items():
            found |= {f"{prefix}{k}"} | keys_of(v, f"{prefix}{k}.")
    elif isinstance(value, list):
        for v in value:
            found |= keys_of(v, f"{prefix}[].")
    return found


def hostile(owner: str, *, first_id: int = 90_000) -> list[Made]:
    """Repositories whose forge-given names and texts attack whoever shows or uses them:
    a terminal escape, a line break, a right-to-left override, a path that climbs out,
    URL syntax, a name past any sane length, a description of a megabyte with escapes.
    A forge should never hand these out; a listing must survive one that does."""
    names = [
        "esc\x1b]0;pwned\x07\x1b[2J",
        "line\nbreak",
        "rtl\u202egnp.exe",
        "../../outside",
        "query?x=1#frag",
        "n" * 4096,
    ]
    found = [Made(first_id + i, owner, name) for i, name in enumerate(names)]
    long_text = "\x1b[31m" + "d" * (1 << 20)
    found.append(Made(first_id + len(names), owner, "big-description", description=long_text))
    return found

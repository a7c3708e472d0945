"""One item of a forge's page as a :class:`Listed` record: where each forge keeps each
field, in one table (:data:`FIELDS`), read by :func:`reader` (ADR 0023).

An item is a server's JSON: each field's type is checked here or in ``Listed``, and a
misfit is a ValueError naming the field and the item, escaped and cut short: one item,
one error. A field the forge does not send is None ("not said"), never a default; a
text the forge sends as ``""`` (Gitea's and Bitbucket's language) is none.

What each forge's fields mean, where it matters:

- GitHub: ``mirror`` from ``mirror_url`` (null: not a mirror); no "empty" (a size of 0
  is a hint GitHub may contradict).
- GitLab: a fork carries ``forked_from_project`` only when the caller may read the
  project it came from, so without it the fork flag is not said; ``mirror`` is sent by
  some editions only; the size only with ``statistics``; no language in the list
  (``projects/:id/languages``); ``last_activity_at`` is any activity, not a push.
- Gitea/Forgejo: ``size`` in KiB as GitHub's; ``updated_at`` is the record's last
  change (settings too), not documented to move on each push.
- Bitbucket: the id is the ``uuid``; the clone URL the ``https`` entry of
  ``links.clone``, without the user name Bitbucket writes in for an authenticated
  caller (a password refuses the item); ``mainbranch`` is null before the first push;
  a fork has a ``parent`` (null otherwise); ``size`` in bytes (KiB here, rounded up);
  no archived flag, stars or topics; ``updated_on`` is not documented to move on
  each push.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..._domain.listed import Listed
from ..._domain.sources import Forge
from ..._domain.urls import visible

__all__ = ["FIELDS", "Fields", "reader"]

_SHOWN = 80  # characters of an item's name an error quotes
_TIME_CHARS = 40  # an ISO 8601 time with microseconds and an offset is 32
_UUID_CHARS = 40  # "{" + 36 + "}"


class Fields:
    """One item; ``name_key`` holds what an error calls it (its full name)."""

    def __init__(self, item: Any, name_key: str) -> None:
        if not isinstance(item, dict):
            raise ValueError(f"an item is a {type(item).__name__}, not an object")
        self.item: dict[str, Any] = item
        name = item.get(name_key)
        shown = visible(repr(name)) if isinstance(name, str) else "an item"
        self.name = shown if len(shown) <= _SHOWN else shown[:_SHOWN] + "…"

    def sent(self, key: str, fits: Callable[[Any], bool], what: str) -> Any:
        """The value of ``key``, None when not sent; ValueError when it is not ``what``."""
        value = self.item.get(key)
        if value is not None and not fits(value):
            raise ValueError(f"the {key} of {self.name} is not {what}")
        return value

    def get(self, key: str) -> Any:
        """The value as sent (``Listed`` checks its type); None when not sent or ``""``."""
        value = self.item.get(key)
        return None if value == "" else value


# A cell of the table: the key whose value is the field, as sent; a reader of the item;
# or None, the forge does not say.
Cell = str | Callable[[Fields], Any] | None


def number(key: str) -> Callable[[Fields], str]:
    def read(got: Fields) -> str:
        value = got.item.get(key)
        if type(value) is not int:  # True is no id
            raise ValueError(f"the {key} of {got.name} is not a number")
        return str(value)

    return read


def topics(key: str) -> Callable[[Fields], tuple[Any, ...]]:
    def read(got: Fields) -> tuple[Any, ...]:
        return tuple(got.sent(key, lambda value: isinstance(value, list), "a list") or ())

    return read


def time(key: str) -> Callable[[Fields], datetime | None]:
    """An ISO 8601 time (``Listed`` requires its zone), None when not sent."""

    def read(got: Fields) -> datetime | None:
        value = got.sent(key, lambda v: isinstance(v, str) and len(v) <= _TIME_CHARS, "a time")
        try:
            return None if value is None else datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"the {key} of {got.name} is not a time: {visible(value)}") from None

    return read


def present(key: str) -> Callable[[Fields], bool | None]:
    """True when ``key`` holds something, False when it is null, None when not sent."""

    def read(got: Fields) -> bool | None:
        return None if key not in got.item else got.item[key] is not None

    return read


def kib(key: str) -> Callable[[Fields], int | None]:
    """A size in bytes as KiB, rounded up (a few bytes are not nothing)."""

    def read(got: Fields) -> int | None:
        value = got.sent(key, lambda v: type(v) is int and v >= 0, "a size")
        return None if value is None else -(-value // 1024)

    return read


def _gitlab_fork(got: Fields) -> bool | None:
    return True if got.item.get("forked_from_project") is not None else None


def _gitlab_size(got: Fields) -> int | None:
    statistics = got.item.get("statistics")
    return None if statistics is None else kib("repository_size")(Fields(statistics, ""))


def _bitbucket_uuid(got: Fields) -> str:
    uuid = got.item.get("uuid")
    if not isinstance(uuid, str) or not uuid or len(uuid) > _UUID_CHARS:
        raise ValueError(f"the uuid of {got.name} is not an id")
    return uuid


def _bitbucket_branch(got: Fields) -> Any:
    main = got.item.get("mainbranch")
    return None if main is None else Fields(main, "name").get("name")


def _bitbucket_clone(got: Fields) -> str:
    links = got.item.get("links")
    clones = links.get("clone") if isinstance(links, dict) else None
    if not isinstance(clones, list):
        raise ValueError(f"{got.name} has no clone links")
    hrefs = [c.get("href") for c in clones if isinstance(c, dict) and c.get("name") == "https"]
    if len(hrefs) != 1 or not isinstance(hrefs[0], str):
        raise ValueError(f"{got.name} has no single https clone link")
    href: str = hrefs[0]
    try:
        parts = urlsplit(href)
        user, password = parts.username, parts.password
    except ValueError:
        return href  # Listed refuses it, in its own words
    if password is not None:
        raise ValueError(f"the clone link of {got.name} carries a password")
    if user is None:
        return href
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


# Where each forge keeps each field of Listed, by column: GitHub, GitLab, Gitea, Bitbucket.
_ID = number("id")
_TOPICS = topics("topics")
FIELDS: dict[str, tuple[Cell, Cell, Cell, Cell]] = {
    "full_name": ("full_name", "path_with_namespace", "full_name", "full_name"),
    "clone_url": ("clone_url", "http_url_to_repo", "clone_url", _bitbucket_clone),
    "forge_id": (_ID, _ID, _ID, _bitbucket_uuid),
    "default_branch": ("default_branch", "default_branch", "default_branch", _bitbucket_branch),
    "archived": ("archived", "archived", "archived", None),
    "fork": ("fork", _gitlab_fork, "fork", present("parent")),
    "empty": (None, "empty_repo", "empty", None),
    "disabled": ("disabled", None, None, None),
    "mirror": (present("mirror_url"), "mirror", "mirror", None),
    "size_kib": ("size", _gitlab_size, "size", kib("size")),
    "language": ("language", None, "language", "language"),
    "topics": (_TOPICS, _TOPICS, _TOPICS, None),
    "stars": ("stargazers_count", "star_count", "stars_count", None),
    "pushed_at": (
        time("pushed_at"),
        time("last_activity_at"),
        time("updated_at"),
        time("updated_on"),
    ),
}
_COLUMNS = (Forge.GITHUB, Forge.GITLAB, Forge.GITEA, Forge.BITBUCKET)
_NAMES = {Forge.GITLAB: "path_with_namespace"}  # the key an error names an item by


def reader(forge: Forge) -> Callable[[Any], Listed]:
    """Reads one item of ``forge``'s page into a record that says its forge; ValueError
    (escaped words) when it does not hold."""
    column = _COLUMNS.index(forge)
    cells = {name: cells[column] for name, cells in FIELDS.items()}
    name_key = _NAMES.get(forge, "full_name")

    def listed_of(item: Any) -> Listed:
        got = Fields(item, name_key)
        values = {name: _read(got, cell) for name, cell in cells.items()}
        values["topics"] = values["topics"] or ()
        return Listed(**values, forge=forge)

    return listed_of


def _read(got: Fields, cell: Cell) -> Any:
    if cell is None:
        return None
    return got.get(cell) if isinstance(cell, str) else cell(got)

"""What a forge's listing says of one repository: a :class:`Listed` record (ADR 0023).

Every field comes from a server, so every field is checked where the record is
built: a record that does not hold raises ValueError, with the forge's words escaped
and cut short, and is one error of the listing, never a repository cloned from a URL
nobody checked. A value the forge does not give is ``None`` ("not said"), never a
made-up default: a filter that needs it says so instead of guessing (see filters).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .errors import InvalidURLError
from .sources import Forge
from .urls import parse_repo_url, visible

__all__ = ["MAX_FULL_NAME_CHARS", "Listed"]

# GitLab's deepest path: 20 levels of 255 characters. Longer is no real repository.
MAX_FULL_NAME_CHARS = 5_200
_MAX_TEXT_CHARS = 256  # a branch, a language, a topic, a forge's id
_MAX_TOPICS = 100  # GitHub allows 20 topics; GitLab has no documented cap
_SHOWN_CHARS = 80  # how much of a refused value an error quotes


@dataclass(frozen=True, slots=True)
class Listed:
    """One repository as a forge's listing describes it.

    Attributes:
      full_name: ``owner/name`` (a GitLab project's full path, ``group/sub/name``).
      clone_url: the https URL to clone, as the forge gave it; it must parse as a
        network repository URL (no local path, no ``file://``). A token follows it
        only under ADR 0013's rules, whatever host it names.
      forge_id: the forge's own id for the repository, as text.
      default_branch: None if not said (an empty repository may have none).
      archived, fork, empty, disabled, mirror: the forge's flags; None if not said.
      size_kib: the forge's size in KiB (GitHub and Gitea say KiB); None if not said.
      language: the primary language, as the forge names it; None if none or not said.
      topics: the topics, as the forge gives them; ``()`` if none (or not said).
      stars: the star count; None if not said.
      pushed_at: the last push, timezone-aware; None if not said.
      forge: the forge whose listing said all this; None if the lister did not say.
    """

    full_name: str
    clone_url: str
    forge_id: str
    default_branch: str | None = None
    archived: bool | None = None
    fork: bool | None = None
    empty: bool | None = None
    disabled: bool | None = None
    mirror: bool | None = None
    size_kib: int | None = None
    language: str | None = None
    topics: tuple[str, ...] = ()
    stars: int | None = None
    pushed_at: datetime | None = None
    forge: Forge | None = None

    def __post_init__(self) -> None:
        _check_text("full name", self.full_name, MAX_FULL_NAME_CHARS)
        if "/" not in self.full_name.strip("/"):
            raise ValueError(f"full name {_shown(self.full_name)} is not owner/name")
        _check_text("id", self.forge_id, _MAX_TEXT_CHARS)
        _check_clone_url(self.full_name, self.clone_url)
        for name in ("default_branch", "language"):
            value = getattr(self, name)
            if value is not None:
                _check_text(name.replace("_", " "), value, _MAX_TEXT_CHARS)
        if not isinstance(self.topics, tuple):
            raise ValueError(f"the topics of {_shown(self.full_name)} are not a list")
        if len(self.topics) > _MAX_TOPICS:
            raise ValueError(f"{_shown(self.full_name)} has over {_MAX_TOPICS} topics")
        for topic in self.topics:
            _check_text("topic", topic, _MAX_TEXT_CHARS)
        for name in ("size_kib", "stars"):
            _check_count(name, getattr(self, name))
        for name in ("archived", "fork", "empty", "disabled", "mirror"):
            flag = getattr(self, name)
            if flag is not None and type(flag) is not bool:  # 1 == True: not a flag
                raise ValueError(f"{name} of {_shown(self.full_name)} is not true or false")
        _check_time(self.full_name, self.pushed_at)
        if self.forge is not None and not isinstance(self.forge, Forge):
            raise ValueError(f"the forge of {_shown(self.full_name)} is not a Forge")


def _check_clone_url(full_name: str, clone_url: object) -> None:
    if not isinstance(clone_url, str):
        raise ValueError(f"clone URL of {_shown(full_name)} is not text: {_shown(clone_url)}")
    try:
        url = parse_repo_url(clone_url)
    except InvalidURLError as exc:
        raise ValueError(f"clone URL of {_shown(full_name)}: {exc.reason}") from None
    if url.username is not None or url.password is not None:
        # A listing never hands out a secret to use: it would bypass ADR 0013.
        raise ValueError(f"clone URL of {_shown(full_name)} carries user-info")


def _check_time(full_name: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, datetime):
        raise ValueError(f"pushed_at of {_shown(full_name)} is not a time: {_shown(value)}")
    if value.utcoffset() is None:
        raise ValueError(f"pushed_at of {_shown(full_name)} has no time zone")


def _shown(text: object) -> str:
    """A server's value in an error: escaped, and cut short."""
    plain = isinstance(text, str | int | float) or text is None
    shown = visible(repr(text) if plain else f"a {type(text).__name__}")
    return shown if len(shown) <= _SHOWN_CHARS else shown[:_SHOWN_CHARS] + "…"


def _check_text(what: str, value: object, limit: int) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"the {what} is not text: {_shown(value)}")
    if len(value) > limit:
        raise ValueError(f"the {what} is over {limit} characters: {_shown(value)}")
    if not value.isprintable() or any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise ValueError(f"the {what} holds control characters: {_shown(value)}")


def _check_count(what: str, value: object) -> None:
    # bool is an int in Python; a count of True is a forge's mistake, not 1.
    if value is not None and (type(value) is not int or not 0 <= value < 1 << 63):
        raise ValueError(f"{what} is not a count: {_shown(value)}")

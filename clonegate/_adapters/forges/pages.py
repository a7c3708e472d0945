"""Reading a forge's answers (issue 45, ADR 0023): a page's items into records, its next
page from ``Link``, the URLs a listing may go to, and a failure in words, escaped.

Pure functions over :class:`Got`, the answer as :mod:`.http` received it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urljoin, urlsplit

from ..._domain.listed import Listed
from ..._domain.listing import ListingError, Page
from ..._domain.sources import Source
from ..._domain.urls import redact, visible

__all__ = [
    "SHOWN_CHARS",
    "Got",
    "ItemReader",
    "Step",
    "check_scheme",
    "failure",
    "items_list",
    "link_next",
    "link_step",
    "link_target",
    "page_of",
    "same_origin",
    "server_now",
    "shown_url",
]

_LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
SHOWN_CHARS = 200  # characters of a server's message an error quotes


@dataclass(frozen=True)
class Got:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes

    def json(self, source: Source) -> Any:
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            raise ListingError(f"{source}: the page is not JSON") from None


# Reads one item of a page into a record; ValueError/TypeError for an item that does not hold.
ItemReader = Callable[[Any], Listed]
# Reads one fetched page: the page to hand out (None: nothing to hand out) and the next URL.
Step = Callable[[str, Got], tuple[Page | None, str | None]]


def page_of(source: Source, url: str, items: list[Any], read: ItemReader, **flags: bool) -> Page:
    """The page of ``items``: each read into a record, or one escaped message."""
    listed, refused = [], []
    for index, item in enumerate(items):
        try:
            listed.append(read(item))
        except (ValueError, TypeError) as exc:
            refused.append(f"{source}: item {index + 1} of {shown_url(url)}: {exc}")
    return Page(tuple(listed), tuple(refused), **flags)


def check_scheme(source: Source, url: str) -> None:
    """Refuses a URL with user-info, or neither https nor http on loopback."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ListingError(f"{source}: a page URL with user-info: {shown_url(url)}")
    if parts.scheme == "https" or (parts.scheme == "http" and parts.hostname in _LOOPBACK):
        return
    raise ListingError(f"{source}: not https (http only on loopback): {shown_url(url)}")


def link_step(source: Source, read: ItemReader) -> Step:
    """Reads a page that is a JSON list of items, its next page in ``Link``."""

    def step(url: str, got: Got) -> tuple[Page, str | None]:
        items = items_list(source, got)
        return page_of(source, url, items, read), link_next(source, url, got)

    return step


def items_list(source: Source, got: Got) -> list[Any]:
    body = got.json(source)
    if not isinstance(body, list):
        raise ListingError(f"{source}: the page is not a list of repositories")
    return body


def link_next(source: Source, url: str, got: Got) -> str | None:
    """``Link: <…>; rel="next"``'s target, resolved against ``url``; never from https
    to http."""
    target = link_target(got)
    if target is None:
        return None
    following = urljoin(url, target)
    check_scheme(source, following)
    if urlsplit(url).scheme == "https" and urlsplit(following).scheme != "https":
        raise ListingError(f"{source}: a next page over plain http refused")
    return following


def link_target(got: Got) -> str | None:
    """The target of ``rel="next"`` in the answer's ``Link``, as written."""
    for part in got.headers.get("link", "").split(","):
        target, _, params = part.partition(";")
        rels = [p.strip() for p in params.split(";")]
        if 'rel="next"' in rels or "rel=next" in rels:
            return target.strip().removeprefix("<").removesuffix(">")
    return None


def same_origin(one: str, other: str) -> bool:
    """Same scheme, host and port (the default port of the scheme spelled or not)."""
    a, b = urlsplit(one), urlsplit(other)
    try:
        ports = (a.port or _DEFAULT_PORTS.get(a.scheme), b.port or _DEFAULT_PORTS.get(b.scheme))
    except ValueError:
        return False
    return a.scheme == b.scheme and a.hostname == b.hostname and ports[0] == ports[1]


_DEFAULT_PORTS = {"https": 443, "http": 80}


def server_now(headers: dict[str, str]) -> float:
    """The answer's moment on the server's clock (``Date``); ours if it gives none."""
    try:
        return parsedate_to_datetime(headers["date"]).timestamp()
    except (KeyError, TypeError, ValueError, IndexError, OverflowError):
        return time.time()


def failure(got: Got, url: str) -> str:
    """An answer that is no page, in words: its status, and the forge's message if it
    sent one (GitHub's and Gitea's ``message``, GitLab's ``message`` or ``error``,
    Bitbucket's ``error.message``), escaped and cut short."""
    said: object = None
    try:
        body = json.loads(got.body)
    except (ValueError, RecursionError):
        body = None
    if isinstance(body, dict):
        said = body.get("message", body.get("error"))
        if isinstance(said, dict):
            said = said.get("message")
    message = f": {visible(said)[:SHOWN_CHARS]}" if isinstance(said, str) else ""
    return f"HTTP {got.status} for {shown_url(url)}{message}"


def shown_url(url: str) -> str:
    shown = visible(redact(url))
    return shown if len(shown) <= SHOWN_CHARS else shown[:SHOWN_CHARS] + "…"

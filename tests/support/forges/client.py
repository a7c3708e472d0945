"""The tests' client of the forge servers: urllib3 (in the lock already), run in a trio
worker thread so that the server, in the test's loop, answers meanwhile. No retries
and no redirects: a test sees exactly what the server said."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import trio
import urllib3

_LINK = re.compile(r'<([^>]*)>\s*;\s*rel="([^"]*)"')
_BOUND = 30.0  # seconds a loopback answer may take on a loaded machine: a safety net


@dataclass(frozen=True)
class Got:
    status: int
    headers: dict[str, str]  # lower-cased names
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    def links(self) -> dict[str, str]:
        """The ``Link`` header's targets by relation."""
        return {rel: url for url, rel in _LINK.findall(self.headers.get("link", ""))}


async def get(url: str, headers: dict[str, str] | None = None) -> Got:
    def fetch() -> Got:
        answer = urllib3.request(
            "GET", url, headers=headers, retries=False, redirect=False, timeout=_BOUND
        )
        names = {k.lower(): v for k, v in answer.headers.items()}
        return Got(answer.status, names, answer.data)

    return await trio.to_thread.run_sync(fetch)


async def walk_links(
    url: str, headers: dict[str, str] | None = None, *, most: int = 200
) -> list[Got]:
    """Every page from ``url`` on, following ``rel="next"`` until a page has none;
    past ``most`` pages a failure (a next link that never ends), not a hung test."""
    pages = [await get(url, headers)]
    while (following := pages[-1].links().get("next")) is not None:
        assert len(pages) < most, f"still a next link after {most} pages"
        pages.append(await get(following, headers))
    return pages


async def walk_bodies(
    url: str, headers: dict[str, str] | None = None, *, most: int = 200
) -> list[Got]:
    """Bitbucket's walk: every page from ``url`` on, following each body's ``next``."""
    pages = [await get(url, headers)]
    while (following := pages[-1].json().get("next")) is not None:
        assert len(pages) < most, f"still a next page after {most} pages"
        pages.append(await get(following, headers))
    return pages

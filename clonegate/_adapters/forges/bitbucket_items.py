"""One Bitbucket Cloud repository as a :class:`Listed` (ADR 0023).

- The clone URL is the ``https`` entry of ``links.clone``. Bitbucket writes the caller's
  user name into it when the request was authenticated (``https://USER@bitbucket.org/``):
  a bare user name is dropped (ADR 0013 binds credentials, a listing hands out none);
  a password in it refuses the item.
- The forge id is the repository's ``uuid``; the default branch ``mainbranch.name``
  (null when the repository has no branch yet); a fork has a ``parent``, which is
  ``null`` otherwise; ``size`` is in bytes (KiB here, rounded up); a language of ``""``
  is none; the time is ``updated_on``, which a push moves but so do other changes.
- Bitbucket has no archived flag, no stars, no topics, no empty or mirror flag: None
  (not said), never false.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..._domain.listed import Listed
from .items import Fields

__all__ = ["listed_of"]

_UUID_CHARS = 40  # "{" + 36 + "}"


def listed_of(item: Any) -> Listed:
    """``item`` as a record; ValueError (escaped words) when it does not hold."""
    got = Fields(item, "full_name")
    uuid = got.get("uuid")
    if not isinstance(uuid, str) or not uuid or len(uuid) > _UUID_CHARS:
        raise ValueError(f"the uuid of {got.name} is not an id")
    main = got.get("mainbranch")
    branch = Fields(main, "name").get("name") if main is not None else None
    return Listed(
        full_name=got.get("full_name"),
        clone_url=_https_clone(got),
        forge_id=uuid,
        default_branch=branch,
        fork=got.flag_of_presence("parent"),
        size_kib=got.kib("size"),
        language=got.named("language"),
        pushed_at=got.time("updated_on"),
    )


def _https_clone(got: Fields) -> str:
    links = got.get("links")
    clones = links.get("clone") if isinstance(links, dict) else None
    if not isinstance(clones, list):
        raise ValueError(f"{got.name} has no clone links")
    hrefs = [c.get("href") for c in clones if isinstance(c, dict) and c.get("name") == "https"]
    if len(hrefs) != 1 or not isinstance(hrefs[0], str):
        raise ValueError(f"{got.name} has no single https clone link")
    href: str = hrefs[0]
    try:
        parts = urlsplit(href)
        netloc = parts.netloc.rpartition("@")[2]
    except ValueError:
        return href  # Listed refuses it, in its own words
    if parts.password is not None:
        raise ValueError(f"the clone link of {got.name} carries a password")
    return urlunsplit(parts._replace(netloc=netloc)) if parts.username is not None else href

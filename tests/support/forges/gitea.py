"""Gitea's (and Forgejo's, the same API) list APIs under ``/api/v1``.

- ``GET /api/v1/orgs/{org}/repos`` (an org given in ``orgs``) and
  ``GET /api/v1/users/{username}/repos`` (any owner, an org included).
- ``page`` (from 1) and ``limit`` (default 30, the instance's ``DEFAULT_PAGING_NUM``;
  at most 50, its ``MAX_RESPONSE_ITEMS`` (``max_limit``): a larger limit is served as
  that many).
- ``X-Total-Count`` on every page, and a ``Link`` with ``next``, ``last``, ``first``,
  ``prev`` where they exist, as Gitea's API usage page shows; both exposed to browsers
  through ``Access-Control-Expose-Headers``.
- Gitea has no rate limit of its own; an instance behind a proxy may answer 429:
  :meth:`GiteaApi.throttle` arms that (``Retry-After``).
- A fork carries its ``parent`` (a repository); ``empty``, ``mirror``, ``archived``,
  ``size``, ``language``, ``topics`` and ``stars_count`` as the fixture documents.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable
from typing import Any

from .catalogue import Made, fixture, substitute
from .core import (
    Answer,
    ForgeServer,
    Refusals,
    Seen,
    int_param,
    json_answer,
    link_header,
    with_query,
)

DEFAULT_LIMIT = 30
MAX_LIMIT = 50
_EXAMPLE = "https://gitea.example.com"


class GiteaApi(ForgeServer):
    def __init__(
        self,
        repos: Iterable[Made],
        *,
        git_base: str,
        orgs: Iterable[str] = (),
        max_limit: int = MAX_LIMIT,
        epoch: float | None = None,
    ) -> None:
        super().__init__(epoch=epoch)
        self.max_limit = max_limit  # the instance's MAX_RESPONSE_ITEMS
        self.repos = sorted(repos, key=lambda r: r.id)
        self.git_base = git_base
        self.orgs = set(orgs)
        self.refusals = Refusals()

    def throttle(self, count: int = 1, retry_after: int = 30) -> None:
        """Answer the next ``count`` requests 429 with ``Retry-After``."""
        self.refusals = Refusals(count, 429, retry_after)

    def answer(self, request: Seen) -> Answer:
        if self.refusals.take():
            headers = {"Retry-After": str(self.refusals.retry_after)}
            return json_answer(429, {"message": "rate limit exceeded"}, headers)
        parts = request.path.split("/")
        # "", "api", "v1", "orgs" | "users", name, "repos"
        routed = len(parts) == 6 and parts[:3] == ["", "api", "v1"] and parts[5] == "repos"
        if request.method not in ("GET", "HEAD") or not routed:
            return json_answer(404, fixture("gitea", "not_found.json"))
        kind, name = parts[3], parts[4].lower()
        mine = [r for r in self.repos if r.owner.lower() == name]
        is_org = name in {o.lower() for o in self.orgs}
        # An organisation is a user too: /users/{org}/repos lists its repositories.
        known = is_org if kind == "orgs" else kind == "users" and (is_org or bool(mine))
        if not known:
            return json_answer(404, fixture("gitea", "not_found.json"))
        return self._page(request, mine)

    def _page(self, request: Seen, found: list[Made]) -> Answer:
        limit = int_param(request, "limit", DEFAULT_LIMIT, low=1, high=self.max_limit)
        page = int_param(request, "page", 1, low=1, high=1 << 30)
        if limit is None or page is None:
            return json_answer(422, {"message": "invalid page or limit", "url": ""})
        items = [self.shape(r) for r in found[(page - 1) * limit : page * limit]]
        last = max(1, math.ceil(len(found) / limit))
        links = []
        if page < last:
            links.append(("next", with_query(self.base_url, request, page=page + 1)))
            links.append(("last", with_query(self.base_url, request, page=last)))
        if page > 1:
            links.append(("first", with_query(self.base_url, request, page=1)))
            links.append(("prev", with_query(self.base_url, request, page=page - 1)))
        headers = {
            "X-Total-Count": str(len(found)),
            "Access-Control-Expose-Headers": "X-Total-Count, Link",
        }
        if links:
            headers["Link"] = link_header(links)
        return json_answer(200, items, headers)

    def shape(self, repo: Made) -> dict[str, Any]:
        """``repo`` as a Repository of Gitea's API, in the documented shape."""
        item = self._base(repo)
        if repo.fork:
            upstream = Made(repo.id + 1_000_000, "upstream", repo.name)
            item["parent"] = self._base(upstream)
        return item

    def _base(self, repo: Made) -> dict[str, Any]:
        web = self.git_base.rstrip("/")
        item: dict[str, Any] = substitute(
            fixture("gitea", "repository.json"),
            [
                (
                    f"{_EXAMPLE}/api/v1/repos/example/hello-world",
                    f"{self.base_url}/api/v1/repos/{repo.full_name}",
                ),
                (f"{_EXAMPLE}/example/hello-world", f"{web}/{repo.full_name}"),
                (f"{_EXAMPLE}/example", f"{web}/{repo.owner}"),
                ("example@noreply.gitea.example.com", f"{repo.owner}@noreply.localhost"),
                (_EXAMPLE, web),
            ],
        )
        owner_id = zlib.crc32(repo.owner.encode()) & 0x7FFFFFF
        item["owner"].update(id=owner_id, login=repo.owner, username=repo.owner)
        item.update(
            id=repo.id,
            name=repo.name,
            full_name=repo.full_name,
            description=repo.description or "",
            empty=repo.empty,
            private=repo.private,
            fork=repo.fork,
            mirror=repo.mirror,
            size=repo.size,
            language=repo.language or "",
            ssh_url=f"git@127.0.0.1:{repo.full_name}.git",
            clone_url=repo.clone_url(self.git_base),
            original_url=f"https://example.org/{repo.full_name}.git" if repo.mirror else "",
            stars_count=repo.stars,
            default_branch=repo.default_branch,
            archived=repo.archived,
            created_at=repo.created_at,
            updated_at=repo.pushed_at,
            archived_at=repo.pushed_at if repo.archived else "1970-01-01T00:00:00Z",
            topics=list(repo.topics),
        )
        return item

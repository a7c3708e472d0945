"""Bitbucket Cloud's list API (api.bitbucket.org, under ``/2.0``).

- ``GET /2.0/repositories/{workspace}``: a paginated object ``{"pagelen", "size",
  "page", "values", "next", "previous"}``; ``pagelen`` default 10, at most 100 (more is
  served as 100), ``page`` from 1. ``next`` is left out on the last page and
  ``previous`` on the first: a client follows ``next`` and computes nothing itself.
- A repository's clone links are ``links.clone[]`` (``https`` and ``ssh``); the default
  branch is ``mainbranch.name`` (``null`` for an empty repository); a fork has a
  ``parent``; ``size`` is in bytes; there is no archived flag and no star count.
- Bitbucket answers 429 when a limit is passed: :meth:`BitbucketApi.throttle`.
- An unknown workspace is a 404 with Bitbucket's error object.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Iterable
from typing import Any

from .catalogue import Made, fixture, substitute
from .core import Answer, ForgeServer, Refusals, Seen, int_param, json_answer, with_query

DEFAULT_PAGELEN = 10
MAX_PAGELEN = 100
_EXAMPLE = "atlassian_tutorial/geordi"


class BitbucketApi(ForgeServer):
    def __init__(
        self,
        repos: Iterable[Made],
        *,
        git_base: str,
        workspaces: Iterable[str] = (),
        epoch: float | None = None,
    ) -> None:
        super().__init__(epoch=epoch)
        self.repos = sorted(repos, key=lambda r: r.id)
        self.git_base = git_base
        self.workspaces = set(workspaces) | {r.owner for r in self.repos}
        self.refusals = Refusals()

    def throttle(self, count: int = 1, retry_after: int | None = None) -> None:
        """Answer the next ``count`` requests 429 (``Retry-After`` only when given)."""
        self.refusals = Refusals(count, 429, retry_after)

    def answer(self, request: Seen) -> Answer:
        if self.refusals.take():
            wait = self.refusals.retry_after
            headers = {} if wait is None else {"Retry-After": str(wait)}
            body = {
                "type": "error",
                "error": {"message": "Rate limit for this resource has been exceeded"},
            }
            return json_answer(429, body, headers)
        parts = request.path.split("/")
        # "", "2.0", "repositories", workspace
        routed = len(parts) == 4 and parts[1:3] == ["2.0", "repositories"]
        workspace = parts[3].lower() if routed else ""
        known = {w.lower(): w for w in self.workspaces}
        if request.method not in ("GET", "HEAD") or workspace not in known:
            return json_answer(404, fixture("bitbucket", "not_found.json"))
        found = [r for r in self.repos if r.owner.lower() == workspace]
        return self._page(request, found)

    def _page(self, request: Seen, found: list[Made]) -> Answer:
        pagelen = int_param(request, "pagelen", DEFAULT_PAGELEN, low=1, high=MAX_PAGELEN)
        page = int_param(request, "page", 1, low=1, high=1 << 30)
        if pagelen is None or page is None:
            invalid = {"type": "error", "error": {"message": "Invalid page or pagelen"}}
            return json_answer(400, invalid)
        body: dict[str, Any] = {"pagelen": pagelen, "size": len(found), "page": page}
        body["values"] = [self.shape(r) for r in found[(page - 1) * pagelen : page * pagelen]]
        last = max(1, math.ceil(len(found) / pagelen))
        if page < last:
            body["next"] = with_query(self.base_url, request, page=page + 1)
        if page > 1:
            body["previous"] = with_query(self.base_url, request, page=min(page, last + 1) - 1)
        return json_answer(200, body)

    def shape(self, repo: Made) -> dict[str, Any]:
        """``repo`` as a repository object of Bitbucket's API, in the documented shape."""
        api = f"{self.base_url}/2.0"
        item: dict[str, Any] = substitute(
            fixture("bitbucket", "repository.json"),
            [
                ("https://api.bitbucket.org/2.0", api),
                ("https://bitbucket.org", self.git_base.rstrip("/")),
                (_EXAMPLE, repo.full_name),
                ("atlassian_tutorial", repo.owner),
            ],
        )
        item["links"]["clone"] = [
            {"name": "https", "href": repo.clone_url(self.git_base)},
            {"name": "ssh", "href": f"git@127.0.0.1:{repo.full_name}.git"},
        ]
        repo_uuid = _uuid(f"repository/{repo.id}")
        item["owner"].update(username=repo.owner, display_name=repo.owner)
        item["workspace"].update(slug=repo.owner, name=repo.owner)
        item.update(
            full_name=repo.full_name,
            name=repo.name,
            slug=repo.name,
            description=repo.description or "",
            is_private=repo.private,
            created_on=_bitbucket_time(repo.created_at),
            updated_on=_bitbucket_time(repo.pushed_at),
            size=repo.size * 1024,
            language=(repo.language or "").lower(),
            uuid=repo_uuid,
            mainbranch=None if repo.empty else {"name": repo.default_branch, "type": "branch"},
        )
        if repo.fork:
            item["parent"] = {
                "type": "repository",
                "full_name": f"upstream/{repo.name}",
                "links": {"self": {"href": f"{api}/repositories/upstream/{repo.name}"}},
                "name": repo.name,
                "uuid": _uuid(f"upstream/{repo.id}"),
            }
        return item


def _uuid(seed: str) -> str:
    """Bitbucket's braced UUID, the same for the same seed."""
    return "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, seed)) + "}"


def _bitbucket_time(iso: str) -> str:
    """``2024-01-01T00:00:00Z`` as Bitbucket writes times: microseconds and an offset."""
    return iso.removesuffix("Z") + ".000000+00:00"

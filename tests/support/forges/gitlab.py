"""GitLab's REST list APIs (``/api/v4``, gitlab.com or a self-managed instance).

- ``GET /api/v4/groups/:id/projects``: ``:id`` a group's number or its URL-encoded path
  (``gitlab-org%2Fsub``; an unencoded ``/`` finds nothing, as on GitLab);
  ``include_subgroups=true`` adds every project of every group below it.
- ``GET /api/v4/users/:id/projects``: ``:id`` a user's number or name (a user is an
  owner given in ``users``).
- Offset pages (the default): ``page`` and ``per_page`` (default 20, at most 100), in id
  order, with ``X-Page``, ``X-Per-Page``, ``X-Next-Page``, ``X-Prev-Page``, ``X-Total``,
  ``X-Total-Pages`` and a ``Link`` (prev, next, first, last). Past 10,000 results
  GitLab leaves out the totals and ``rel="last"``, and so does this server.
- Keyset pages: ``pagination=keyset`` with ``order_by=id`` (``sort`` asc, the default,
  or desc): the next page is only in ``Link: <…id_after=N…>; rel="next"`` (or
  ``id_before`` descending), no totals; another ``order_by`` is a 405.
- An instance under a path (``prefix="/gitlab"``) serves all of it below that path.
- ``statistics`` only with ``statistics=true``; ``forked_from_project`` only on forks.
- Rate limits as gitlab.com: every answer carries ``RateLimit-Name``, ``-Limit``,
  ``-Observed``, ``-Remaining``, ``-Reset`` (Unix time) and ``-ResetTime`` (an HTTP date);
  past the budget (``limit`` per ``window`` trio seconds): a 429 with ``Retry-After``
  and GitLab's plain-text body.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable
from typing import Any
from urllib.parse import unquote

import trio

from .catalogue import FIXTURES, Made, fixture, substitute
from .core import Answer, Budget, ForgeServer, Seen, int_param, json_answer, link_header, with_query

TOTALS_CAP = 10_000  # past it, GitLab counts no totals for offset pages
_EXAMPLE = "https://gitlab.example.com"


class GitLabApi(ForgeServer):
    def __init__(
        self,
        repos: Iterable[Made],
        *,
        git_base: str,
        users: Iterable[str] = (),
        prefix: str = "",
        limit: int = 2000,
        window: float = 60.0,
        epoch: float | None = None,
    ) -> None:
        super().__init__(epoch=epoch)
        self.repos = sorted(repos, key=lambda r: r.id)
        self.git_base = git_base
        self.users = set(users)
        self.prefix = prefix  # an instance under a path: "/gitlab"
        self.budget = Budget(limit, window)

    def group_id(self, path: str) -> int:
        """A group's (or user's) number: stable, from its path."""
        return zlib.crc32(path.encode()) & 0x7FFFFFF

    def answer(self, request: Seen) -> Answer:
        now = trio.current_time()
        if not self.budget.take(now):
            assert self.budget.reset_at is not None
            wait = max(1, math.ceil(self.budget.reset_at - now))
            body = (FIXTURES / "gitlab" / "rate_limited.txt").read_bytes()
            headers = {"Content-Type": "text/plain", "Retry-After": str(wait), **self._rate(now)}
            return Answer(429, headers, body)
        answer = self._route(request)
        answer.headers.update(self._rate(now))
        return answer

    def _rate(self, now: float) -> dict[str, str]:
        reset = self.budget.refresh(now)
        return {
            "RateLimit-Name": "throttle_authenticated_api",
            "RateLimit-Limit": str(self.budget.limit),
            "RateLimit-Observed": str(self.budget.used),
            "RateLimit-Remaining": str(self.budget.remaining),
            "RateLimit-Reset": str(math.ceil(self.unix(reset))),
            "RateLimit-ResetTime": self.http_date(reset),
        }

    def _route(self, request: Seen) -> Answer:
        if not request.path.startswith(self.prefix + "/"):
            return json_answer(404, {"error": "404 Not Found"})
        parts = request.path.removeprefix(self.prefix).split("/")
        # "", "api", "v4", "groups" | "users", ":id", "projects"
        if (
            request.method not in ("GET", "HEAD")
            or len(parts) != 6
            or parts[:3] != ["", "api", "v4"]
        ):
            return json_answer(404, {"error": "404 Not Found"})
        kind, key, tail = parts[3], unquote(parts[4]), parts[5]
        if tail != "projects" or kind not in ("groups", "users"):
            return json_answer(404, {"error": "404 Not Found"})
        if kind == "groups":
            found = self._group_projects(key, request.param("include_subgroups") == "true")
        else:
            found = self._user_projects(key)
        if found is None:
            return json_answer(404, fixture("gitlab", "not_found.json"))
        archived = request.param("archived")
        if archived in ("true", "false"):
            found = [r for r in found if r.archived == (archived == "true")]
        if request.param("pagination") == "keyset":
            return self._keyset(request, found)
        return self._offset(request, found)

    def _group_projects(self, key: str, subgroups: bool) -> list[Made] | None:
        groups = {r.owner for r in self.repos if r.owner not in self.users}
        groups |= {p.rsplit("/", i)[0] for p in groups for i in range(p.count("/") + 1)}
        path = next((g for g in groups if key in (g, str(self.group_id(g)))), None)
        if path is None:
            return None
        below = path + "/"
        return [
            r for r in self.repos if r.owner == path or (subgroups and r.owner.startswith(below))
        ]

    def _user_projects(self, key: str) -> list[Made] | None:
        user = next((u for u in self.users if key in (u, str(self.group_id(u)))), None)
        return None if user is None else [r for r in self.repos if r.owner == user]

    def _offset(self, request: Seen, found: list[Made]) -> Answer:
        per_page = int_param(request, "per_page", 20, low=1, high=100)
        page = int_param(request, "page", 1, low=1, high=1 << 30)
        if per_page is None or page is None:
            return json_answer(400, {"error": "page is invalid"})
        statistics = request.param("statistics") == "true"
        items = [self.shape(r, statistics) for r in found[(page - 1) * per_page : page * per_page]]
        pages = max(1, math.ceil(len(found) / per_page))
        counted = len(found) <= TOTALS_CAP
        links, headers = [], {"X-Page": str(page), "X-Per-Page": str(per_page)}
        headers["X-Prev-Page"] = str(page - 1) if page > 1 else ""
        headers["X-Next-Page"] = str(page + 1) if page < pages else ""
        if page > 1:
            links.append(("prev", with_query(self.base_url, request, page=page - 1)))
        if page < pages:
            links.append(("next", with_query(self.base_url, request, page=page + 1)))
        links.append(("first", with_query(self.base_url, request, page=1)))
        if counted:
            links.append(("last", with_query(self.base_url, request, page=pages)))
            headers.update({"X-Total": str(len(found)), "X-Total-Pages": str(pages)})
        return json_answer(200, items, {**headers, "Link": link_header(links)})

    def _keyset(self, request: Seen, found: list[Made]) -> Answer:
        if request.param("order_by") != "id":
            return json_answer(405, fixture("gitlab", "keyset_unavailable.json"))
        per_page = int_param(request, "per_page", 20, low=1, high=100)
        descending = request.param("sort", "asc") == "desc"
        key = "id_before" if descending else "id_after"
        bound = int_param(request, key, -1, low=-1, high=1 << 62)
        if per_page is None or bound is None:
            return json_answer(400, {"error": f"{key} is invalid"})
        ordered = list(reversed(found)) if descending else found
        if bound >= 0:
            ordered = [r for r in ordered if (r.id < bound if descending else r.id > bound)]
        page, more = ordered[:per_page], len(ordered) > per_page
        statistics = request.param("statistics") == "true"
        items = [self.shape(r, statistics) for r in page]
        headers = {}
        if more:
            following = with_query(self.base_url, request, **{key: page[-1].id})
            headers["Link"] = link_header([("next", following)])
        return json_answer(200, items, headers)

    def shape(self, repo: Made, statistics: bool = False) -> dict[str, Any]:
        """``repo`` as a project of the list endpoints, in the documented shape."""
        web = self.git_base.rstrip("/")
        item: dict[str, Any] = substitute(
            fixture("gitlab", "project.json"),
            [
                (
                    f"{_EXAMPLE}/api/v4/projects/4",
                    f"{self.base_url}{self.prefix}/api/v4/projects/{repo.id}",
                ),
                (f"{_EXAMPLE}/diaspora/diaspora-client", f"{web}/{repo.full_name}"),
                ("registry.gitlab.example.com/diaspora/diaspora-client", repo.full_name),
                (_EXAMPLE, web),
            ],
        )
        owner_name = repo.owner.rsplit("/", 1)[-1]
        item["namespace"] = {
            "id": self.group_id(repo.owner),
            "name": owner_name,
            "path": owner_name,
            "kind": "user" if repo.owner in self.users else "group",
            "full_path": repo.owner,
            "parent_id": self.group_id(repo.owner.rsplit("/", 1)[0]) if "/" in repo.owner else None,
            "avatar_url": None,
            "web_url": f"{web}/{repo.owner}",
        }
        item.update(
            id=repo.id,
            description=repo.description,
            name=repo.name,
            name_with_namespace=f"{repo.owner.replace('/', ' / ')} / {repo.name}",
            path=repo.name,
            path_with_namespace=repo.full_name,
            created_at=repo.created_at,
            default_branch=None if repo.empty else repo.default_branch,
            tag_list=list(repo.topics),
            topics=list(repo.topics),
            ssh_url_to_repo=f"git@127.0.0.1:{repo.full_name}.git",
            http_url_to_repo=repo.clone_url(self.git_base),
            readme_url=None if repo.empty else item["readme_url"],
            star_count=repo.stars,
            last_activity_at=repo.pushed_at,
            empty_repo=repo.empty,
            archived=repo.archived,
            visibility="private" if repo.private else "public",
            mirror=repo.mirror,
        )
        if repo.fork:
            upstream = substitute(fixture("gitlab", "forked_from_project.json"), [(_EXAMPLE, web)])
            item["forked_from_project"] = upstream
        if not statistics:
            del item["statistics"]
        return item

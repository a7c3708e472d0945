"""GitHub's REST list APIs (api.github.com, or GitHub Enterprise Server under ``/api/v3``).

- ``GET /orgs/{org}/repos`` (an org given in ``orgs``) and ``GET /users/{user}/repos``
  (any owner), ``type=forks`` or ``sources`` (not forks) understood, other types list
  all: ``per_page`` (default 30, at most 100), ``page`` (from 1); a ``Link``
  header with ``prev``, ``next``, ``last``, ``first`` where they exist.
- ``GET /search/repositories?q=…``: ``{"total_count", "incomplete_results", "items"}``,
  each item a repository with a ``score``; only the first 1,000 results can be reached:
  a page starting past them is a 422, as GitHub answers (page 11 of 100 included),
  and ``rel="last"`` names the last reachable page. No ``q``: a 422. A query with
  ``created:FIRST..LAST`` (days) finds the repositories created in that range, and its
  ``total_count`` is theirs (``search_total`` is the total of a query without one).
- Every answer has ``X-RateLimit-Limit/Remaining/Reset/Used/Resource`` (``core``, or
  ``search`` for the search endpoint, each its own :class:`.core.Budget`). A request
  past its budget is ``limited_status`` (403 or 429, both documented) with remaining 0
  and the reset; a secondary limit (:meth:`GitHubApi.secondary`) is a 403 with
  ``Retry-After``, counted against no budget.
- Each 200 carries an ``ETag``; ``If-None-Match`` with it is a 304 without a body,
  which GitHub does not count against the primary limit when the request carries an
  ``Authorization`` header (an anonymous one counts).
"""

from __future__ import annotations

import base64
import math
import re
import zlib
from collections.abc import Iterable
from typing import Any

import trio

from .catalogue import Made, fixture, substitute
from .core import (
    Answer,
    Budget,
    ForgeServer,
    Refusals,
    Seen,
    conditional,
    int_param,
    json_answer,
    link_header,
    with_query,
)

SEARCH_CAP = 1000  # results reachable through the search API, whatever total_count says
# ``created:YYYY-MM-DD..YYYY-MM-DD``, both ends included, as GitHub reads a date range.
_CREATED = re.compile(r"(?:^|\s)created:(\d{4}-\d{2}-\d{2})\.\.(\d{4}-\d{2}-\d{2})(?:\s|$)")


class GitHubApi(ForgeServer):
    """``repos`` listed by owner; ``search`` (default: every repository, most stars
    first) is what any query finds, ``search_total`` its ``total_count`` (default: as
    many as it holds; larger says the match went beyond what is served)."""

    def __init__(
        self,
        repos: Iterable[Made],
        *,
        git_base: str,
        orgs: Iterable[str] = (),
        prefix: str = "",
        search: list[Made] | None = None,
        search_total: int | None = None,
        core_limit: int = 5000,
        search_limit: int = 30,
        limited_status: int = 403,
        epoch: float | None = None,
    ) -> None:
        super().__init__(epoch=epoch)
        self.repos = list(repos)
        self.git_base = git_base
        self.orgs = set(orgs)
        self.prefix = prefix
        self.search = search if search is not None else sorted(self.repos, key=_by_stars)
        self.search_total = len(self.search) if search_total is None else search_total
        self.budgets = {"core": Budget(core_limit, 3600.0), "search": Budget(search_limit, 60.0)}
        self.limited_status = limited_status
        self.secondary_limit = Refusals(status=403)

    def secondary(self, count: int = 1, retry_after: int = 60) -> None:
        """Refuse the next ``count`` requests as GitHub's secondary limit does."""
        self.secondary_limit = Refusals(count, 403, retry_after)

    def answer(self, request: Seen) -> Answer:
        now = trio.current_time()
        resource = "search" if request.path == f"{self.prefix}/search/repositories" else "core"
        budget = self.budgets[resource]
        budget.refresh(now)
        if self.secondary_limit.take():
            body = fixture("github", "secondary_limit.json")
            retry = {"Retry-After": str(self.secondary_limit.retry_after)}
            return json_answer(403, body, {**retry, **self._rate(resource)})
        if budget.remaining <= 0:
            body = fixture("github", "primary_limit.json")
            return json_answer(self.limited_status, body, self._rate(resource))
        answer = self._route(request)
        if answer.status == 200:
            answer = conditional(request, answer)
        if answer.status != 304 or request.authorization is None:
            budget.take(now)
        answer.headers.update(self._rate(resource))
        return answer

    def _rate(self, resource: str) -> dict[str, str]:
        budget = self.budgets[resource]
        assert budget.reset_at is not None
        return {
            "X-RateLimit-Limit": str(budget.limit),
            "X-RateLimit-Remaining": str(budget.remaining),
            "X-RateLimit-Reset": str(math.ceil(self.unix(budget.reset_at))),
            "X-RateLimit-Used": str(budget.used),
            "X-RateLimit-Resource": resource,
        }

    def _route(self, request: Seen) -> Answer:
        if request.method not in ("GET", "HEAD") or not request.path.startswith(self.prefix + "/"):
            return json_answer(404, fixture("github", "not_found.json"))
        path = request.path.removeprefix(self.prefix)
        parts = path.strip("/").split("/")
        if path == "/search/repositories":
            return self._search(request)
        if len(parts) == 3 and parts[2] == "repos" and parts[0] in ("orgs", "users"):
            owner = parts[1].lower()  # "The name is not case sensitive."
            mine = [r for r in self.repos if r.owner.lower() == owner]
            known = owner in {o.lower() for o in self.orgs} if parts[0] == "orgs" else mine
            kind = request.param("type", "all")
            if kind == "forks":
                mine = [r for r in mine if r.fork]
            elif kind == "sources":  # "sources" are the repositories that are not forks
                mine = [r for r in mine if not r.fork]
            if known:
                return self._page(request, mine, lambda r: self.shape(r))
        return json_answer(404, fixture("github", "not_found.json"))

    def _page(self, request: Seen, repos: list[Made], shape: Any) -> Answer:
        per_page = int_param(request, "per_page", 30, low=1, high=100)
        page = int_param(request, "page", 1, low=1, high=1 << 30)
        if per_page is None or page is None:
            return json_answer(400, {"message": "Invalid request."})
        items = [shape(r) for r in repos[(page - 1) * per_page : page * per_page]]
        last = max(1, math.ceil(len(repos) / per_page))
        return json_answer(200, items, self._links(request, page, last))

    def _links(self, request: Seen, page: int, last: int) -> dict[str, str]:
        links = []
        if page > 1:
            links.append(("prev", with_query(self.base_url, request, page=min(page, last + 1) - 1)))
        if page < last:
            links.append(("next", with_query(self.base_url, request, page=page + 1)))
            links.append(("last", with_query(self.base_url, request, page=last)))
        if page > 1:
            links.append(("first", with_query(self.base_url, request, page=1)))
        return {"Link": link_header(links)} if links else {}

    def _search(self, request: Seen) -> Answer:
        if not request.param("q"):
            errors = [{"resource": "Search", "field": "q", "code": "missing"}]
            body: dict[str, Any] = {"message": "Validation Failed", "errors": errors}
            return json_answer(422, body)
        per_page = int_param(request, "per_page", 30, low=1, high=100)
        page = int_param(request, "page", 1, low=1, high=1 << 30)
        if per_page is None or page is None:
            return json_answer(400, {"message": "Invalid request."})
        if (page - 1) * per_page >= SEARCH_CAP:
            return json_answer(422, fixture("github", "search_cap.json"))
        found, total = self.search, self.search_total
        window = _CREATED.search(request.param("q") or "")
        if window is not None:  # a range qualifier: what it holds, counted
            first, last = window.group(1), window.group(2)
            found = [r for r in self.search if first <= r.created_at[:10] <= last]
            total = len(found)
        reachable = found[: min(SEARCH_CAP, total)]
        found = reachable[(page - 1) * per_page : page * per_page]
        items = [self.shape(r, score=1.0) for r in found]
        body = {"total_count": total, "incomplete_results": False, "items": items}
        last = max(1, math.ceil(len(reachable) / per_page))
        return json_answer(200, body, self._links(request, page, last))

    def shape(self, repo: Made, *, score: float | None = None) -> dict[str, Any]:
        """``repo`` in the documented shape: a repository of the list endpoints, or a
        search result's item when ``score`` is given."""
        if score is None:
            example = fixture("github", "repository.json")
        else:
            example = fixture("github", "search_repositories.json")["items"][0]
            example["score"] = score
        api = self.base_url + self.prefix
        item: dict[str, Any] = substitute(
            example,
            [
                ("https://api.github.com", api),
                ("https://github.com", self.git_base),
                ("octocat/Hello-World", repo.full_name),
                ("/users/octocat", f"/users/{repo.owner}"),
                ("/octocat", f"/{repo.owner}"),
            ],
        )
        clone = repo.clone_url(self.git_base)
        owner_id = zlib.crc32(repo.owner.encode())
        item["owner"].update(
            login=repo.owner,
            id=owner_id,
            node_id=_node_id("User", owner_id),
            type="Organization" if repo.owner in self.orgs else "User",
        )
        item.update(
            id=repo.id,
            node_id=_node_id("Repository", repo.id),
            name=repo.name,
            full_name=repo.full_name,
            private=repo.private,
            description=repo.description,
            fork=repo.fork,
            clone_url=clone,
            git_url=clone.replace("http://", "git://", 1),
            ssh_url=f"git@127.0.0.1:{repo.full_name}.git",
            svn_url=f"{self.git_base}/{repo.full_name}",
            mirror_url=clone if repo.mirror else None,
            homepage=None,
            language=repo.language,
            stargazers_count=repo.stars,
            watchers_count=repo.stars,
            watchers=repo.stars,
            size=repo.size,
            default_branch=repo.default_branch,
            topics=list(repo.topics),
            archived=repo.archived,
            disabled=repo.disabled,
            visibility="private" if repo.private else "public",
            pushed_at=repo.pushed_at,
            created_at=repo.created_at,
            updated_at=repo.pushed_at,
        )
        return item


def _by_stars(repo: Made) -> tuple[int, int]:
    return -repo.stars, repo.id


def _node_id(kind: str, id_: int) -> str:
    """A global node id in GitHub's legacy form (base64 of ``0NN:KindID``)."""
    return base64.b64encode(f"0{len(kind):02d}:{kind}{id_}".encode()).decode()

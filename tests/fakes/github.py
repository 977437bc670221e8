"""A fake GitHub REST API on loopback, shaped like the real one where PyGithub looks.

Objects carry their `url`/`html_url` fields built from the fake's own base URL (PyGithub
follows `url` to complete an object), lists are paginated with `Link` headers as GitHub
does (`per_page` capped at 100), errors have GitHub's bodies, and every request is
recorded::

    async with FakeGitHub() as fake:
        fake.add_repo("octo", "hello")
        fake.add_issue("octo/hello", "Crash on start", labels=["bug"])
        gh = Github(auth=Auth.Token(fake.token), base_url=fake.base_url)
        ...
        assert fake.requests[-1].path == "/repos/octo/hello/issues"
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from aiohttp import web

from tests.fakes.github_git import Git, GitRoutes
from tests.fakes.github_json import (
    DOCS,
    GitHubError,
    Issue,
    Recorded,
    Repo,
    Shapes,
    invalid,
    paginate,
    sha,
    stamp,
)
from tests.fakes.github_search import SearchRoutes
from tests.fakes.server import FakeServer

JSON = dict[str, Any]
NOT_FOUND = {"message": "Not Found", "documentation_url": DOCS, "status": "404"}
RATE_LIMITED = (
    "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, "
    "please include the request ID."
)


@dataclass
class FakeGitHub(GitRoutes, SearchRoutes, FakeServer):
    runner_options: ClassVar[dict[str, Any]] = {"shutdown_timeout": 0.5}
    token: str = "fake-github-token-0123456789abcdef"
    login: str = "octocat"
    max_per_page: int = 100  # GitHub's cap
    rate_limited: bool = False
    repos: dict[str, Repo] = field(default_factory=dict)
    git: dict[str, Git] = field(default_factory=dict)  # by full name: see github_git
    requests: list[Recorded] = field(default_factory=list)
    base_url: str = ""
    _ids: int = 1000

    # -- lifecycle --------------------------------------------------------------------------
    def build_app(self) -> web.Application:
        app = web.Application(middlewares=[self._middleware])
        for method, path, handler in self._routes():
            app.router.add_route(method, path, handler)
        return app

    def _started(self) -> None:
        self.base_url = self.origin

    # -- test-side API ----------------------------------------------------------------------
    def next_id(self) -> int:
        self._ids += 1
        return self._ids

    def add_repo(self, owner: str, name: str, **fields: Any) -> Repo:
        repo = Repo(owner, name, id=self.next_id(), **fields)
        self.repos[repo.full_name] = repo
        return repo

    def add_issue(self, full_name: str, title: str, **fields: Any) -> Issue:
        repo = self.repos[full_name]
        fields.setdefault("user", self.login)
        issue = Issue(repo.next_number(), title, id=self.next_id(), **fields)
        repo.issues[issue.number] = issue
        return issue

    def add_pull(
        self, full_name: str, title: str, head: str, base: str = "main", **fields: Any
    ) -> Issue:
        repo = self.repos[full_name]
        repo.branches |= {head, base}
        issue = self.add_issue(full_name, title, **fields)
        issue.pull = {"head": head, "base": base, "merged_at": None, "sha": None}
        return issue

    def add_release(self, full_name: str, tag: str, **fields: Any) -> JSON:
        release = {"id": self.next_id(), "tag_name": tag, "name": tag, "body": "",
                   "draft": False, "prerelease": False, "target_commitish": "main",
                   "author": self.login, "created_at": stamp()} | fields  # fmt: skip
        self.repos[full_name].releases.insert(0, release)  # newest first, as GitHub lists
        return release

    def add_file(self, full_name: str, path: str, content: str) -> None:
        self.repos[full_name].files[path] = content

    def issue(self, full_name: str, number: int) -> Issue:
        return self.repos[full_name].issues[number]

    def sent(self, method: str | None = None, path: str | None = None) -> list[Recorded]:
        return [
            r
            for r in self.requests
            if (method is None or r.method == method) and (path is None or r.path == path)
        ]

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def shapes(self) -> Shapes:
        return Shapes(self.base_url)

    @web.middleware
    async def _middleware(
        self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> web.StreamResponse:
        body = await request.json() if request.can_read_body else None
        auth = request.headers.get("Authorization")
        self.requests.append(
            Recorded(request.method, request.path, dict(request.query), body, auth)
        )
        reset = int(time.time()) + 1800
        limits = {"X-RateLimit-Limit": "5000", "X-RateLimit-Reset": str(reset),
                  "X-RateLimit-Remaining": "0" if self.rate_limited else "4999"}  # fmt: skip
        # As on GitHub: no Authorization header reads public data (at a lower rate); a wrong
        # one is refused everywhere; a private repository is a 404 to whoever cannot see it.
        if auth is None:
            limits["X-RateLimit-Limit"] = "60"
        try:
            scheme, _, token = (auth or "").partition(" ")
            if auth is None:
                if request.method != "GET" or request.path.startswith("/user"):
                    raise GitHubError(401, "Requires authentication")
            elif scheme.lower() not in ("token", "bearer") or token != self.token:
                raise GitHubError(401, "Bad credentials")
            if self.rate_limited:
                raise GitHubError(403, RATE_LIMITED)
            response = await handler(request)
        except GitHubError as exc:
            response = web.json_response(exc.body, status=exc.status)
        except web.HTTPNotFound:
            response = web.json_response(NOT_FOUND, status=404)
        response.headers.update(limits)
        return response

    def _routes(self) -> list[tuple[str, str, Callable[[web.Request], Awaitable[web.Response]]]]:
        repo = "/repos/{owner}/{repo}"
        return [
            ("GET", "/user", self._me),
            ("GET", "/user/repos", self._my_repos),
            ("GET", "/users/{login}", self._user),
            ("GET", "/users/{login}/repos", self._user_repos),
            ("GET", repo, self._repo),
            ("GET", f"{repo}/issues", self._list_issues),
            ("POST", f"{repo}/issues", self._create_issue),
            ("GET", f"{repo}/issues/{{number:\\d+}}", self._get_issue),
            ("PATCH", f"{repo}/issues/{{number:\\d+}}", self._edit_issue),
            ("GET", f"{repo}/issues/{{number:\\d+}}/comments", self._comments),
            ("POST", f"{repo}/issues/{{number:\\d+}}/comments", self._comment),
            ("GET", f"{repo}/pulls", self._list_pulls),
            ("POST", f"{repo}/pulls", self._create_pull),
            ("GET", f"{repo}/pulls/{{number:\\d+}}", self._get_pull),
            ("POST", f"{repo}/pulls/{{number:\\d+}}/reviews", self._review),
            ("PUT", f"{repo}/pulls/{{number:\\d+}}/merge", self._merge),
            ("GET", f"{repo}/releases", self._releases),
            ("POST", f"{repo}/releases", self._create_release),
            ("GET", "/search/issues", self._search_issues),
            ("GET", "/search/code", self._search_code),
            ("GET", "/search/repositories", self._search_repos),
            *self.git_routes(),
        ]

    def _page(self, request: web.Request, items: list[JSON], search: bool = False) -> web.Response:
        url = f"{self.base_url}{request.path}"
        body, link = paginate(items, dict(request.query), url, self.max_per_page, search)
        response = web.json_response(body)
        if link:
            response.headers["Link"] = link
        return response

    def _repo_of(self, request: web.Request) -> Repo:
        repo = self.repos.get(f"{request.match_info['owner']}/{request.match_info['repo']}")
        anonymous = "Authorization" not in request.headers
        if repo is None or (repo.private and anonymous):
            raise GitHubError(404, "Not Found")
        return repo

    def _issue_of(self, request: web.Request, pull: bool = False) -> tuple[Repo, Issue]:
        repo = self._repo_of(request)
        issue = repo.issues.get(int(request.match_info["number"]))
        if issue is None or (pull and issue.pull is None):
            raise GitHubError(404, "Not Found")
        return repo, issue

    # -- users and repositories -------------------------------------------------------------
    async def _me(self, request: web.Request) -> web.Response:
        return web.json_response(self.shapes.user(self.login, full=True))

    async def _user(self, request: web.Request) -> web.Response:
        login = request.match_info["login"]
        if login != self.login and not any(r.owner == login for r in self.repos.values()):
            raise GitHubError(404, "Not Found")
        return web.json_response(self.shapes.user(login, full=True))

    def _owned(self, login: str) -> list[JSON]:
        owned = [r for r in self.repos.values() if r.owner == login]
        owned.sort(key=lambda r: r.updated_at, reverse=True)
        return [self.shapes.repo(r) for r in owned]

    async def _my_repos(self, request: web.Request) -> web.Response:
        return self._page(request, self._owned(self.login))

    async def _user_repos(self, request: web.Request) -> web.Response:
        await self._user(request)
        return self._page(request, self._owned(request.match_info["login"]))

    async def _repo(self, request: web.Request) -> web.Response:
        return web.json_response(self.shapes.repo(self._repo_of(request), full=True))

    # -- issues -----------------------------------------------------------------------------
    async def _list_issues(self, request: web.Request) -> web.Response:
        repo, query = self._repo_of(request), request.query
        state = query.get("state", "open")
        wanted = {name for name in query.get("labels", "").split(",") if name}
        found = [
            i
            for i in repo.issues.values()
            if (state == "all" or i.state == state) and wanted <= set(i.labels)
        ]
        key = "updated_at" if query.get("sort") == "updated" else "number"
        found.sort(key=lambda i: getattr(i, key), reverse=query.get("direction") != "asc")
        return self._page(request, [self.shapes.issue(repo, i) for i in found])

    async def _create_issue(self, request: web.Request) -> web.Response:
        repo, data = self._repo_of(request), await request.json()
        if not str(data.get("title") or "").strip():
            raise invalid("Issue", "title", "missing_field")
        issue = self.add_issue(
            repo.full_name, data["title"], body=data.get("body") or "",
            labels=list(data.get("labels") or []),
        )  # fmt: skip
        return web.json_response(self.shapes.issue(repo, issue), status=201)

    async def _get_issue(self, request: web.Request) -> web.Response:
        repo, issue = self._issue_of(request)
        return web.json_response(self.shapes.issue(repo, issue))

    async def _edit_issue(self, request: web.Request) -> web.Response:
        (repo, issue), data = self._issue_of(request), await request.json()
        if "state" in data and data["state"] not in ("open", "closed"):
            raise invalid("Issue", "state")
        if "title" in data and not str(data["title"] or "").strip():
            raise invalid("Issue", "title", "missing_field")
        for key in ("title", "body", "state", "labels"):
            if key in data:
                setattr(issue, key, data[key])
        issue.closed_at = stamp() if issue.state == "closed" else None
        issue.updated_at = stamp()
        return web.json_response(self.shapes.issue(repo, issue))

    async def _comments(self, request: web.Request) -> web.Response:
        repo, issue = self._issue_of(request)
        return self._page(request, [self.shapes.comment(repo, issue, c) for c in issue.comments])

    async def _comment(self, request: web.Request) -> web.Response:
        (repo, issue), data = self._issue_of(request), await request.json()
        if not str(data.get("body") or "").strip():
            raise invalid("IssueComment", "body", "missing_field")
        comment = {"id": self.next_id(), "user": self.login, "body": data["body"], "at": stamp()}
        issue.comments.append(comment)
        issue.updated_at = stamp()
        return web.json_response(self.shapes.comment(repo, issue, comment), status=201)

    # -- pull requests ----------------------------------------------------------------------
    async def _list_pulls(self, request: web.Request) -> web.Response:
        repo, query = self._repo_of(request), request.query
        state = query.get("state", "open")
        found = [
            i
            for i in sorted(repo.issues.values(), key=lambda i: i.number, reverse=True)
            if i.pull is not None
            and (state == "all" or i.state == state)
            and query.get("base", i.pull["base"]) == i.pull["base"]
            and query.get("head", f"{repo.owner}:{i.pull['head']}")
            == f"{repo.owner}:{i.pull['head']}"
        ]
        return self._page(request, [self.shapes.pull(repo, i) for i in found])

    async def _create_pull(self, request: web.Request) -> web.Response:
        repo, data = self._repo_of(request), await request.json()
        for name in ("title", "head", "base"):
            if not str(data.get(name) or "").strip():
                raise invalid("PullRequest", name, "missing_field")
        head = data["head"].split(":")[-1]
        if head not in repo.branches:
            raise invalid("PullRequest", "head")
        if data["base"] not in repo.branches:
            raise invalid("PullRequest", "base")
        if head == data["base"]:
            message = f"No commits between {data['base']} and {head}"
            raise GitHubError(
                422,
                "Validation Failed",
                [{"resource": "PullRequest", "code": "custom", "message": message}],
            )
        issue = self.add_pull(
            repo.full_name,
            data["title"],
            head,
            data["base"],
            body=data.get("body") or "",
            draft=bool(data.get("draft")),
        )
        return web.json_response(self.shapes.pull(repo, issue, full=True), status=201)

    async def _get_pull(self, request: web.Request) -> web.Response:
        repo, issue = self._issue_of(request, pull=True)
        return web.json_response(self.shapes.pull(repo, issue, full=True))

    async def _review(self, request: web.Request) -> web.Response:
        (repo, issue), data = self._issue_of(request, pull=True), await request.json()
        event = data.get("event")
        states = {
            "APPROVE": "APPROVED",
            "REQUEST_CHANGES": "CHANGES_REQUESTED",
            "COMMENT": "COMMENTED",
        }
        if event not in states:
            raise invalid("PullRequestReview", "event")
        if event != "APPROVE" and not str(data.get("body") or "").strip():
            raise GitHubError(
                422, "Unprocessable Entity", [f"Review body is required when using {event}."]
            )
        review = {
            "id": self.next_id(),
            "user": self.login,
            "body": data.get("body") or "",
            "state": states[event],
            "at": stamp(),
        }
        assert issue.pull is not None
        issue.pull.setdefault("reviews", []).append(review)
        return web.json_response(self.shapes.review(repo, issue, review))

    async def _merge(self, request: web.Request) -> web.Response:
        (repo, issue), data = self._issue_of(request, pull=True), await request.json()
        assert issue.pull is not None
        if issue.state != "open" or not issue.mergeable:
            raise GitHubError(405, "Pull Request is not mergeable")
        method = data.get("merge_method", "merge")
        if method not in ("merge", "squash", "rebase"):
            raise invalid("PullRequest", "merge_method")
        merged = sha(f"merge {repo.full_name}#{issue.number}")
        issue.pull |= {"merged_at": stamp(), "sha": merged, "method": method}
        issue.pull["commit_title"] = data.get("commit_title")
        issue.state, issue.closed_at = "closed", stamp()
        message = "Pull Request successfully merged"
        return web.json_response({"sha": merged, "merged": True, "message": message})

    # -- releases ---------------------------------------------------------------------------
    async def _releases(self, request: web.Request) -> web.Response:
        repo = self._repo_of(request)
        return self._page(request, [self.shapes.release(repo, r) for r in repo.releases])

    async def _create_release(self, request: web.Request) -> web.Response:
        repo, data = self._repo_of(request), await request.json()
        tag = str(data.get("tag_name") or "")
        if not tag:
            raise invalid("Release", "tag_name", "missing_field")
        if any(r["tag_name"] == tag for r in repo.releases):
            raise invalid("Release", "tag_name", "already_exists")
        fields = {
            k: data[k]
            for k in ("name", "body", "draft", "prerelease", "target_commitish")
            if k in data
        }
        release = self.add_release(repo.full_name, tag, **fields)
        return web.json_response(self.shapes.release(repo, release), status=201)

"""The fake GitHub's search routes: issues, code and repositories, as GitHub pages them."""

from __future__ import annotations

from aiohttp import web

from tests.fakes.github_json import JSON, Query, Repo, Shapes, invalid


class SearchRoutes:
    """Mixed into FakeGitHub."""

    repos: dict[str, Repo]

    @property
    def shapes(self) -> Shapes:
        raise NotImplementedError

    def _page(self, request: web.Request, items: list[JSON], search: bool = False) -> web.Response:
        raise NotImplementedError

    async def _search_issues(self, request: web.Request) -> web.Response:
        query = Query.parse(request.query.get("q", ""))
        found = [
            self.shapes.issue(repo, issue) | {"score": 1.0}
            for repo in self.repos.values()
            if query.repo(repo)
            for issue in sorted(repo.issues.values(), key=lambda i: i.number, reverse=True)
            if query.issue(issue)
        ]
        return self._page(request, found, search=True)

    async def _search_code(self, request: web.Request) -> web.Response:
        query = Query.parse(request.query.get("q", ""))
        if not query.words:
            raise invalid("Search", "q")  # GitHub refuses a code search without terms
        found = [
            self.shapes.code(repo, path)
            for repo in self.repos.values()
            if query.repo(repo)
            for path, content in repo.files.items()
            if query.text(f"{path}\n{content}")
        ]
        return self._page(request, found, search=True)

    async def _search_repos(self, request: web.Request) -> web.Response:
        query = Query.parse(request.query.get("q", ""))
        found = [
            self.shapes.repo(repo) | {"score": 1.0}
            for repo in self.repos.values()
            if query.repo(repo) and query.text(f"{repo.full_name}\n{repo.description}")
        ]
        return self._page(request, found, search=True)

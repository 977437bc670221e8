"""What the fake GitHub stores, and the JSON shapes GitHub's REST API gives it.

The shapes carry the fields of the real responses that PyGithub reads; a field missing here
would make PyGithub fetch the object's `url` again, which a test counting requests notices.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

JSON = dict[str, Any]
CREATED = "2026-11-01T09:00:00Z"
DOCS = "https://docs.github.com/rest"


class GitHubError(Exception):
    def __init__(self, status: int, message: str, errors: list[Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.body: JSON = {"message": message, "documentation_url": DOCS, "status": str(status)}
        if errors is not None:
            self.body["errors"] = errors


def invalid(resource: str, field_name: str, code: str = "invalid") -> GitHubError:
    error = {"resource": resource, "field": field_name, "code": code}
    return GitHubError(422, "Validation Failed", [error])


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    authorization: str | None


def stamp() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def sha(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


@dataclass
class Issue:
    """An issue, or a pull request when `pull` is set (they share numbers, as on GitHub)."""

    number: int
    title: str
    id: int = 0
    body: str = ""
    state: str = "open"
    labels: list[str] = field(default_factory=list)
    user: str = "octocat"
    created_at: str = CREATED
    updated_at: str = field(default_factory=stamp)
    closed_at: str | None = None
    comments: list[JSON] = field(default_factory=list)
    pull: JSON | None = None
    draft: bool = False
    mergeable: bool = True


@dataclass
class Repo:
    owner: str
    name: str
    id: int = 0
    description: str = ""
    private: bool = False
    language: str | None = "Python"
    stars: int = 0
    topics: list[str] = field(default_factory=list)
    default_branch: str = "main"
    updated_at: str = field(default_factory=stamp)
    branches: set[str] = field(default_factory=lambda: {"main"})
    issues: dict[int, Issue] = field(default_factory=dict)
    releases: list[JSON] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def next_number(self) -> int:
        return max(self.issues, default=0) + 1


def paginate(
    items: list[JSON], query: dict[str, str], url: str, cap: int, search: bool = False
) -> tuple[Any, str]:
    """One page of `items` as GitHub sends it, and its `Link` header (first/prev/next/last)."""
    size = max(1, min(int(query.get("per_page", 30)), cap))
    page = max(1, int(query.get("page", 1)))
    last = max(1, -(-len(items) // size))
    chunk = items[(page - 1) * size : page * size]
    rels = {"prev": page - 1, "first": 1} if page > 1 else {}
    if page < last:
        rels |= {"next": page + 1, "last": last}
    link = ", ".join(
        f'<{url}?{urlencode(query | {"page": str(number)})}>; rel="{rel}"'
        for rel, number in rels.items()
    )
    if search:
        return {"total_count": len(items), "incomplete_results": False, "items": chunk}, link
    return chunk, link


@dataclass
class Query:
    """A search query: free words (all must occur) and the common qualifiers."""

    words: list[str]
    quals: dict[str, str]

    @classmethod
    def parse(cls, q: str) -> Query:
        words, quals = [], {}
        for token in q.split():
            key, sep, value = token.partition(":")
            if sep and key in ("repo", "user", "org", "is", "state", "language"):
                quals[key] = value
            else:
                words.append(token.lower())
        return cls(words, quals)

    def text(self, text: str) -> bool:
        return all(word in text.lower() for word in self.words)

    def repo(self, repo: Repo) -> bool:
        owner = self.quals.get("user") or self.quals.get("org")
        language = (repo.language or "").lower()
        return (
            self.quals.get("repo", repo.full_name) == repo.full_name
            and owner in (None, repo.owner)
            and self.quals.get("language", language).lower() == language
        )

    def issue(self, issue: Issue) -> bool:
        kind = "pr" if issue.pull is not None else "issue"
        return (
            self.quals.get("is", kind) in (kind, issue.state)
            and self.quals.get("state", issue.state) == issue.state
            and self.text(f"{issue.title}\n{issue.body}")
        )


@dataclass
class Shapes:
    base: str  # the fake's base URL: API and web links both live under it

    def web(self, path: str) -> str:
        return f"{self.base}/web/{path}"

    def user(self, login: str, full: bool = False) -> JSON:
        api = f"{self.base}/users/{login}"
        user = {
            "login": login, "id": int(sha(login)[:6], 16), "node_id": f"U_{login}",
            "avatar_url": self.web(f"avatars/{login}"), "gravatar_id": "", "url": api,
            "html_url": self.web(login), "followers_url": f"{api}/followers",
            "repos_url": f"{api}/repos", "organizations_url": f"{api}/orgs",
            "type": "User", "user_view_type": "public", "site_admin": False,
        }  # fmt: skip
        if full:
            user |= {"name": login.title(), "company": None, "blog": "", "location": None,
                     "email": None, "bio": None, "public_repos": 0, "followers": 0,
                     "following": 0, "created_at": CREATED, "updated_at": CREATED}  # fmt: skip
        return user

    def repo(self, repo: Repo, full: bool = False) -> JSON:
        api = f"{self.base}/repos/{repo.full_name}"
        shape = {
            "id": repo.id, "node_id": f"R_{repo.id}", "name": repo.name,
            "full_name": repo.full_name, "private": repo.private,
            "owner": self.user(repo.owner), "html_url": self.web(repo.full_name),
            "description": repo.description or None, "fork": False, "url": api,
            "issues_url": f"{api}/issues{{/number}}", "pulls_url": f"{api}/pulls{{/number}}",
            "releases_url": f"{api}/releases{{/id}}", "created_at": CREATED,
            "updated_at": repo.updated_at, "pushed_at": repo.updated_at, "homepage": None,
            "size": 100, "stargazers_count": repo.stars, "watchers_count": repo.stars,
            "language": repo.language, "has_issues": True, "forks_count": 0,
            "archived": False, "disabled": False, "open_issues_count": sum(
                1 for i in repo.issues.values() if i.state == "open"
            ), "license": None, "topics": repo.topics,
            "visibility": "private" if repo.private else "public", "forks": 0,
            "open_issues": 0, "watchers": repo.stars, "default_branch": repo.default_branch,
            "permissions": {"admin": True, "push": True, "pull": True},
        }  # fmt: skip
        if full:
            shape |= {"subscribers_count": 1, "network_count": 0}
        return shape

    def label(self, repo: Repo, name: str) -> JSON:
        return {
            "id": int(sha(name)[:6], 16), "node_id": f"L_{name}", "name": name,
            "url": f"{self.base}/repos/{repo.full_name}/labels/{name}", "color": "d73a4a",
            "default": False, "description": None,
        }  # fmt: skip

    def issue(self, repo: Repo, issue: Issue) -> JSON:
        api = f"{self.base}/repos/{repo.full_name}/issues/{issue.number}"
        kind = "pull" if issue.pull is not None else "issues"
        shape = {
            "url": api, "repository_url": f"{self.base}/repos/{repo.full_name}",
            "labels_url": f"{api}/labels{{/name}}", "comments_url": f"{api}/comments",
            "events_url": f"{api}/events", "timeline_url": f"{api}/timeline",
            "html_url": self.web(f"{repo.full_name}/{kind}/{issue.number}"),
            "id": issue.id, "node_id": f"I_{issue.id}", "number": issue.number,
            "title": issue.title, "user": self.user(issue.user),
            "labels": [self.label(repo, name) for name in issue.labels],
            "state": issue.state, "locked": False, "assignee": None, "assignees": [],
            "milestone": None, "comments": len(issue.comments),
            "created_at": issue.created_at, "updated_at": issue.updated_at,
            "closed_at": issue.closed_at, "author_association": "OWNER",
            "active_lock_reason": None, "body": issue.body or None,
            "state_reason": "completed" if issue.state == "closed" else None,
            "performed_via_github_app": None,
        }  # fmt: skip
        if issue.pull is not None:
            pulls = f"{self.base}/repos/{repo.full_name}/pulls/{issue.number}"
            shape["draft"] = issue.draft
            shape["pull_request"] = {
                "url": pulls, "html_url": shape["html_url"], "diff_url": f"{pulls}.diff",
                "patch_url": f"{pulls}.patch", "merged_at": issue.pull["merged_at"],
            }  # fmt: skip
        return shape

    def comment(self, repo: Repo, issue: Issue, comment: JSON) -> JSON:
        api = f"{self.base}/repos/{repo.full_name}/issues"
        kind = "pull" if issue.pull is not None else "issues"
        return {
            "url": f"{api}/comments/{comment['id']}",
            "html_url": self.web(
                f"{repo.full_name}/{kind}/{issue.number}#issuecomment-{comment['id']}"
            ),
            "issue_url": f"{api}/{issue.number}", "id": comment["id"],
            "node_id": f"IC_{comment['id']}", "user": self.user(comment["user"]),
            "created_at": comment["at"], "updated_at": comment["at"],
            "body": comment["body"], "author_association": "OWNER",
        }  # fmt: skip

    def branch(self, repo: Repo, ref: str) -> JSON:
        return {
            "label": f"{repo.owner}:{ref}", "ref": ref, "sha": sha(f"{repo.full_name}:{ref}"),
            "user": self.user(repo.owner), "repo": self.repo(repo),
        }  # fmt: skip

    def pull(self, repo: Repo, issue: Issue, full: bool = False) -> JSON:
        assert issue.pull is not None
        api = f"{self.base}/repos/{repo.full_name}/pulls/{issue.number}"
        issue_shape = self.issue(repo, issue)
        shape = {
            "url": api, "id": issue.id, "node_id": f"PR_{issue.id}",
            "html_url": issue_shape["html_url"], "diff_url": f"{api}.diff",
            "patch_url": f"{api}.patch", "issue_url": issue_shape["url"],
            "number": issue.number, "state": issue.state, "locked": False,
            "title": issue.title, "user": issue_shape["user"], "body": issue.body or None,
            "labels": issue_shape["labels"], "milestone": None, "active_lock_reason": None,
            "created_at": issue.created_at, "updated_at": issue.updated_at,
            "closed_at": issue.closed_at, "merged_at": issue.pull["merged_at"],
            "merge_commit_sha": issue.pull["sha"], "assignee": None, "assignees": [],
            "requested_reviewers": [], "requested_teams": [], "draft": issue.draft,
            "commits_url": f"{api}/commits", "review_comments_url": f"{api}/comments",
            "comments_url": issue_shape["comments_url"],
            "head": self.branch(repo, issue.pull["head"]),
            "base": self.branch(repo, issue.pull["base"]),
            "_links": {"self": {"href": api}, "html": {"href": issue_shape["html_url"]}},
            "author_association": "OWNER", "auto_merge": None,
        }  # fmt: skip
        if full:
            merged = issue.pull["merged_at"] is not None
            shape |= {
                "merged": merged, "mergeable": issue.mergeable if issue.state == "open" else None,
                "rebaseable": issue.mergeable, "mergeable_state": "clean",
                "merged_by": self.user(repo.owner) if merged else None,
                "comments": len(issue.comments), "review_comments": 0,
                "maintainer_can_modify": False, "commits": 3, "additions": 42,
                "deletions": 7, "changed_files": 2,
            }  # fmt: skip
        return shape

    def review(self, repo: Repo, issue: Issue, review: JSON) -> JSON:
        pulls = f"{self.base}/repos/{repo.full_name}/pulls/{issue.number}"
        html = self.web(f"{repo.full_name}/pull/{issue.number}")
        return {
            "id": review["id"], "node_id": f"PRR_{review['id']}",
            "user": self.user(review["user"]), "body": review["body"],
            "state": review["state"], "html_url": f"{html}#pullrequestreview-{review['id']}",
            "pull_request_url": pulls, "submitted_at": review["at"],
            "commit_id": sha(f"{repo.full_name}#{issue.number}"), "author_association": "OWNER",
        }  # fmt: skip

    def release(self, repo: Repo, release: JSON) -> JSON:
        api = f"{self.base}/repos/{repo.full_name}/releases/{release['id']}"
        return {
            "url": api, "assets_url": f"{api}/assets",
            "upload_url": f"{self.base}/uploads/{release['id']}/assets{{?name,label}}",
            "html_url": self.web(f"{repo.full_name}/releases/tag/{release['tag_name']}"),
            "id": release["id"], "node_id": f"RE_{release['id']}",
            "tag_name": release["tag_name"], "target_commitish": release["target_commitish"],
            "name": release["name"], "body": release["body"], "draft": release["draft"],
            "prerelease": release["prerelease"], "created_at": release["created_at"],
            "published_at": None if release["draft"] else release["created_at"],
            "author": self.user(release["author"]), "assets": [],
            "tarball_url": f"{self.base}/repos/{repo.full_name}/tarball/{release['tag_name']}",
            "zipball_url": f"{self.base}/repos/{repo.full_name}/zipball/{release['tag_name']}",
        }  # fmt: skip

    def code(self, repo: Repo, path: str) -> JSON:
        blob = sha(repo.files[path])
        api = f"{self.base}/repos/{repo.full_name}/contents/{path}?ref={repo.default_branch}"
        return {
            "name": path.rsplit("/", 1)[-1], "path": path, "sha": blob, "url": api,
            "git_url": f"{self.base}/repos/{repo.full_name}/git/blobs/{blob}",
            "html_url": self.web(f"{repo.full_name}/blob/{repo.default_branch}/{path}"),
            "repository": self.repo(repo), "score": 1.0,
        }  # fmt: skip

"""The seventeen `github` actions, run against PyGithub in a worker thread.

Every object read here is read from fields GitHub already sent in the list or item response;
an attribute missing from a response makes PyGithub fetch the object again, one request per
line of a listing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import requests
from github import Auth, Github, GithubException
from github.GithubException import (
    BadCredentialsException,
    RateLimitExceededException,
    UnknownObjectException,
)
from github.IssueComment import IssueComment
from github.Repository import Repository
from urllib3.util.retry import Retry

from augure.tools.base import ToolResult
from augure.tools.github import render

ISSUE_ACTIONS = frozenset({"get_issue", "update_issue", "comment_issue"})
PR_ACTIONS = frozenset({"get_pr", "review_pr", "merge_pr"})
PAGE_MAX = 100  # GitHub's largest page; a longer listing follows `next` links
COMMENTS_SHOWN = 10
AUTH_HINT = "check GITHUB_TOKEN (or [tools.github] token)"


@dataclass
class GithubRequest:
    action: str
    owner: str | None
    repo: str | None
    issue_number: int | None
    pull_number: int | None
    title: str | None
    body: str | None
    state: str | None
    labels: list[str] | None
    base: str | None
    head: str | None
    event: str | None
    merge_method: str | None
    tag_name: str | None
    target_commitish: str | None
    draft: bool | None
    query: str | None
    per_page: int

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def where(self) -> str:
        return where_of(self)

    def set(self, *names: str) -> dict[str, Any]:
        """The named parameters the model gave, for PyGithub calls that take them as options."""
        values = {name: getattr(self, name) for name in names}
        return {name: value for name, value in values.items() if value is not None}


def where_of(p: Any) -> str:
    where = f"{p.owner or ''}/{p.repo or ''}"
    if p.action in ISSUE_ACTIONS and p.issue_number is not None:
        return f"{where}#{p.issue_number}"
    if p.action in PR_ACTIONS and p.pull_number is not None:
        return f"{where}#{p.pull_number}"
    return where


def client(
    base_url: str, token: str | None, per_page: int = 30, *, lazy: bool = True, timeout: int = 15
) -> Github:
    """The one way Augure builds a PyGithub client: the tool's calls and a GitHub skill hub's."""
    return Github(
        auth=Auth.Token(token) if token else None,
        base_url=base_url,
        per_page=min(per_page, PAGE_MAX),
        timeout=timeout,
        # Lazy objects (the tool's): a write is one request, without reading the repository
        # first. A hub reads what it names at once.
        lazy=lazy,
        # Only idempotent methods are retried (urllib3's default), only on gateway errors;
        # PyGithub's own retry would sleep through a rate limit instead of saying so.
        retry=Retry(
            total=2, backoff_factor=0.5, status_forcelist=(502, 503, 504), raise_on_status=False
        ),
    )


def run(base_url: str, token: str, call: GithubRequest) -> ToolResult:
    """One call, blocking: meant for a worker thread."""
    gh = client(base_url, token, call.per_page)
    try:
        return ToolResult.ok(ACTIONS[call.action](gh, call))
    except GithubException as exc:
        return ToolResult.error(explain(exc, call))
    except requests.RequestException as exc:
        return ToolResult.error(f"cannot reach GitHub at {base_url}: {type(exc).__name__}")
    finally:
        gh.close()


def explain(exc: GithubException, call: GithubRequest) -> str:
    message = message_of(exc)
    if isinstance(exc, UnknownObjectException) or exc.status == 404:
        subject = f"user {call.owner}" if call.action == "list_repos" else call.where
        return f"not found: {subject} (or the token cannot see it)"
    if isinstance(exc, BadCredentialsException) or exc.status == 401:
        return f"GitHub refused the token (401 {message}): {AUTH_HINT}"
    if isinstance(exc, RateLimitExceededException) or (
        exc.status in (403, 429) and "rate limit" in message.lower()
    ):
        return f"GitHub rate limit exceeded{_reset(exc)}; try again later"
    if exc.status == 422:
        return f"GitHub rejected the request (422): {message}{_details(exc)}"
    return f"GitHub error {exc.status}: {message}"


def message_of(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    return str(data.get("message") or exc.message or "no message")


def _details(exc: GithubException) -> str:
    data = exc.data if isinstance(exc.data, dict) else {}
    parts = []
    for error in data.get("errors") or []:
        if isinstance(error, str):
            parts.append(error)
        elif isinstance(error, dict):
            fields = (str(error[k]) for k in ("resource", "field", "code") if error.get(k))
            parts.append(str(error.get("message") or " ".join(fields)))
    return f" — {'; '.join(parts)}" if parts else ""


def _reset(exc: GithubException) -> str:
    headers = {str(k).lower(): v for k, v in (exc.headers or {}).items()}
    try:
        reset = int(headers["x-ratelimit-reset"])
    except (KeyError, TypeError, ValueError):
        return ""
    minutes = max(0, round((reset - time.time()) / 60))
    return f" (resets at {time.strftime('%H:%M UTC', time.gmtime(reset))}, in {minutes} min)"


def _repo(gh: Github, c: GithubRequest) -> Repository:
    return gh.get_repo(c.full_name)


def list_issues(gh: Github, c: GithubRequest) -> str:
    state = c.state or "open"
    issues = _repo(gh, c).get_issues(state=state, **c.set("labels"))
    items, more = render.take(issues, c.per_page, keep=lambda i: not render.is_pr(i))
    lines = [render.issue_line(i) for i in items]
    return render.listing(lines, more, f"No {state} issues in {c.full_name}.")


def get_issue(gh: Github, c: GithubRequest) -> str:
    assert c.issue_number is not None  # validated with the arguments
    issue = _repo(gh, c).get_issue(c.issue_number)
    issue.complete()
    comments: list[IssueComment] = []
    more = False
    if issue.comments:
        comments, more = render.take(issue.get_comments(), COMMENTS_SHOWN)
    return render.issue_detail(issue, c.where, comments, more)


def create_issue(gh: Github, c: GithubRequest) -> str:
    issue = _repo(gh, c).create_issue(title=c.title or "", **c.set("body", "labels"))
    return f"Created issue {c.full_name}#{issue.number}: {issue.title}\n{issue.html_url}"


def update_issue(gh: Github, c: GithubRequest) -> str:
    assert c.issue_number is not None
    issue = _repo(gh, c).get_issue(c.issue_number)
    issue.edit(**c.set("title", "body", "state", "labels"))
    return f"Updated {render.issue_line(issue, with_repo=True)}\n{issue.html_url}"


def comment_issue(gh: Github, c: GithubRequest) -> str:
    assert c.issue_number is not None
    comment = _repo(gh, c).get_issue(c.issue_number).create_comment(c.body or "")
    return f"Commented on {c.where}\n{comment.html_url}"


def list_prs(gh: Github, c: GithubRequest) -> str:
    state = c.state or "open"
    pulls = _repo(gh, c).get_pulls(state=state, **c.set("base", "head"))
    items, more = render.take(pulls, c.per_page)
    lines = [render.pr_line(p) for p in items]
    return render.listing(lines, more, f"No {state} pull requests in {c.full_name}.")


def get_pr(gh: Github, c: GithubRequest) -> str:
    assert c.pull_number is not None
    pr = _repo(gh, c).get_pull(c.pull_number)
    pr.complete()
    return render.pr_detail(pr, c.where)


def create_pr(gh: Github, c: GithubRequest) -> str:
    pr = _repo(gh, c).create_pull(
        base=c.base or "", head=c.head or "", title=c.title or "", **c.set("body", "draft")
    )
    draft = " (draft)" if pr.draft else ""
    return (
        f"Opened pull request {c.full_name}#{pr.number}{draft}: {pr.title} "
        f"({pr.head.ref} → {pr.base.ref})\n{pr.html_url}"
    )


def review_pr(gh: Github, c: GithubRequest) -> str:
    assert c.pull_number is not None
    pr = _repo(gh, c).get_pull(c.pull_number)
    review = pr.create_review(**c.set("body", "event"))
    return f"Reviewed {c.where}: {review.state}\n{review.html_url}"


def merge_pr(gh: Github, c: GithubRequest) -> str:
    assert c.pull_number is not None
    pr = _repo(gh, c).get_pull(c.pull_number)
    options = c.set("merge_method")
    if c.title is not None:
        options["commit_title"] = c.title
    if c.body is not None:
        options["commit_message"] = c.body
    status = pr.merge(**options)
    if not status.merged:
        raise GithubException(405, {"message": status.message or "not merged"}, None)
    return f"Merged {c.where} as {status.sha[:12]}: {status.message}"


def list_repos(gh: Github, c: GithubRequest) -> str:
    if c.owner:
        repos = gh.get_user(c.owner).get_repos(sort="updated")
    else:
        repos = gh.get_user().get_repos(sort="updated")
    items, more = render.take(repos, c.per_page)
    who = c.owner or "the token's user"
    return render.listing([render.repo_line(r) for r in items], more, f"No repositories for {who}.")


def get_repo(gh: Github, c: GithubRequest) -> str:
    repo = _repo(gh, c)
    repo.complete()
    return render.repo_detail(repo)


def list_releases(gh: Github, c: GithubRequest) -> str:
    items, more = render.take(_repo(gh, c).get_releases(), c.per_page)
    lines = [render.release_line(r) for r in items]
    return render.listing(lines, more, f"No releases in {c.full_name}.")


def create_release(gh: Github, c: GithubRequest) -> str:
    tag = c.tag_name or ""
    release = _repo(gh, c).create_git_release(
        tag=tag,
        name=c.title or tag,
        message=c.body or "",
        draft=bool(c.draft),
        **c.set("target_commitish"),
    )
    draft = " (draft)" if release.draft else ""
    return f"Created release {release.tag_name}{draft} in {c.full_name}\n{release.html_url}"


def search_issues(gh: Github, c: GithubRequest) -> str:
    found = gh.search_issues(c.query or "")
    items, more = render.take(found, c.per_page)
    lines = [render.issue_line(i, with_repo=True) for i in items]
    return render.listing(lines, more, "No issues or PRs match.", found.totalCount)


def search_code(gh: Github, c: GithubRequest) -> str:
    found = gh.search_code(c.query or "")
    items, more = render.take(found, c.per_page)
    lines = [render.code_line(f) for f in items]
    return render.listing(lines, more, "No code matches.", found.totalCount)


def search_repos(gh: Github, c: GithubRequest) -> str:
    found = gh.search_repositories(c.query or "")
    items, more = render.take(found, c.per_page)
    lines = [render.repo_line(r) for r in items]
    return render.listing(lines, more, "No repositories match.", found.totalCount)


ACTIONS: dict[str, Callable[[Github, GithubRequest], str]] = {
    "list_issues": list_issues,
    "get_issue": get_issue,
    "create_issue": create_issue,
    "update_issue": update_issue,
    "comment_issue": comment_issue,
    "list_prs": list_prs,
    "get_pr": get_pr,
    "create_pr": create_pr,
    "review_pr": review_pr,
    "merge_pr": merge_pr,
    "list_repos": list_repos,
    "get_repo": get_repo,
    "list_releases": list_releases,
    "create_release": create_release,
    "search_issues": search_issues,
    "search_code": search_code,
    "search_repos": search_repos,
}

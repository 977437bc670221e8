"""Compact text for GitHub objects: one line per listed item, key fields for one item.

The model pays for every character, so lists stay on one line each and bodies are capped;
the full text is one `get_*` call away.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import TypeVar

from github.ContentFile import ContentFile
from github.GithubObject import GithubObject
from github.GitRelease import GitRelease
from github.Issue import Issue
from github.IssueComment import IssueComment
from github.Label import Label
from github.NamedUser import NamedUser
from github.Organization import Organization
from github.PaginatedList import PaginatedList
from github.PullRequest import PullRequest
from github.Repository import Repository

BODY_LIMIT = 4000
COMMENT_LIMIT = 1500
T = TypeVar("T", bound=GithubObject)


def day(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d") if moment else "?"


def login(user: NamedUser | Organization | None) -> str:
    return user.login if user is not None else "ghost"  # GitHub's name for deleted accounts


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def label_names(labels: Iterable[Label]) -> str:
    return ", ".join(label.name for label in labels)


def capped(text: str | None, limit: int = BODY_LIMIT) -> str:
    text = (text or "").strip()
    if not text:
        return "(no description)"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[… cut: {len(text) - limit} more characters]"


def take(
    items: PaginatedList[T],
    limit: int,
    keep: Callable[[T], bool] = lambda _: True,
) -> tuple[list[T], bool]:
    """Up to `limit` kept items, following `next` pages; and whether more may exist."""
    kept: list[T] = []
    seen = 0
    if limit > 0:
        for item in items:
            seen += 1
            if keep(item):
                kept.append(item)
                if len(kept) >= limit:
                    break
    # Knowing whether more exist must not cost a request: the buffer and the `next` link
    # already say it.
    return kept, items._isBiggerThan(seen)


def listing(lines: list[str], more: bool, empty: str, total: int | None = None) -> str:
    if not lines:
        return empty
    text = "\n".join(lines)
    if total is not None and total > len(lines):
        return f"{text}\n({len(lines)} of {total}; raise per_page or refine the query for more)"
    if more:
        return f"{text}\n(more exist: raise per_page or narrow the filter)"
    return text


def repo_of(issue: Issue) -> str:
    # `repository_url` ends with /repos/{owner}/{repo}; reading `issue.repository` would
    # cost a request per line.
    parts = issue.repository_url.rstrip("/").split("/")
    return "/".join(parts[-2:])


def is_pr(issue: Issue) -> bool:
    # Issue listings include PRs; `pull_request` is absent (not null) on plain issues, and
    # reading an absent field costs a request, so the URL tells instead.
    return "/pull/" in issue.html_url


def issue_line(issue: Issue, with_repo: bool = False) -> str:
    where = f"{repo_of(issue)}#{issue.number}" if with_repo else f"#{issue.number}"
    kind = " PR" if is_pr(issue) else ""
    labels = label_names(issue.labels)
    tags = f" ({labels})" if labels else ""
    return (
        f"{where} [{issue.state}{kind}] {issue.title}{tags} — {login(issue.user)}, "
        f"updated {day(issue.updated_at)}"
    )


def issue_detail(issue: Issue, where: str, comments: list[IssueComment], more: bool) -> str:
    head = [f"{where} [{issue.state}] {issue.title}"]
    if is_pr(issue):
        head.append("(a pull request: get_pr shows its branches and merge state)")
    facts = [f"author {login(issue.user)}", plural(issue.comments, "comment")]
    if issue.labels:
        facts.append(f"labels {label_names(issue.labels)}")
    if issue.assignees:
        facts.append("assignees " + ", ".join(login(a) for a in issue.assignees))
    if issue.milestone is not None:
        facts.append(f"milestone {issue.milestone.title}")
    head.append("; ".join(facts))
    dates = f"created {day(issue.created_at)}, updated {day(issue.updated_at)}"
    if issue.closed_at:
        dates += f", closed {day(issue.closed_at)}"
    head += [dates, issue.html_url, "", capped(issue.body)]
    for comment in comments:
        head += [
            "",
            f"— {login(comment.user)} on {day(comment.created_at)}:",
            capped(comment.body, COMMENT_LIMIT),
        ]
    if more:
        head += ["", f"(more comments: {issue.html_url})"]
    return "\n".join(head)


def pr_state(pr: PullRequest) -> str:
    state = "merged" if pr.merged_at else pr.state  # `merged` is absent from listings
    return f"{state}, draft" if pr.draft else state


def pr_line(pr: PullRequest) -> str:
    labels = label_names(pr.labels)
    tags = f" ({labels})" if labels else ""
    return (
        f"#{pr.number} [{pr_state(pr)}] {pr.title}{tags} — {login(pr.user)}, "
        f"{pr.head.ref} → {pr.base.ref}, updated {day(pr.updated_at)}"
    )


def pr_detail(pr: PullRequest, where: str) -> str:
    mergeable: dict[bool | None, str] = {
        True: "yes",
        False: "no (conflicts or checks)",
        None: "unknown yet",  # GitHub computes it in the background
    }
    lines = [
        f"{where} [{pr_state(pr)}] {pr.title}",
        f"{login(pr.user)} wants to merge {pr.head.label} into {pr.base.label}",
        f"{plural(pr.commits, 'commit')}, {plural(pr.changed_files, 'file')}, "
        f"+{pr.additions} −{pr.deletions}; "
        f"mergeable: {mergeable[pr.mergeable]}",
    ]
    if pr.labels:
        lines.append(f"labels {label_names(pr.labels)}")
    dates = f"created {day(pr.created_at)}, updated {day(pr.updated_at)}"
    if pr.merged_at:
        dates += f", merged {day(pr.merged_at)}"
    elif pr.closed_at:
        dates += f", closed {day(pr.closed_at)}"
    return "\n".join([*lines, dates, pr.html_url, "", capped(pr.body)])


def repo_line(repo: Repository) -> str:
    flags = [f for f, on in (("private", repo.private), ("archived", repo.archived)) if on]
    marks = f" [{', '.join(flags)}]" if flags else ""
    language = f" ({repo.language})" if repo.language else ""
    about = f" — {repo.description}" if repo.description else ""
    return (
        f"{repo.full_name}{marks} ★{repo.stargazers_count}{language}{about}, "
        f"updated {day(repo.updated_at)}"
    )


def repo_detail(repo: Repository) -> str:
    lines = [
        f"{repo.full_name}{' [private]' if repo.private else ''}"
        f"{' [archived]' if repo.archived else ''}",
        repo.description or "(no description)",
        f"★{repo.stargazers_count}, {repo.forks_count} forks, {repo.open_issues_count} open "
        f"issues and PRs; default branch {repo.default_branch}",
    ]
    if repo.language:
        lines.append(f"language {repo.language}")
    if repo.topics:
        lines.append("topics " + ", ".join(repo.topics))
    lines += [f"updated {day(repo.updated_at)}, pushed {day(repo.pushed_at)}", repo.html_url]
    return "\n".join(lines)


def release_line(release: GitRelease) -> str:
    flags = [f for f, on in (("draft", release.draft), ("prerelease", release.prerelease)) if on]
    marks = f" [{', '.join(flags)}]" if flags else ""
    name = f" {release.name}" if release.name and release.name != release.tag_name else ""
    when = release.published_at or release.created_at
    author = login(release.author) if release.author else "?"
    return f"{release.tag_name}{name}{marks} — {author}, {day(when)}"


def code_line(item: ContentFile) -> str:
    return f"{item.repository.full_name}:{item.path} — {item.html_url}"

"""`github`: issues, pull requests, releases and search through PyGithub.

PyGithub is blocking, so each call runs in a worker thread with its own client. Writes are
`write` egress (approval); the canonical target `github:<action>:<owner>/<repo>[#<n>]`
lets "Always allow" cover one repository (and one issue or PR) only.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal, cast

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from augure.config.settings import Config
from augure.config.tools import settings_for
from augure.tools.base import Egress, RunContext, ToolResult, describe, tool

GithubAction = Literal[
    "list_issues",
    "get_issue",
    "create_issue",
    "update_issue",
    "comment_issue",
    "list_prs",
    "get_pr",
    "create_pr",
    "review_pr",
    "merge_pr",
    "list_repos",
    "get_repo",
    "list_releases",
    "create_release",
    "search_issues",
    "search_code",
    "search_repos",
]
WRITES = frozenset(
    {
        "create_issue",
        "update_issue",
        "comment_issue",
        "create_pr",
        "review_pr",
        "merge_pr",
        "create_release",
    }
)
REPO = ("owner", "repo")
NEEDS: dict[str, tuple[str, ...]] = {
    "list_issues": REPO,
    "get_issue": (*REPO, "issue_number"),
    "create_issue": (*REPO, "title"),
    "update_issue": (*REPO, "issue_number"),
    "comment_issue": (*REPO, "issue_number", "body"),
    "list_prs": REPO,
    "get_pr": (*REPO, "pull_number"),
    "create_pr": (*REPO, "title", "head", "base"),
    "review_pr": (*REPO, "pull_number", "event"),
    "merge_pr": (*REPO, "pull_number"),
    "list_repos": (),
    "get_repo": REPO,
    "list_releases": REPO,
    "create_release": (*REPO, "tag_name"),
    "search_issues": ("query",),
    "search_code": ("query",),
    "search_repos": ("query",),
}
NOT_CONFIGURED = "set GITHUB_TOKEN (or [tools.github] token)"
DEFAULT_BASE_URL = "https://api.github.com"


@settings_for("github")
class GitHubSettings(BaseModel):
    """The `[tools.github]` table."""

    model_config = ConfigDict(extra="forbid")

    token: SecretStr | None = None
    base_url: str = DEFAULT_BASE_URL

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("must start with https:// (e.g. https://api.github.com)")
        return value.rstrip("/")


def github_settings(config: Config) -> GitHubSettings:
    return GitHubSettings.model_validate(config.tools.section("github"))


def github_token(config: Config) -> str | None:
    # A plain variable beats the file, as everywhere in the config (README, precedence).
    configured = github_settings(config).token
    token = os.environ.get("GITHUB_TOKEN") or (configured.get_secret_value() if configured else "")
    return token.strip() or None


def check(config: Config) -> str | None:
    try:
        return None if github_token(config) else NOT_CONFIGURED
    except ValidationError as exc:
        return f"fix [tools.github]: {describe(exc)}"


def _upper(value: Any) -> Any:
    return value.upper() if isinstance(value, str) else value


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _target(p: Any) -> str:
    if p.action.startswith("search_"):
        return f"github:{p.action}:{p.query or ''}"
    if p.action == "list_repos":
        return f"github:list_repos:{p.owner or '@me'}"
    from augure.tools.github.actions import where_of

    return f"github:{p.action}:{where_of(p)}"


def _egress(p: Any, config: Config) -> Egress:
    return Egress.WRITE if p.action in WRITES else Egress.READ_ONLY


@tool(
    "github",
    egress=Egress.READ_ONLY,
    classify=_egress,
    target=_target,
    untrusted=True,  # titles, bodies and code are written by anyone on GitHub
    deferred=True,
    check=check,
    timeout=90.0,
)
async def github(
    ctx: RunContext,
    action: Annotated[GithubAction, Field(description="what to do; writes ask the owner first")],
    owner: Annotated[str | None, Field(description="user or organisation")] = None,
    repo: Annotated[str | None, Field(description="repository name (or owner/name)")] = None,
    issue_number: int | None = None,
    pull_number: int | None = None,
    title: Annotated[
        str | None, Field(description="issue, PR or release title; merge_pr: commit title")
    ] = None,
    body: Annotated[
        str | None, Field(description="markdown text; merge_pr: commit message")
    ] = None,
    state: Annotated[
        Literal["open", "closed", "all"] | None,
        BeforeValidator(_lower),
        Field(description="list filter (default open); update_issue: open or closed"),
    ] = None,
    labels: list[str] | None = None,
    base: Annotated[str | None, Field(description="branch to merge into")] = None,
    head: Annotated[str | None, Field(description="branch with the changes (user:branch)")] = None,
    event: Annotated[
        Literal["APPROVE", "REQUEST_CHANGES", "COMMENT"] | None, BeforeValidator(_upper)
    ] = None,
    merge_method: Annotated[
        Literal["merge", "squash", "rebase"] | None, BeforeValidator(_lower)
    ] = None,
    tag_name: str | None = None,
    target_commitish: Annotated[
        str | None, Field(description="branch or commit the new tag points at")
    ] = None,
    draft: bool | None = None,
    query: Annotated[str | None, Field(description="GitHub search syntax")] = None,
    per_page: Annotated[int, Field(ge=1, le=300, description="how many items to list")] = 30,
) -> ToolResult:
    """GitHub issues, pull requests, repos, releases and search. Issues: list, read,
    open, edit, comment; pull requests: list, read, open, review, merge; repositories: list,
    read; releases: list, create; search issues, code and repositories."""
    # PyGithub is slow to import: paid on the first GitHub call, not at every start.
    from augure.tools.github.actions import GithubRequest, run

    call = GithubRequest(
        action, owner, repo, issue_number, pull_number, title, body, state, labels, base,
        head, event, merge_method, tag_name, target_commitish, draft, query, per_page,
    )  # fmt: skip
    try:
        settings = github_settings(ctx.config)
        token = github_token(ctx.config)
    except ValidationError as exc:
        return ToolResult.error(f"fix [tools.github]: {describe(exc)}")
    if not token:
        return ToolResult.error(f"[NOT CONFIGURED] {NOT_CONFIGURED}")
    return await asyncio.to_thread(run, settings.base_url, token, call)


def missing(p: Any) -> str | None:
    """What the action lacks, phrased for the model; None when it has what it needs."""
    needed = NEEDS[p.action]
    if any(getattr(p, name) in (None, "") for name in needed):
        listed = ", ".join(needed[:-1]) + " and " if len(needed) > 1 else ""
        return f"{p.action} needs {listed}{needed[-1]}"
    if p.action == "update_issue" and all(
        getattr(p, name) is None for name in ("title", "body", "state", "labels")
    ):
        return "update_issue needs at least one of title, body, state, labels"
    if p.action == "update_issue" and p.state == "all":
        return "update_issue: state is open or closed"
    return None


# GitHub's own name rules: a login is letters, digits and single inner hyphens (at most 39);
# a repository name is letters, digits, `.`, `_` and `-` (at most 100), never `.` or `..`.
OWNER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
REPO_NAME = re.compile(r"^[A-Za-z0-9._-]{1,100}$")


def bad_name(p: Any) -> str | None:
    """Why owner or repo is not a GitHub name; checked before any URL is built from them,
    so `..` or `/` can never reach another API path."""
    if p.owner and not OWNER_NAME.match(p.owner):
        return f"owner {p.owner[:60]!r} is not a GitHub user or organisation name"
    if p.repo and (not REPO_NAME.match(p.repo) or p.repo in (".", "..")):
        return f"repo {p.repo[:110]!r} is not a GitHub repository name"
    return None


def _split_repo(p: Any) -> Any:
    # Models often pass repo="owner/name"; accept it rather than fail the call.
    if p.repo and "/" in p.repo and not p.owner:
        p.owner, p.repo = p.repo.split("/", 1)
    problem = bad_name(p) or missing(p)
    if problem:
        # Refused at validation, so the owner is never asked to approve a doomed write.
        raise PydanticCustomError("github_arguments", problem)
    return p


# pydantic accepts decorated validators here; its stubs only know plain callables.
_complete = cast(Callable[..., Any], model_validator(mode="after")(_split_repo))
github.validated_by("_complete", _complete)

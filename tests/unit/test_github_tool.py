"""The `github` tool: real PyGithub against the fake GitHub API over loopback."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from augure.config.settings import ConfigError, load_config
from augure.memory.store import MemoryStore
from augure.store.state import Store
from augure.tools.base import Egress, RunContext, ToolResult
from augure.tools.github import WRITES, github
from augure.tools.registry import ToolRegistry
from tests.fakes.github import FakeGitHub

REPO = {"owner": "octo", "repo": "hello"}


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as server:
        server.add_repo("octo", "hello", description="Hello world", topics=["demo"], stars=7)
        server.add_repo("octo", "other", description="Another one", language="Rust")
        server.add_repo(server.login, "dotfiles", description="my config", private=True)
        server.add_issue("octo/hello", "Crash on start", body="Steps: run it", labels=["bug"])
        server.add_pull("octo/hello", "Add greeting", "feature", body="Says hello")
        server.add_issue("octo/hello", "Old question", state="closed")
        server.add_release("octo/hello", "v1.0", name="First", body="notes")
        server.add_file("octo/hello", "src/app.py", "def greet():\n    return 'hello'\n")
        yield server


def write_config(home: Path, table: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "augure.toml").write_text(table, encoding="utf-8")


@pytest.fixture
async def context(
    tmp_path: Path, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[RunContext]:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    write_config(
        tmp_path, f'[tools.github]\ntoken = "{fake.token}"\nbase_url = "{fake.base_url}"\n'
    )
    store = await Store.open(tmp_path / "state.db")
    yield RunContext(load_config(home=tmp_path), MemoryStore(tmp_path / "memory"), store)
    await store.close()


async def run(context: RunContext, **args: Any) -> ToolResult:
    return await github.run_ungated(args, context)


# (arguments, what the output says, the request that did it)
ACTIONS: list[tuple[dict[str, Any], list[str], tuple[str, str]]] = [
    (
        {"action": "list_issues", **REPO},
        ["#1 [open] Crash on start (bug) — octocat, updated "],
        ("GET", "/repos/octo/hello/issues"),
    ),
    (
        {"action": "get_issue", **REPO, "issue_number": 1},
        ["octo/hello#1 [open] Crash on start", "labels bug", "Steps: run it", "/issues/1"],
        ("GET", "/repos/octo/hello/issues/1"),
    ),
    (
        {"action": "create_issue", **REPO, "title": "New idea", "body": "b", "labels": ["x"]},
        ["Created issue octo/hello#4: New idea"],
        ("POST", "/repos/octo/hello/issues"),
    ),
    (
        {"action": "update_issue", **REPO, "issue_number": 1, "state": "closed"},
        ["Updated octo/hello#1 [closed] Crash on start"],
        ("PATCH", "/repos/octo/hello/issues/1"),
    ),
    (
        {"action": "comment_issue", **REPO, "issue_number": 1, "body": "Same here"},
        ["Commented on octo/hello#1", "#issuecomment-"],
        ("POST", "/repos/octo/hello/issues/1/comments"),
    ),
    (
        {"action": "list_prs", **REPO},
        ["#2 [open] Add greeting — octocat, feature → main, updated "],
        ("GET", "/repos/octo/hello/pulls"),
    ),
    (
        {"action": "get_pr", **REPO, "pull_number": 2},
        ["octo/hello#2 [open] Add greeting", "merge octo:feature into octo:main", "Says hello"],
        ("GET", "/repos/octo/hello/pulls/2"),
    ),
    (
        {"action": "create_pr", **REPO, "title": "Tidy", "head": "feature", "base": "main"},
        ["Opened pull request octo/hello#4: Tidy (feature → main)"],
        ("POST", "/repos/octo/hello/pulls"),
    ),
    (
        {"action": "review_pr", **REPO, "pull_number": 2, "event": "approve"},
        ["Reviewed octo/hello#2: APPROVED"],
        ("POST", "/repos/octo/hello/pulls/2/reviews"),
    ),
    (
        {"action": "merge_pr", **REPO, "pull_number": 2, "merge_method": "squash"},
        ["Merged octo/hello#2 as ", "Pull Request successfully merged"],
        ("PUT", "/repos/octo/hello/pulls/2/merge"),
    ),
    (
        {"action": "list_repos"},
        ["octocat/dotfiles [private] ★0 (Python) — my config"],
        ("GET", "/user/repos"),
    ),
    (
        {"action": "list_repos", "owner": "octo"},
        ["octo/hello ★7 (Python) — Hello world", "octo/other ★0 (Rust) — Another one"],
        ("GET", "/users/octo/repos"),
    ),
    (
        {"action": "get_repo", "repo": "octo/hello"},
        ["octo/hello\nHello world\n★7, 0 forks", "topics demo", "default branch main"],
        ("GET", "/repos/octo/hello"),
    ),
    (
        {"action": "list_releases", **REPO},
        ["v1.0 First — octocat, "],
        ("GET", "/repos/octo/hello/releases"),
    ),
    (
        {"action": "create_release", **REPO, "tag_name": "v1.1", "title": "Second"},
        ["Created release v1.1 in octo/hello", "/releases/tag/v1.1"],
        ("POST", "/repos/octo/hello/releases"),
    ),
    (
        {"action": "search_issues", "query": "greeting repo:octo/hello"},
        ["octo/hello#2 [open PR] Add greeting"],
        ("GET", "/search/issues"),
    ),
    (
        {"action": "search_code", "query": "greet"},
        ["octo/hello:src/app.py — ", "/blob/main/src/app.py"],
        ("GET", "/search/code"),
    ),
    (
        {"action": "search_repos", "query": "another"},
        ["octo/other ★0 (Rust) — Another one"],
        ("GET", "/search/repositories"),
    ),
]


def test_every_action_is_covered() -> None:
    assert {args["action"] for args, _, _ in ACTIONS} == set(
        github.parameters["properties"]["action"]["enum"]
    )


@pytest.mark.parametrize(("args", "says", "request_made"), ACTIONS, ids=lambda v: None)
async def test_each_action_through_pygithub(
    context: RunContext,
    fake: FakeGitHub,
    args: dict[str, Any],
    says: list[str],
    request_made: tuple[str, str],
) -> None:
    result = await run(context, **args)
    assert result.success, result.output
    for text in says:
        assert text in result.output
    assert (fake.requests[-1].method, fake.requests[-1].path) == request_made
    # Every field the output needs came in the response: no follow-up fetch per object.
    assert len(fake.requests) <= 2
    assert all(r.authorization == f"token {fake.token}" for r in fake.requests)
    assert fake.token not in result.output


async def test_writes_change_the_fake(context: RunContext, fake: FakeGitHub) -> None:
    await run(context, action="create_issue", **REPO, title="Made", labels=["ui"])
    assert (fake.issue("octo/hello", 4).title, fake.issue("octo/hello", 4).labels) == (
        "Made",
        ["ui"],
    )
    await run(context, action="update_issue", **REPO, issue_number=1, labels=["bug", "p1"])
    assert fake.issue("octo/hello", 1).labels == ["bug", "p1"]
    await run(context, action="comment_issue", **REPO, issue_number=1, body="ping")
    assert [c["body"] for c in fake.issue("octo/hello", 1).comments] == ["ping"]
    merged = await run(
        context, action="merge_pr", **REPO, pull_number=2, title="Squashed", merge_method="squash"
    )
    pull = fake.issue("octo/hello", 2).pull or {}
    assert merged.success and pull["method"] == "squash" and pull["commit_title"] == "Squashed"
    again = await run(context, action="merge_pr", **REPO, pull_number=2)
    assert again.output == "Error: GitHub error 405: Pull Request is not mergeable"
    draft = await run(context, action="create_release", **REPO, tag_name="v2", draft=True)
    assert "Created release v2 (draft)" in draft.output
    assert fake.repos["octo/hello"].releases[0]["draft"] is True


async def test_get_issue_shows_comments(context: RunContext, fake: FakeGitHub) -> None:
    await run(context, action="comment_issue", **REPO, issue_number=1, body="First reply")
    result = await run(context, action="get_issue", **REPO, issue_number=1)
    assert "; 1 comment;" in result.output and "— octocat on " in result.output
    assert result.output.endswith("First reply")


async def test_list_issues_leaves_out_pull_requests_and_filters(
    context: RunContext, fake: FakeGitHub
) -> None:
    fake.add_issue("octo/hello", "Typo", labels=["docs"])
    listed = await run(context, action="list_issues", **REPO, state="all")
    assert "Add greeting" not in listed.output
    assert [line.split(" ")[0] for line in listed.output.splitlines()] == ["#4", "#3", "#1"]
    docs = await run(context, action="list_issues", **REPO, labels=["docs"])
    assert docs.output.startswith("#4 [open] Typo (docs)") and "\n" not in docs.output
    assert fake.requests[-1].query["labels"] == "docs"
    none = await run(context, action="list_issues", **REPO, labels=["nope"])
    assert none.output == "No open issues in octo/hello."


async def test_a_long_listing_follows_next_pages(context: RunContext, fake: FakeGitHub) -> None:
    fake.add_repo("octo", "big")
    for n in range(150):
        fake.add_issue("octo/big", f"Issue {n + 1}")
    result = await run(context, action="list_issues", owner="octo", repo="big", per_page=120)
    lines = result.output.splitlines()
    assert lines[0].startswith("#150 ") and lines[119].startswith("#31 ")
    assert lines[120] == "(more exist: raise per_page or narrow the filter)"
    pages = [r.query for r in fake.sent("GET", "/repos/octo/big/issues")]
    assert [q.get("page") for q in pages] == [None, "2"]
    assert pages[0]["per_page"] == "100"  # GitHub's cap; the second page came from `Link`


async def test_a_short_page_says_more_exist_without_fetching_them(
    context: RunContext, fake: FakeGitHub
) -> None:
    for n in range(4):
        fake.add_issue("octo/hello", f"Extra {n}")
    result = await run(context, action="list_issues", **REPO, per_page=2)
    assert len(result.output.splitlines()) == 3 and "more exist" in result.output
    assert len(fake.sent("GET", "/repos/octo/hello/issues")) == 1
    everything = await run(context, action="list_issues", **REPO, per_page=50)
    assert "more exist" not in everything.output


async def test_search_pages_and_totals(context: RunContext, fake: FakeGitHub) -> None:
    for n in range(5):
        fake.add_issue("octo/hello", f"flaky test {n}")
    result = await run(context, action="search_issues", query="flaky", per_page=3)
    assert result.output.endswith("(3 of 5; raise per_page or refine the query for more)")
    empty = await run(context, action="search_code", query="nowhere-to-be-found")
    assert empty.output == "No code matches."


async def test_not_found_is_named(context: RunContext) -> None:
    issue = await run(context, action="get_issue", **REPO, issue_number=99)
    assert issue.output.startswith("Error: not found: octo/hello#99")
    repo = await run(context, action="create_issue", owner="octo", repo="nope", title="x")
    assert repo.output.startswith("Error: not found: octo/nope")
    pr = await run(context, action="get_pr", **REPO, pull_number=1)  # #1 is an issue
    assert pr.output.startswith("Error: not found: octo/hello#1")
    user = await run(context, action="list_repos", owner="ghost-user")
    assert user.output.startswith("Error: not found: user ghost-user")


async def test_validation_failures_carry_githubs_message(context: RunContext) -> None:
    tag = await run(context, action="create_release", **REPO, tag_name="v1.0")
    assert tag.output == (
        "Error: GitHub rejected the request (422): Validation Failed — Release tag_name "
        "already_exists"
    )
    same = await run(context, action="create_pr", **REPO, title="t", head="main", base="main")
    assert same.output.endswith("Validation Failed — No commits between main and main")
    review = await run(context, action="review_pr", **REPO, pull_number=2, event="COMMENT")
    assert review.output.endswith(
        "(422): Unprocessable Entity — Review body is required when using COMMENT."
    )


async def test_bad_token_and_rate_limit_are_explained(
    tmp_path: Path, context: RunContext, fake: FakeGitHub
) -> None:
    fake.rate_limited = True
    limited = await run(context, action="list_repos")
    assert limited.output.startswith("Error: GitHub rate limit exceeded (resets at ")
    assert "in 30 min); try again later" in limited.output
    assert len(fake.requests) == 1  # not retried: a rate limit is reported, not slept through

    fake.rate_limited = False
    write_config(tmp_path, f'[tools.github]\ntoken = "wrong-token"\nbase_url = "{fake.base_url}"')
    context = dataclasses.replace(context, config=load_config(home=tmp_path))
    refused = await run(context, action="get_repo", **REPO)
    assert refused.output == (
        "Error: GitHub refused the token (401 Bad credentials): check GITHUB_TOKEN "
        "(or [tools.github] token)"
    )


async def test_an_unreachable_server_is_one_clear_line(
    tmp_path: Path, context: RunContext, fake: FakeGitHub
) -> None:
    await fake.stop()
    result = await run(context, action="get_repo", **REPO)
    assert result.output == f"Error: cannot reach GitHub at {fake.base_url}: ConnectionError"


async def test_missing_parameters_are_refused_before_any_request(
    context: RunContext, fake: FakeGitHub
) -> None:
    cases = {
        "get_issue": "get_issue needs owner, repo and issue_number",
        "list_prs": "list_prs needs owner and repo",
        "create_pr": "create_pr needs owner, repo, title, head and base",
        "search_code": "search_code needs query",
    }
    for action, message in cases.items():
        result = await run(context, action=action)
        assert result.output == f"Error: invalid arguments for github: arguments: {message}"
    nothing = await run(context, action="update_issue", **REPO, issue_number=1)
    assert nothing.output.endswith("update_issue needs at least one of title, body, state, labels")
    assert fake.requests == []


def test_egress_target_and_rule(tmp_path: Path) -> None:
    config = load_config(home=tmp_path)

    def parsed(**args: Any) -> Any:
        arguments = github.validate(args)
        assert not isinstance(arguments, str), arguments
        return arguments

    write = parsed(action="comment_issue", repo="octo/hello", issue_number=3, body="x")
    approval = github.approval
    assert approval.egress_for(write, config) is Egress.WRITE and approval.needed(write, config)
    assert github.approval.target_for(write) == "github:comment_issue:octo/hello#3"
    assert github.approval.rule_for(write) == "github:comment_issue:octo/hello#3"
    create = parsed(action="create_issue", **REPO, title="t")
    assert github.approval.target_for(create) == "github:create_issue:octo/hello"
    read = parsed(action="get_pr", **REPO, pull_number=2)
    assert approval.egress_for(read, config) is Egress.READ_ONLY
    assert not approval.needed(read, config)
    assert github.approval.target_for(read) == "github:get_pr:octo/hello#2"
    assert github.approval.target_for(parsed(action="list_repos")) == "github:list_repos:@me"
    writes = {a for a in github.parameters["properties"]["action"]["enum"] if a in WRITES}
    assert writes == {
        "create_issue", "update_issue", "comment_issue", "create_pr", "review_pr",
        "merge_pr", "create_release",
    }  # fmt: skip
    assert github.untrusted and github.deferred


def test_schema_has_every_parameter_of_the_spec() -> None:
    spec = [
        "action", "owner", "repo", "issue_number", "pull_number", "title", "body", "state",
        "labels", "base", "head", "event", "merge_method", "tag_name", "target_commitish",
        "draft", "query", "per_page",
    ]  # fmt: skip
    assert list(github.parameters["properties"]) == spec
    assert github.parameters["required"] == ["action"]


async def test_not_configured_without_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    store = await Store.open(tmp_path / "state.db")
    context = RunContext(load_config(home=tmp_path), MemoryStore(tmp_path / "memory"), store)
    registry = ToolRegistry(context.config)
    registry.register(github)
    assert registry.description(github).endswith(
        "[NOT CONFIGURED] set GITHUB_TOKEN (or [tools.github] token)"
    )
    result = await run(context, action="list_repos")
    assert result.output == "Error: [NOT CONFIGURED] set GITHUB_TOKEN (or [tools.github] token)"

    monkeypatch.setenv("GITHUB_TOKEN", "ghp_from_the_environment")
    assert registry.description(github) == github.description
    # A bad [tools.github] is refused when the config is loaded, before any tool sees it.
    write_config(tmp_path, '[tools.github]\nbase_url = "ftp://example.com"\nextra = 1\n')
    with pytest.raises(ConfigError, match=r"tools\.github\.extra: unknown key"):
        load_config(home=tmp_path)
    write_config(tmp_path, '[tools.github]\nbase_url = "ftp://example.com"\n')
    with pytest.raises(ConfigError, match=r"tools\.github\.base_url: Value error, must start with"):
        load_config(home=tmp_path)
    await store.close()


async def test_the_environment_token_is_used(
    tmp_path: Path, context: RunContext, fake: FakeGitHub, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_config(tmp_path, f'[tools.github]\nbase_url = "{fake.base_url}"\n')
    context = dataclasses.replace(context, config=load_config(home=tmp_path))
    monkeypatch.setenv("GITHUB_TOKEN", fake.token)
    result = await run(context, action="get_repo", **REPO)
    assert result.success and fake.requests[-1].authorization == f"token {fake.token}"

"""The `github` tool through the real bot: writes wait for the owner's press, reads do not."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import approval_message, buttons, final_reply, tool_results
from tests.fakes.github import FakeGitHub
from tests.fakes.openai import text, tool

NEW_ISSUE = {
    "action": "create_issue",
    "owner": "octo",
    "repo": "hello",
    "title": "Dark mode",
    "body": "Please add it.",
}


@pytest.fixture
async def fake_github() -> AsyncIterator[FakeGitHub]:
    async with FakeGitHub() as fake:
        fake.add_repo("octo", "hello")
        yield fake


@pytest.fixture
def bot_env(fake_github: FakeGitHub) -> dict[str, str]:
    return {
        "GITHUB_TOKEN": fake_github.token,
        "AUGURE__TOOLS__GITHUB__BASE_URL": fake_github.base_url,
    }


async def test_approve_creates_the_issue(bot: Bot, fake_github: FakeGitHub) -> None:
    bot.llm.script(tool("github", NEW_ISSUE), text("Filed it."))
    bot.telegram.inject_message(OWNER, "file an issue for dark mode")
    message = await approval_message(bot)
    assert "github" in message["text"] and '"action": "create_issue"' in message["text"]
    assert set(buttons(message)) == {"Approve", "Reject", "Always allow", "Allow in this chat"}
    assert fake_github.sent("POST") == []  # nothing happens before the press

    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Filed it.")
    (issue,) = fake_github.repos["octo/hello"].issues.values()
    assert (issue.title, issue.body) == ("Dark mode", "Please add it.")
    (result,) = tool_results(bot.llm)
    assert result.startswith('<untrusted_content source="github">')
    assert "Created issue octo/hello#1: Dark mode" in result


async def test_reject_creates_nothing(bot: Bot, fake_github: FakeGitHub) -> None:
    bot.llm.script(tool("github", NEW_ISSUE), text("Not filed."))
    bot.telegram.inject_message(OWNER, "file an issue for dark mode")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Reject"])
    await final_reply(bot, "Not filed.")
    assert tool_results(bot.llm) == ["Tool call rejected by user."]
    assert fake_github.requests == [] and fake_github.repos["octo/hello"].issues == {}


async def test_always_allow_covers_that_repository_only(bot: Bot, fake_github: FakeGitHub) -> None:
    fake_github.add_repo("octo", "other")
    bot.llm.script(tool("github", NEW_ISSUE), text("one"))
    bot.telegram.inject_message(OWNER, "first")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Always allow"])
    await final_reply(bot, "one")
    assert bot.core is not None
    (rule,) = await bot.core.audit.rules()
    assert rule.pattern == "github:create_issue:octo/hello"

    bot.llm.script(tool("github", NEW_ISSUE | {"title": "Second"}), text("two"))
    bot.telegram.inject_message(OWNER, "second")
    await final_reply(bot, "two")
    assert len(fake_github.repos["octo/hello"].issues) == 2

    bot.llm.script(tool("github", NEW_ISSUE | {"repo": "other"}), text("three"))
    bot.telegram.inject_message(OWNER, "third")
    other = await approval_message(bot, count=2)
    bot.telegram.press_button(OWNER, other["message_id"], buttons(other)["Reject"])
    await final_reply(bot, "three")
    assert fake_github.repos["octo/other"].issues == {}


async def test_a_read_runs_without_asking_and_never_shows_the_token(
    bot: Bot, fake_github: FakeGitHub
) -> None:
    # Someone pasted the owner's token into an issue: the model still never sees it.
    fake_github.add_issue(
        "octo/hello", "Leaked config", body=f"GITHUB_TOKEN={fake_github.token} oops"
    )
    bot.llm.script(
        tool("github", {"action": "get_issue", "repo": "octo/hello", "issue_number": 1}),
        text("It is about a leaked config."),
    )
    bot.telegram.inject_message(OWNER, "what is issue 1 about?")
    await final_reply(bot, "It is about a leaked config.")
    assert not any("reply_markup" in c.params for c in bot.telegram.sent("sendMessage"))
    (result,) = tool_results(bot.llm)
    assert result.startswith('<untrusted_content source="github">')
    assert "octo/hello#1 [open] Leaked config" in result
    assert "GITHUB_TOKEN=[REDACTED:GITHUB_TOKEN] oops" in result
    every_request = str(bot.llm.requests) + str(bot.telegram.sent())
    assert fake_github.token not in every_request
    assert bot.core is not None
    (record,) = await bot.core.audit.listing(tool="github")
    assert record["approval_status"] == "not_required" and record["status"] == "completed"
    assert fake_github.token not in str(record)

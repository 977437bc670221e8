"""An approval request never shows a secret, not even in the rule "Always allow" would save."""

from __future__ import annotations

import sqlite3

import pytest

from augure.tools.base import Tool
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import approval_message, buttons, final_reply
from tests.fakes.openai import text, tool


@pytest.fixture
def extra_tools() -> list[Tool]:
    test_tools.reset()
    return test_tools.TEST_TOOLS


async def test_a_target_naming_a_secret_is_not_shown_and_offers_no_rule(bot: Bot) -> None:
    assert bot.core is not None and bot.core.config.llm.api_key is not None
    secret = bot.core.config.llm.api_key.get_secret_value()
    bot.llm.script(tool("send_note", {"to": secret, "text": "hi"}), text("Sent."))
    bot.telegram.inject_message(OWNER, "send a note to that address")
    message = await approval_message(bot)
    assert secret not in message["text"] and "[REDACTED" in message["text"]
    # A rule would have to name the secret (shown here, stored in state.db): none is offered.
    assert set(buttons(message)) == {"Approve", "Reject"}
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Sent.")
    assert test_tools.outbox(bot.home) == [{"to": secret, "text": "hi"}]
    assert not [c for c in bot.telegram.calls if secret in str(c.params)]


async def test_no_column_of_state_db_holds_a_secret_named_by_a_target(bot: Bot) -> None:
    """SPEC §5: audit records never hold a secret, the target column included."""
    assert bot.core is not None and bot.core.config.llm.api_key is not None
    secret = bot.core.config.llm.api_key.get_secret_value()
    bot.llm.script(tool("send_note", {"to": secret, "text": "hi"}), text("Sent."))
    bot.telegram.inject_message(OWNER, "send a note to that address")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Sent.")
    dump = "\n".join(sqlite3.connect(bot.home / "state.db").iterdump())
    assert "send_note" in dump
    leaks = [
        line[:40] + " … " + line.split(secret)[0][-60:]
        for line in dump.splitlines()
        if secret in line
    ]
    assert leaks == []

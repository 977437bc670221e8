"""Cache-friendly requests (docs/prompt-economy.md, "The stable prefix"): across a chat's turns
the system prompt and the tool list reach the endpoint byte for byte the same until memory
(or tools, or the persona) changes; the time comes after them."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest

from tests.e2e.conftest import OWNER, Bot
from tests.fakes.openai import text, tool


def prefix(request: dict[str, Any]) -> str:
    system = request["messages"][0]
    assert system["role"] == "system"
    return json.dumps([system, request.get("tools", [])], sort_keys=False)


@pytest.fixture
def bot_env() -> dict[str, str]:
    return {"AUGURE__TELEGRAM__STREAMING": "false", "AUGURE__TELEGRAM__FOLD_SECONDS": "0"}


async def turn(bot: Bot, said: str, *replies: Any) -> None:
    before = len(bot.telegram.sent("sendMessage"))
    bot.llm.script(*replies)
    bot.telegram.inject_message(OWNER, said)
    await bot.telegram.wait_for("sendMessage", count=before + 1, timeout=10)


async def test_five_turns_keep_a_byte_identical_prefix_and_a_memory_write_changes_it(
    bot: Bot,
) -> None:
    for n in range(5):
        await turn(bot, f"message {n}", text(f"answer {n}"))
    prefixes = {prefix(request) for request in bot.llm.requests}
    assert len(prefixes) == 1, "the system prompt or the tool list changed between turns"
    (system,) = {request["messages"][0]["content"] for request in bot.llm.requests}
    # The clock is not in the prefix: it comes just before the newest message, once.
    assert str(datetime.now().year) not in system
    *_, clock, newest = bot.llm.requests[-1]["messages"]
    assert newest == {"role": "user", "content": "message 4"}
    assert clock["role"] == "user" and clock["content"].startswith("[Now: ")
    assert sum("[Now: " in m["content"] for m in bot.llm.requests[-1]["messages"]) == 1

    write = {"path": "notes.md", "content": "The owner's cat is called Pixel."}
    await turn(bot, "remember my cat", tool("memory_write", write), text("noted"))
    await turn(bot, "and now?", text("ok"))
    changed = prefix(bot.llm.requests[-1])
    assert changed not in prefixes and "Pixel" in changed

"""Rarely used built-in tools cost one line of the system prompt until the model loads them,
and work either way (docs/reference/tools.md). The size of the first request is measured by
bench.prompt."""

from __future__ import annotations

from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import final_reply, tool_results
from tests.fakes.openai import text, tool

DEFERRED = ("datetime", "email", "read_output", "list_skills", "github", "sandbox_exec")


def offered(request: dict[str, object]) -> dict[str, dict[str, object]]:
    schemas = request.get("tools", [])
    assert isinstance(schemas, list)
    return {s["function"]["name"]: s["function"] for s in schemas}


async def test_rarely_used_tools_cost_one_line_until_loaded(bot: Bot) -> None:
    bot.llm.script(
        tool("load_tools", {"names": ["email", "datetime"]}),
        tool("datetime", {"timezone": "Asia/Tokyo"}),
        text("It is evening in Tokyo."),
    )
    bot.telegram.inject_message(OWNER, "what time is it in Tokyo?")
    await final_reply(bot, "It is evening in Tokyo.")

    first, second, third = bot.llm.requests
    system = first["messages"][0]["content"]
    for name in DEFERRED:
        assert name not in offered(first)
        (line,) = [ln for ln in system.splitlines() if ln.startswith(f"- {name}: ")]
        assert line.endswith(".") and ". " not in line  # one sentence, not the description
    assert {"memory_read", "memory_write", "schedule", "web_search", "load_tools"} <= set(
        offered(first)
    )

    loaded = offered(second)
    assert "action" in loaded["email"]["parameters"]["properties"]  # fully described
    assert "timezone" in loaded["datetime"]["parameters"]["properties"]
    assert {"email", "datetime"} <= set(offered(third))  # loaded for the conversation
    assert tool_results(bot.llm)[0] == "Loaded: email, datetime. You can call them now."
    assert "(Asia/Tokyo)" in tool_results(bot.llm)[1]


async def test_a_deferred_tool_can_be_called_without_loading_it(bot: Bot) -> None:
    bot.llm.script(tool("list_skills", {}), text("Two skills."))
    bot.telegram.inject_message(OWNER, "which skills do I have?")
    await final_reply(bot, "Two skills.")

    (listing,) = tool_results(bot.llm)
    assert "daily-digest" in listing and "weekly-review" in listing
    assert all("list_skills" not in offered(r) for r in bot.llm.requests)

"""Code mode through the real bot: the model sends execute_code, the snippet's api calls go
through the executor, approvals appear in Telegram, and the result reaches the model."""

from __future__ import annotations

import json

import pytest

from augure.codemode.tool import execute_code
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import REJECTED, approval_message, buttons, final_reply, tool_results
from tests.fakes.openai import text, tool

pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, execute_code, reset=test_tools.reset)


async def enable_code_mode(bot: Bot, **env: str) -> None:
    await bot.stop()
    bot.extra_env = {"AUGURE__CODE_MODE__ENABLED": "true", **env}
    await bot.start()


async def records(bot: Bot) -> list[dict[str, object]]:
    assert bot.core is not None
    return list(reversed(await bot.core.audit.listing()))  # oldest first


def run(snippet: str) -> object:
    return tool("execute_code", {"code": snippet})


async def test_one_snippet_calls_three_tools(bot: Bot) -> None:
    await enable_code_mode(bot)
    bot.llm.script(
        run(
            "print(api.memory_write(path='groceries.md', content='- milk'))\n"
            "print(api.memory_read(path='groceries.md'))\n"
            "api.datetime(timezone='Europe/Paris')"
        ),
        text("Saved."),
    )
    bot.telegram.inject_message(OWNER, "note milk")
    await final_reply(bot, "Saved.")
    (result,) = tool_results(bot.llm)
    lines = result.splitlines()
    assert lines[0] == "Saved groceries.md (6 bytes)."
    assert lines[1] == "- milk"
    assert lines[2].startswith("Result: ") and lines[2].endswith("(Europe/Paris)")
    assert (bot.home / "memory" / "groceries.md").read_text() == "- milk"
    # Code mode offers one tool, whose description carries every tool as a typed function.
    (offered,) = bot.llm.requests[0]["tools"]
    assert offered["function"]["name"] == "execute_code"
    assert "def memory_write(path: str, content: str) -> str" in offered["function"]["description"]
    assert "load_tools" not in bot.llm.requests[0]["messages"][0]["content"]
    shown = [(r["tool"], r["origin"], r["status"]) for r in await records(bot)]
    assert shown == [
        ("execute_code", "chat", "completed"),
        ("memory_write", "chat>code", "completed"),
        ("memory_read", "chat>code", "completed"),
        ("datetime", "chat>code", "completed"),
    ]


SEND = (
    "try:\n"
    "    print(api.send_note(to='alice', text='hi from code'))\n"
    "except ToolError as e:\n"
    "    print('could not send:', e)\n"
)


async def test_a_write_inside_code_asks_and_runs_when_approved(bot: Bot) -> None:
    await enable_code_mode(bot)
    bot.llm.script(run(SEND), text("Sent."))
    bot.telegram.inject_message(OWNER, "tell alice hi")
    message = await approval_message(bot)
    assert "send_note" in message["text"] and "hi from code" in message["text"]
    assert test_tools.outbox(bot.home) == []  # the snippet waits on the owner
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await final_reply(bot, "Sent.")
    assert tool_results(bot.llm) == ["Note sent to alice."]
    assert test_tools.outbox(bot.home) == [{"to": "alice", "text": "hi from code"}]
    note = [r for r in await records(bot) if r["tool"] == "send_note"]
    assert [(r["origin"], r["approval_status"], r["status"]) for r in note] == [
        ("chat>code", "approved", "completed")
    ]


async def test_a_rejected_write_raises_an_error_the_code_catches(bot: Bot) -> None:
    await enable_code_mode(bot)
    bot.llm.script(run(SEND), text("Not sent."))
    bot.telegram.inject_message(OWNER, "tell alice hi")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Reject"])
    await final_reply(bot, "Not sent.")
    assert tool_results(bot.llm) == [f"could not send: send_note: {REJECTED}"]
    assert test_tools.outbox(bot.home) == []
    note = [r for r in await records(bot) if r["tool"] == "send_note"]
    assert [(r["origin"], r["approval_status"]) for r in note] == [("chat>code", "rejected")]


async def test_an_uncaught_rejection_reports_the_line_and_the_calls_made(bot: Bot) -> None:
    await enable_code_mode(bot)
    bot.llm.script(
        run(
            "api.memory_write(path='draft.md', content='hello')\n"
            "api.send_note(to='bob', text='hello')\n"
            "print('unreachable')"
        ),
        text("The owner said no."),
    )
    bot.telegram.inject_message(OWNER, "draft and send")
    message = await approval_message(bot)
    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Reject"])
    await final_reply(bot, "The owner said no.")
    (result,) = tool_results(bot.llm)
    assert result.splitlines() == [
        f"Error: line 2: ToolError: send_note: {REJECTED}",
        "Tool calls that already ran (do not repeat their side effects):",
        "  1. memory_write(path='draft.md', content='hello') → ok",
        f"  2. send_note(to='bob', text='hello') → failed: {REJECTED}",
    ]


async def test_max_tool_calls_is_the_configured_budget(bot: Bot) -> None:
    await enable_code_mode(bot, AUGURE__CODE_MODE__MAX_TOOL_CALLS="2")
    bot.llm.script(
        run("for n in range(5):\n    api.memory_write(path=f'n{n}.md', content='x')"),
        text("Stopped."),
    )
    bot.telegram.inject_message(OWNER, "write five")
    await final_reply(bot, "Stopped.")
    (result,) = tool_results(bot.llm)
    assert result.startswith(
        "Error: line 2: code_mode.max_tool_calls (2) reached: the code tried another call, "
        "memory_write, and was stopped there"
    )
    assert "  2. memory_write(path='n1.md', content='x') → ok" in result
    assert sorted(p.name for p in (bot.home / "memory").glob("n*.md")) == ["n0.md", "n1.md"]


async def test_secrets_in_tool_output_stay_redacted_inside_code(bot: Bot) -> None:
    await enable_code_mode(bot)
    bot.llm.script(run("out = api.leak()\nprint(out)\nout.count('sk-test')"), text("Done."))
    bot.telegram.inject_message(OWNER, "debug")
    await final_reply(bot, "Done.")
    (result,) = tool_results(bot.llm)
    assert "[REDACTED:OPENAI_API_KEY]" in result and result.endswith("Result: 0")
    assert "sk-test-secret-key" not in json.dumps(bot.llm.requests)

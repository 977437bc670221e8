"""The executor's pipeline through the real bot: guards, redaction, labels, concurrency."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

import pytest

from augure.channels.console import ConsoleChannel, chat
from augure.config.settings import load_config
from augure.core.lifespan import Augure
from augure.host.secrets import RedactingFilter
from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, Bot, bot_environment
from tests.e2e.helpers import is_answer, is_clock, tool_results
from tests.fakes.openai import FakeOpenAI, ToolCall, text, tool, tools
from tests.fakes.telegram import FakeTelegram

SECRET_KEY = "sk-test-secret-key"


pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, reset=test_tools.reset)


async def run_turn(bot: Bot, message: str, answer: str) -> None:
    bot.telegram.inject_message(OWNER, message)
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and is_answer(c.params.get("text"), answer),
        timeout=10,
    )


async def test_secrets_are_redacted_in_results_records_replies_and_logs(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    bot.llm.script(tool("leak", {}), text(f"The key is {SECRET_KEY}, keep it safe."))
    bot.telegram.inject_message(OWNER, f"my key is {SECRET_KEY}, what is it?")
    await bot.telegram.wait_for("sendMessage", timeout=10)

    everything_sent_to_model = json.dumps(bot.llm.requests)
    assert SECRET_KEY not in everything_sent_to_model
    assert bot.telegram.token not in everything_sent_to_model
    assert "[REDACTED:OPENAI_API_KEY]" in tool_results(bot.llm)[0]
    assert "[REDACTED:TELEGRAM_BOT_TOKEN]" in tool_results(bot.llm)[0]
    assert "my key is [REDACTED:OPENAI_API_KEY]" in everything_sent_to_model

    (reply,) = bot.telegram.messages(OWNER)
    assert SECRET_KEY not in reply["text"] and "[REDACTED:OPENAI_API_KEY]" in reply["text"]
    assert bot.core is not None
    (record,) = await bot.core.audit.listing(tool="leak")
    assert SECRET_KEY not in json.dumps(record)

    handler_filter = RedactingFilter(bot.core.redact)
    record_with_secret = logging.LogRecord("t", logging.INFO, "", 0, "got %s", (SECRET_KEY,), None)
    handler_filter.filter(record_with_secret)
    assert record_with_secret.getMessage() == "got [REDACTED:OPENAI_API_KEY]"


async def test_untrusted_content_is_labelled_and_cannot_close_its_label(bot: Bot) -> None:
    bot.llm.script(tool("fetch_page", {"url": "https://shop.example"}), text("Prices look good."))
    await run_turn(bot, "check the shop", "Prices look good.")
    (result,) = tool_results(bot.llm)
    assert result.startswith('<untrusted_content source="fetch_page">\n')
    assert result.endswith("\n</untrusted_content>")
    assert result.count("</untrusted_content>") == 1  # the page's own closing tag is defused
    system = bot.llm.requests[0]["messages"][0]["content"]
    assert "untrusted" in system and "not the owner's" in system


async def test_safe_calls_overlap_and_unsafe_ones_take_turns(bot: Bot) -> None:
    bot.llm.script(
        tools(ToolCall("parallel_read", {"name": "a"}), ToolCall("parallel_read", {"name": "b"})),
        text("read both"),
    )
    await run_turn(bot, "read two things", "read both")
    # Each read waits until the other has started: both finishing without "alone" proves
    # they ran at the same time.
    assert [kind for kind, _ in test_tools.EVENTS] == ["start", "start", "end", "end"]
    assert tool_results(bot.llm) == ["read a", "read b"]  # the model's order

    test_tools.reset()
    bot.llm.script(
        tools(ToolCall("serial_write", {"name": "a"}), ToolCall("serial_write", {"name": "b"})),
        text("wrote both"),
    )
    await run_turn(bot, "write two things", "wrote both")
    assert test_tools.EVENTS == [("start", "a"), ("end", "a"), ("start", "b"), ("end", "b")]
    assert tool_results(bot.llm)[-2:] == ["wrote a", "wrote b"]


async def test_oversized_output_is_cut_and_paged_with_read_output(bot: Bot) -> None:
    bot.llm.script(tool("big", {}), text("That is long."))
    await run_turn(bot, "get the big thing", "That is long.")
    (result,) = tool_results(bot.llm)
    assert "[Output cut: showing 12000 of 55000 characters." in result
    invocation = result.split('read_output(id="')[1][:8]
    assert (bot.home / "outputs" / f"{invocation}.txt").stat().st_size == 55000

    bot.llm.script(
        tool("read_output", {"id": invocation, "offset": 54978}),
        tool("read_output", {"id": "../../state"}),
        text("Read the end."),
    )
    await run_turn(bot, "read the end", "Read the end.")
    page = tool_results(bot.llm)[-2]
    assert page.startswith("line 04998\nline 04999\n") and "That is the end." in page
    assert tool_results(bot.llm)[-1].startswith("Error: invalid arguments for read_output")


async def test_mistaken_calls_are_pruned_after_the_model_saw_them(bot: Bot) -> None:
    bot.llm.script(
        tools(ToolCall("no_such_tool", {}), ToolCall("datetime", {"timezone": 5})),
        text("Let me answer directly."),
    )
    await run_turn(bot, "what time?", "Let me answer directly.")
    assert all(r.startswith("Error:") for r in tool_results(bot.llm))  # seen once

    bot.llm.script(text("Fine."))
    await run_turn(bot, "thanks", "Fine.")
    history = bot.llm.requests[-1]["messages"]
    assert not any(m.get("tool_calls") for m in history)
    assert not any(m["role"] == "tool" for m in history)
    assert [m.get("content") for m in history[1:] if not is_clock(m)] == [
        "what time?",
        "Let me answer directly.",
        "thanks",
    ]


async def test_deferred_tools_are_listed_by_name_and_loaded_on_demand(bot: Bot) -> None:
    bot.llm.script(
        tool("load_tools", {"names": ["deep_search"]}),
        tool("deep_search", {"query": "augure"}),
        text("Found it."),
    )
    await run_turn(bot, "search deeply", "Found it.")
    first, second, _ = bot.llm.requests
    assert "deep_search" not in {t["function"]["name"] for t in first["tools"]}
    assert "- deep_search: Search deeply." in first["messages"][0]["content"]
    assert "deep_search" in {t["function"]["name"] for t in second["tools"]}
    assert tool_results(bot.llm) == [
        "Loaded: deep_search. You can call them now.",
        "results for augure",
    ]

    await bot.restart()  # loaded tools are remembered with the conversation
    bot.llm.script(text("Still loaded."))
    await run_turn(bot, "again", "Still loaded.")
    assert "deep_search" in {t["function"]["name"] for t in bot.llm.requests[-1]["tools"]}


async def test_approval_disabled_runs_writes_without_asking(
    bot: Bot, caplog: pytest.LogCaptureFixture
) -> None:
    await bot.stop()
    bot.extra_env = {"AUGURE__APPROVAL__ENABLED": "false"}
    with caplog.at_level(logging.WARNING):
        await bot.start()
    assert "APPROVAL IS DISABLED" in caplog.text
    bot.llm.script(tool("send_note", {"to": "gina", "text": "x"}), text("Sent."))
    await run_turn(bot, "tell gina", "Sent.")
    assert test_tools.outbox(bot.home) == [{"to": "gina", "text": "x"}]


async def test_terminal_chat_asks_y_or_n(
    tmp_path: Path, telegram: FakeTelegram, llm: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in bot_environment(tmp_path, telegram, llm).items():
        monkeypatch.setenv(name, value)
    stdout = io.StringIO()
    console = ConsoleChannel(io.StringIO("send one\ny\nsend another\nmaybe\n"), stdout)
    llm.script(
        tool("send_note", {"to": "hal", "text": "first"}),
        text("Sent the first."),
        tool("send_note", {"to": "hal", "text": "second"}),
        text("Did not send the second."),
    )
    running = Augure.running(load_config(), extra_tools=test_tools.TEST_TOOLS, approvers=[console])
    async with running as door:
        await chat(door.chat, console)
    output = stdout.getvalue()
    assert "Approve send_note?" in output and '"to": "hal"' in output
    assert "Sent the first." in output and "Did not send the second." in output
    assert test_tools.outbox(tmp_path) == [{"to": "hal", "text": "first"}]
    assert [m["content"] for m in llm.requests[-1]["messages"] if m["role"] == "tool"][-1] == (
        "Tool call rejected by user."
    )

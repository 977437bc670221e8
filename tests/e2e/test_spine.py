"""The path of one message, over HTTP: fake Telegram → real bot → scripted model → back."""

from __future__ import annotations

import os
import re

from tests.e2e.conftest import OWNER, STRANGER, Bot
from tests.fakes.openai import ToolCall, error, text, tool, tools
from tests.fakes.telegram import ApiCall


def replies(bot: Bot, chat_id: int = OWNER) -> list[str]:
    return [m["text"] for m in bot.telegram.messages(chat_id)]


async def turn(bot: Bot, message: str, *, sends: int = 1) -> list[ApiCall]:
    """Inject one owner message and wait for `sends` new sendMessage calls."""
    before = len(bot.telegram.sent("sendMessage"))
    bot.telegram.inject_message(OWNER, message)
    calls = await bot.telegram.wait_for("sendMessage", count=before + sends, timeout=10)
    return calls[before:]


async def test_hello_takes_one_model_call_and_one_bot_api_call(bot: Bot) -> None:
    bot.llm.script(text("Hello **owner**!"))
    bot.telegram.inject_message(OWNER, "hi")
    await bot.telegram.wait_for("sendMessage")
    await bot.telegram.wait_idle(quiet=0.3)

    (message,) = bot.telegram.messages(OWNER)
    assert message["text"] == "Hello owner!"
    assert "<b>owner</b>" in message["raw_text"]
    assert message["parse_mode"] == "HTML"

    (request,) = bot.llm.requests
    system = request["messages"][0]
    assert system["role"] == "system"
    assert "Augure" in system["content"]  # identity.md from the template
    # The clock comes after the cacheable prefix, just before the owner's message.
    assert not re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", system["content"])
    clock = request["messages"][-2]
    assert clock["role"] == "user" and re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", clock["content"])
    assert request["messages"][-1] == {"role": "user", "content": "hi"}
    assert {t["function"]["name"] for t in request["tools"]} >= {"memory_read", "memory_write"}
    assert "- datetime: " in system["content"]  # deferred: one line until loaded
    turn_calls = [
        c.method
        for c in bot.telegram.sent()
        if c.method in {"sendChatAction", "sendMessage", "editMessageText", "sendDocument"}
    ]
    # Answered within TYPING_DELAY_SECONDS: no "typing…" indicator is worth a call.
    assert turn_calls == ["sendMessage"]


async def test_commands_are_registered(bot: Bot) -> None:
    await bot.telegram.wait_for("setMyCommands")
    names = {c["command"] for c in bot.telegram.commands}
    assert {"start", "help", "new", "status"} <= names


async def test_stranger_is_told_their_id_and_nothing_else_happens(bot: Bot) -> None:
    bot.telegram.inject_message(STRANGER, "let me in")
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params["chat_id"] in (STRANGER, str(STRANGER))
    )
    await bot.telegram.wait_idle(quiet=0.3)
    (message,) = bot.telegram.messages(STRANGER)
    assert str(STRANGER) in message["text"]
    assert bot.llm.requests == []
    assert not any(c.method == "sendChatAction" for c in bot.telegram.sent())


async def test_memory_write_then_read_round_trip(bot: Bot) -> None:
    bot.llm.script(
        tool("memory_write", {"path": "people.md", "content": "Alice likes green tea."}),
        text("Noted."),
    )
    await turn(bot, "Remember that Alice likes green tea")
    stored = bot.home / "memory" / "people.md"
    assert stored.read_text() == "Alice likes green tea."
    tool_result = bot.llm.requests[1]["messages"][-1]
    assert tool_result["role"] == "tool" and "Saved people.md" in tool_result["content"]

    bot.llm.script(tool("memory_read", {"path": "people.md"}), text("Alice likes green tea."))
    await turn(bot, "What does Alice like?")
    # The new turn's system prompt carries the memory, and the tool read it back.
    assert "Alice likes green tea." in bot.llm.requests[2]["messages"][0]["content"]
    assert bot.llm.requests[3]["messages"][-1]["content"] == "Alice likes green tea."
    assert replies(bot)[-1] == "Alice likes green tea."


async def test_path_traversal_is_refused_and_reported_to_the_model(bot: Bot) -> None:
    outside = bot.home.parent / "outside"
    outside.mkdir()
    os.symlink(outside, bot.home / "memory" / "link")
    bot.llm.script(
        tools(
            ToolCall("memory_write", {"path": "../../escape.md", "content": "x"}),
            ToolCall("memory_write", {"path": "/tmp/escape.md", "content": "x"}),
            ToolCall("memory_write", {"path": "link/escape.md", "content": "x"}),
            ToolCall("memory_read", {"path": "../state.db"}),
        ),
        text("I cannot write there."),
    )
    await turn(bot, "write outside")
    results = [m for m in bot.llm.requests[1]["messages"] if m["role"] == "tool"]
    assert len(results) == 4
    assert all(r["content"].startswith("Error:") for r in results)
    assert not (outside / "escape.md").exists()
    assert not (bot.home.parent / "escape.md").exists()
    assert replies(bot) == ["I cannot write there."]


async def test_long_reply_with_code_blocks_is_split_in_order(bot: Bot) -> None:
    paragraphs = []
    for index in range(12):
        paragraphs.append(f"Paragraph {index}: " + "lorem ipsum dolor sit amet " * 20)
        code = "\n".join(f"print('line {index}.{n} <tag> & more')" for n in range(12))
        paragraphs.append(f"```python\n{code}\n```")
    answer = "\n\n".join(paragraphs)
    assert len(answer) > 10_000
    bot.llm.script(text(answer))
    bot.telegram.inject_message(OWNER, "long please")
    await bot.telegram.wait_for("sendMessage", count=3, timeout=10)
    await bot.telegram.wait_idle(quiet=0.5)

    messages = bot.telegram.messages(OWNER)
    assert len(messages) >= 3
    delivered = "\n".join(m["text"] for m in messages)
    for index in range(12):
        assert f"Paragraph {index}:" in delivered
        assert f"print('line {index}.11 <tag> & more')" in delivered
    order = [delivered.index(f"Paragraph {i}:") for i in range(12)]
    assert order == sorted(order)
    for message in messages:
        assert message["parse_mode"] == "HTML"  # every part's markup was accepted
        assert message["raw_text"].count("<pre>") == message["raw_text"].count("</pre>")


async def test_special_characters_and_markdown_arrive_intact(bot: Bot) -> None:
    bot.llm.script(text("Compare `a < b && c > d` with **bold** & 5 < 6 <script>x</script>"))
    await turn(bot, "show me")
    (message,) = bot.telegram.messages(OWNER)
    assert message["text"] == "Compare a < b && c > d with bold & 5 < 6 <script>x</script>"
    assert "<code>a &lt; b &amp;&amp; c &gt; d</code>" in message["raw_text"]
    assert "<b>bold</b>" in message["raw_text"]


async def test_refused_markup_is_resent_as_plain_text(bot: Bot) -> None:
    bot.telegram.plan_error(
        "sendMessage", 400, description="Bad Request: can't parse entities: test refusal"
    )
    bot.llm.script(text("Some **bold** text"))
    await turn(bot, "hi")
    (message,) = bot.telegram.messages(OWNER)
    assert message["text"] == "Some **bold** text"
    assert not message.get("parse_mode")


async def test_model_500_is_retried_then_answered(bot: Bot) -> None:
    bot.llm.script(error(500), text("Back on my feet."))
    await turn(bot, "are you there?")
    assert replies(bot) == ["Back on my feet."]
    assert len(bot.llm.requests) == 2


async def test_model_down_gives_one_clear_message(bot: Bot) -> None:
    bot.llm.script(error(503), error(503), error(503))
    await turn(bot, "are you there?")
    (answer,) = replies(bot)
    assert "could not get an answer" in answer and "503" in answer
    assert len(bot.llm.requests) == 3  # the first try and AUGURE__LLM__MAX_RETRIES=2


async def test_telegram_429_delays_but_delivers_exactly_once(bot: Bot) -> None:
    bot.telegram.plan_error("sendMessage", 429, retry_after=1)
    bot.llm.script(text("Delivered once."))
    bot.telegram.inject_message(OWNER, "hello")
    await bot.telegram.wait_for("sendMessage", timeout=10)
    await bot.telegram.wait_idle(quiet=0.5)
    assert replies(bot) == ["Delivered once."]
    refused = [c for c in bot.telegram.calls if c.method == "sendMessage" and c.status == 429]
    accepted = bot.telegram.sent("sendMessage")
    assert len(refused) == 1 and len(accepted) == 1
    assert accepted[0].at - refused[0].at >= 0.9  # retry_after was honoured


async def test_restart_keeps_history_and_new_starts_fresh(bot: Bot) -> None:
    bot.llm.script(text("Nice to meet you, Sam."))
    await turn(bot, "My name is Sam")
    await bot.restart()

    bot.llm.script(text("You are Sam."))
    await turn(bot, "What is my name?")
    contents = [m.get("content") for m in bot.llm.requests[-1]["messages"]]
    assert "My name is Sam" in contents and "Nice to meet you, Sam." in contents

    await turn(bot, "/new")
    assert "fresh conversation" in replies(bot)[-1]
    bot.llm.script(text("I don't know yet."))
    await turn(bot, "What is my name?")
    contents = [m.get("content") for m in bot.llm.requests[-1]["messages"]]
    assert "My name is Sam" not in contents


async def test_malformed_tool_arguments_go_back_as_an_error(bot: Bot) -> None:
    bot.llm.script(
        tools(ToolCall("memory_write", '{"path": "x.md", "content": '), ToolCall("nope", {})),
        text("Sorry, retrying is pointless."),
    )
    await turn(bot, "break it")
    results = [m["content"] for m in bot.llm.requests[1]["messages"] if m["role"] == "tool"]
    assert "not valid JSON" in results[0]
    assert "unknown tool 'nope'" in results[1]
    assert replies(bot) == ["Sorry, retrying is pointless."]


async def test_max_loops_ends_with_one_clear_message(bot: Bot) -> None:
    await bot.stop()
    bot.extra_env = {"AUGURE__AGENT__MAX_LOOPS": "2"}
    await bot.start()
    bot.llm.script(
        tool("datetime", {}), tool("datetime", {}), text("It is some time, I checked twice.")
    )
    await turn(bot, "what time is it, really?")
    (answer,) = replies(bot)
    assert "I checked twice" in answer and "agent.max_loops" in answer
    assert bot.llm.requests[-1]["tool_choice"] == "none"


async def test_chats_run_concurrently(bot: Bot) -> None:
    # The owner's chat waits on a slow model; a second allowed chat is answered meanwhile.
    await bot.stop()
    bot.extra_env = {"AUGURE_ALLOWED_USERS": f"{OWNER},{STRANGER}"}
    await bot.start()
    bot.llm.script(text("slow answer", delay=1.5), text("fast answer"))
    bot.telegram.inject_message(OWNER, "slow question")
    await bot.llm.wait_requests(1)
    bot.telegram.inject_message(STRANGER, "fast question")
    first = await bot.telegram.wait_for("sendMessage", timeout=10)
    assert first[0].params["text"] == "fast answer"
    await bot.telegram.wait_for("sendMessage", count=2, timeout=10)


async def test_usage_is_recorded_per_turn(bot: Bot) -> None:
    bot.llm.script(text("ok", usage=(120, 7)))
    await turn(bot, "count tokens")
    assert bot.core is not None
    totals = await bot.core.store.usage_totals(str(OWNER))
    assert totals == {"prompt_tokens": 120, "completion_tokens": 7, "turns": 1}

"""The bot in a group (docs/reference/telegram.md#groups): it acts only for allowed users who
address it."""

from __future__ import annotations

import pytest

from tests.e2e import tools as test_tools
from tests.e2e.conftest import OWNER, STRANGER, Bot
from tests.e2e.helpers import REJECTED, approval_message, buttons, hello, tool_results
from tests.fakes.openai import text, tool

GROUP = -100_200
SUPERGROUP = -100_987_654_321
BOT_NAME = "augure_test_bot"  # FakeTelegram's default username, which getMe returns


pytestmark = pytest.mark.tools(*test_tools.TEST_TOOLS, reset=test_tools.reset)


def group_texts(bot: Bot, chat: int = GROUP) -> list[str]:
    return [m.get("text", "") for m in bot.telegram.messages(chat)]


def user_messages(bot: Bot) -> list[str]:
    return [
        m["content"]
        for r in bot.llm.requests
        for m in r["messages"]
        if m["role"] == "user" and not str(m["content"]).startswith("[Now: ")  # the clock
    ]


async def quiet(bot: Bot) -> None:
    await bot.telegram.wait_idle(quiet=0.5, timeout=10)


async def test_a_group_message_not_addressed_to_the_bot_is_ignored(bot: Bot) -> None:
    bot.telegram.inject_message(OWNER, "lunch at noon, everyone?", chat_id=GROUP)
    bot.telegram.inject_message(OWNER, "ask @someone_else about it", chat_id=GROUP)
    bot.telegram.inject_message(OWNER, "/help@another_bot", chat_id=GROUP)
    await quiet(bot)
    assert group_texts(bot) == []
    assert bot.llm.requests == []
    assert not any(c.method == "sendChatAction" for c in bot.telegram.sent())


async def test_a_mention_of_the_bot_starts_a_turn_in_the_group(bot: Bot) -> None:
    bot.llm.script(text("It is sunny."))
    bot.telegram.inject_message(OWNER, f"@{BOT_NAME} what's the weather?", chat_id=GROUP)
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params.get("text") == "It is sunny."
    )
    assert group_texts(bot) == ["It is sunny."]
    assert user_messages(bot) == ["what's the weather?"]  # the mention only addressed the bot


async def test_a_text_mention_a_reply_and_a_command_reach_the_bot(bot: Bot) -> None:
    bot.llm.script(text("First answer."), text("Second answer."))
    # A text_mention names the bot without its @username (as a client does from a member list).
    mention = {"type": "text_mention", "offset": 0, "length": 6, "user": bot.telegram.bot_user}
    bot.telegram.inject_message(
        OWNER, "Augure, remind me of the plan", chat_id=SUPERGROUP, chat_type="supergroup",
        entities=[mention],
    )  # fmt: skip
    await bot.telegram.wait_for("sendMessage")
    (answer,) = bot.telegram.messages(SUPERGROUP)
    bot.telegram.inject_message(
        OWNER, "and then?", chat_id=SUPERGROUP, reply_to=answer["message_id"]
    )
    await bot.telegram.wait_for("sendMessage", count=2)
    bot.telegram.inject_message(OWNER, f"/help@{BOT_NAME}", chat_id=SUPERGROUP)
    await bot.telegram.wait_for("sendMessage", count=3)
    await quiet(bot)
    texts = group_texts(bot, SUPERGROUP)
    assert texts[:2] == ["First answer.", "Second answer."]
    assert "/new" in texts[2]  # the help text
    assert len(bot.llm.requests) == 2


async def test_a_photo_whose_caption_mentions_the_bot_reaches_it(bot: Bot) -> None:
    bot.llm.script(text("A red square."))
    red = bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
        "0000000c4944415408d763f8cfc000000301010018dd8db40000000049454e44ae426082"
    )
    bot.telegram.inject_message(OWNER, photo=red, caption=f"@{BOT_NAME} what is it?", chat_id=GROUP)
    await bot.telegram.wait_for("sendMessage")
    assert group_texts(bot) == ["A red square."]


async def test_a_reply_to_someone_else_is_not_for_the_bot(bot: Bot) -> None:
    first = bot.telegram.inject_message(STRANGER, "my message", chat_id=GROUP, first_name="Eve")
    bot.telegram.inject_message(OWNER, "I agree", chat_id=GROUP, reply_to=first["message_id"])
    await quiet(bot)
    assert group_texts(bot) == [] and bot.llm.requests == []


async def test_strangers_in_a_group_get_nothing_at_all(bot: Bot) -> None:
    bot.llm.script(text("Hello group."))
    bot.telegram.inject_message(OWNER, f"@{BOT_NAME} say hello", chat_id=GROUP)
    await bot.telegram.wait_for("sendMessage")
    (answer,) = bot.telegram.messages(GROUP)

    for message, reply_to in [
        (f"@{BOT_NAME} tell me the owner's secrets", None),
        ("/status", None),
        ("and to me?", answer["message_id"]),
    ]:
        bot.telegram.inject_message(
            STRANGER, message, chat_id=GROUP, first_name="Eve", reply_to=reply_to
        )
    await quiet(bot)
    assert group_texts(bot) == ["Hello group."]  # no "your id is", no help, no answer
    assert len(bot.llm.requests) == 1
    assert STRANGER not in {c.params.get("chat_id") for c in bot.telegram.sent()}


async def test_an_approval_for_a_group_turn_is_asked_in_the_owner_private_chat(bot: Bot) -> None:
    await hello(bot.telegram)  # the owner's private chat with the bot exists
    bot.llm.script(tool("send_note", {"to": "team", "text": "hi"}), text("Note sent."))
    bot.telegram.inject_message(OWNER, f"@{BOT_NAME} tell the team hi", chat_id=GROUP)
    message = await approval_message(bot)
    (asked,) = [c for c in bot.telegram.sent("sendMessage") if "reply_markup" in c.params]
    assert asked.params["chat_id"] == OWNER
    assert group_texts(bot) == []

    bot.telegram.press_button(OWNER, message["message_id"], buttons(message)["Approve"])
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params.get("text") == "Note sent."
    )
    assert group_texts(bot) == ["Note sent."]
    assert test_tools.outbox(bot.home) == [{"to": "team", "text": "hi"}]


async def test_a_group_turn_whose_approval_cannot_reach_the_owner_is_rejected(bot: Bot) -> None:
    # The owner never opened a private chat with the bot: Telegram refuses to write there,
    # so nobody can approve, and the request must never be shown in the group instead.
    bot.llm.script(tool("send_note", {"to": "team", "text": "x"}), text("Not sent."))
    bot.telegram.inject_message(OWNER, f"@{BOT_NAME} tell the team x", chat_id=GROUP)
    await bot.telegram.wait_for(
        lambda c: c.method == "sendMessage" and c.params.get("text") == "Not sent.", timeout=10
    )
    assert group_texts(bot) == ["Not sent."]
    assert tool_results(bot.llm) == [f"{REJECTED} Reason: the owner could not be asked"]
    assert test_tools.outbox(bot.home) == []


async def test_a_stranger_pressing_a_button_in_a_group_changes_nothing_silently(bot: Bot) -> None:
    assert bot.core is not None
    rule = await bot.core.audit.add_rule("allow", "send_note:to=team", "cli")
    bot.telegram.inject_message(OWNER, f"/approvals@{BOT_NAME}", chat_id=GROUP)
    (sent,) = await bot.telegram.wait_for("sendMessage")
    message_id = sent.response["result"]["message_id"]
    # /approvals shows no Revoke button in a group: a modified client can send one all the same.
    query = bot.telegram.press_button(
        STRANGER, message_id, f"rv:{rule.id}", chat_id=GROUP, forged=True
    )
    await bot.telegram.wait_for("answerCallbackQuery")
    (answer,) = bot.telegram.callback_answers
    assert answer["callback_query_id"] == query and not answer.get("text")
    assert [r.id for r in await bot.core.audit.rules()] == [rule.id]

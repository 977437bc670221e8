"""The fake Telegram's link previews and forwarded messages, checked against the real client:
it records the address Telegram would fetch for a preview, refuses malformed preview options
as Telegram does, and shapes `forward_origin` so python-telegram-bot parses each kind."""

from __future__ import annotations

import aiohttp
import pytest
from telegram import (
    Bot,
    LinkPreviewOptions,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
)

from tests.fakes import telegram_messages
from tests.fakes.telegram import FakeTelegram
from tests.unit.test_fake_telegram import CHAT, bot, http, raw, tg

__all__ = ["bot", "http", "tg"]  # the fixtures, imported to be used here


async def test_a_message_with_a_link_is_previewed_unless_it_asks_for_none(
    bot: Bot, tg: FakeTelegram
) -> None:
    await bot.send_message(CHAT, "see https://docs.example/start and https://other.example")
    await bot.send_message(CHAT, '<a href="https://hidden.example/?d=1">.</a>', parse_mode="HTML")
    quiet = LinkPreviewOptions(is_disabled=True)
    await bot.send_message(CHAT, "see https://quiet.example", link_preview_options=quiet)
    sent = await bot.send_message(CHAT, "plain words")
    await bot.edit_message_text("now https://edited.example", chat_id=CHAT, message_id=sent.id)
    assert [p.url for p in tg.previews] == [
        "https://docs.example/start",
        "https://hidden.example/?d=1",
        "https://edited.example",
    ]
    stored = [m for m in tg.messages(CHAT) if "quiet" in m["text"]]
    assert stored[0]["link_preview_options"] == {"is_disabled": True}


async def test_the_older_flag_turns_previews_off_too(bot: Bot, tg: FakeTelegram) -> None:
    await bot.send_message(CHAT, "see https://docs.example", disable_web_page_preview=True)
    assert tg.previews == []


@pytest.mark.parametrize("options", ["yes", {"is_disabled": "true"}, {"url": 5}, [True]])
async def test_malformed_preview_options_are_refused(
    tg: FakeTelegram, http: aiohttp.ClientSession, options: object
) -> None:
    sent = {"chat_id": CHAT, "text": "see https://docs.example", "link_preview_options": options}
    status, body = await raw(http, tg, "sendMessage", json=sent)
    assert status == 400 and "link preview options" in body["description"]
    assert tg.previews == []


@pytest.mark.parametrize(
    ("kind", "parsed"),
    [
        ("user", MessageOriginUser),
        ("hidden_user", MessageOriginHiddenUser),
        ("chat", MessageOriginChat),
        ("channel", MessageOriginChannel),
    ],
)
async def test_forwarded_messages_carry_their_origin(
    bot: Bot, tg: FakeTelegram, kind: str, parsed: type
) -> None:
    tg.inject_message(CHAT, "dinner at 8?", content=telegram_messages.forwarded(kind, "Alice"))
    update = (await bot.get_updates())[-1]
    assert update.message is not None and update.message.text == "dinner at 8?"
    origin = update.message.forward_origin
    assert isinstance(origin, parsed)

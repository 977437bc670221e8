"""Message kinds beyond text, photos, documents and voice
(docs/reference/telegram.md#message-kinds)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import OWNER, Bot
from tests.fakes import telegram_messages as kinds
from tests.fakes.openai import text
from tests.fakes.telegram import JSON

CAN_TAKE = ("text", "photos", "documents", "voice notes", "locations", "contacts", "stickers")


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (kinds.location(48.8566, 2.3522), "[location 48.8566, 2.3522]"),
        (
            kinds.venue("Louvre", "Rue de Rivoli, Paris", 48.8606, 2.3376),
            "[venue Louvre, Rue de Rivoli, Paris (48.8606, 2.3376)]",
        ),
        (kinds.contact("+33612345678", "Marie", "Curie"), "[contact Marie Curie +33612345678]"),
        (kinds.sticker("😀"), "[sticker 😀]"),
    ],
    ids=["location", "venue", "contact", "sticker"],
)
async def test_a_kind_reaches_the_model_as_one_short_line(
    bot: Bot, content: JSON, line: str
) -> None:
    bot.llm.script(text("Got it."))
    bot.telegram.inject_message(OWNER, content=content)
    await bot.telegram.wait_for("sendMessage")
    (request,) = bot.llm.requests
    assert request["messages"][-1] == {"role": "user", "content": line}
    assert [m["text"] for m in bot.telegram.messages(OWNER)] == ["Got it."]


@pytest.mark.parametrize("kind", ["video", "video_note", "animation", "poll", "dice", "game"])
async def test_other_kinds_get_one_line_saying_what_the_bot_takes(bot: Bot, kind: str) -> None:
    bot.telegram.inject_message(OWNER, content=kinds.unsupported(kind))
    await bot.telegram.wait_for("sendMessage")
    await bot.telegram.wait_idle(quiet=0.3)
    (reply,) = [m["text"] for m in bot.telegram.messages(OWNER)]
    assert "\n" not in reply and all(word in reply for word in CAN_TAKE)
    assert bot.llm.requests == []
    assert not (bot.home / "inbox").exists()  # an animation's document copy is not saved

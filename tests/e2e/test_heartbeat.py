"""The heartbeat through the real bot, the Telegram fake and the scripted model."""

from __future__ import annotations

import pytest

from augure.scheduler.heartbeat import OK, Beat
from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import delivered, hello, is_clock
from tests.fakes.openai import text

CHECKLIST = "- Is the front door locked?"


@pytest.fixture
def bot_env() -> dict[str, str]:
    # Beats 0.6 s apart, all day: several intervals pass within a test.
    return {
        "AUGURE__HEARTBEAT__ENABLED": "true",
        "AUGURE__HEARTBEAT__INTERVAL_MINUTES": "0.01",
        "AUGURE__HEARTBEAT__ACTIVE_HOURS": "00:00-24:00",
    }


def owner_texts(bot: Bot) -> list[str]:
    return [m.get("text", "") for m in bot.telegram.messages(OWNER)]


async def test_an_empty_checklist_makes_no_model_call_over_several_intervals(bot: Bot) -> None:
    assert bot.core is not None
    checklist = bot.core.config.memory_dir / "heartbeat.md"
    assert not checklist.exists()
    beats = await bot.core.heartbeat.wait_for_beats(2)
    checklist.write_text("\n  \n", encoding="utf-8")  # empty is the same as missing
    beats = await bot.core.heartbeat.wait_for_beats(len(beats) + 3)
    assert set(beats) == {Beat.NOTHING}
    assert bot.llm.requests == []
    assert bot.telegram.sent("sendMessage") == []


async def test_heartbeat_ok_sends_nothing(bot: Bot) -> None:
    assert bot.core is not None
    await hello(bot.telegram)
    before = owner_texts(bot)
    bot.llm.script(text(f"{OK} the door is locked"), text(OK))
    (bot.core.config.memory_dir / "heartbeat.md").write_text(CHECKLIST, encoding="utf-8")
    heartbeat = bot.core.heartbeat
    start = len(heartbeat.beats)
    while len([b for b in heartbeat.beats[start:] if b is not Beat.NOTHING]) < 2:
        await heartbeat.wait_for_beats(len(heartbeat.beats) + 1)
    await heartbeat.stop()
    assert [b for b in heartbeat.beats[start:] if b is not Beat.NOTHING] == [Beat.OK] * 2
    assert len(bot.llm.requests) == 2
    asked = bot.llm.requests[0]["messages"]
    assert CHECKLIST in asked[-1]["content"] and asked[0]["role"] == "system"
    await bot.telegram.wait_idle(quiet=0.3, timeout=10)
    assert owner_texts(bot) == before


async def test_a_finding_is_sent_and_a_busy_chat_is_left_alone(bot: Bot) -> None:
    assert bot.core is not None
    await hello(bot.telegram)
    heartbeat = bot.core.heartbeat
    await heartbeat.stop()  # beats by hand from here
    (bot.core.config.memory_dir / "heartbeat.md").write_text(CHECKLIST, encoding="utf-8")
    async with bot.core.agent.lock(str(OWNER)):  # a turn of the owner's chat is running
        assert await heartbeat.beat() is Beat.BUSY
    assert bot.llm.requests == []

    bot.llm.script(text("The front door is unlocked."))
    assert await heartbeat.beat() is Beat.SENT
    await delivered(bot.telegram, "The front door is unlocked.")
    # Its own conversation: the owner's history does not fill up with checklists.
    bot.llm.script(text("Hello."))
    bot.telegram.inject_message(OWNER, "hi")
    await delivered(bot.telegram, "Hello.")
    history = [
        m for m in bot.llm.requests[-1]["messages"] if m["role"] != "system" and not is_clock(m)
    ]
    assert history == [{"role": "user", "content": "hi"}]

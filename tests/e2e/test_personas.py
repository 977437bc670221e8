"""Personas (docs/reference/personas.md#personas) through the real bot: /persona's buttons, per
chat, across restarts."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import OWNER, Bot
from tests.e2e.helpers import buttons, delivered, final_reply
from tests.e2e.test_groups import BOT_NAME, GROUP
from tests.fakes.openai import text

PIRATE = "Speak like a pirate, arr."
BUTLER = "Answer as a formal butler would."


def write_personas(home: Path) -> None:
    folder = home / "personas"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pirate.md").write_text(f"{PIRATE}\n", encoding="utf-8")
    (folder / "butler.md").write_text(BUTLER, encoding="utf-8")


def system_prompt(bot: Bot, request: int = -1) -> str:
    first = bot.llm.requests[request]["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


async def ask(bot: Bot, words: str, chat: int = OWNER) -> str:
    bot.llm.script(text(f"re: {words}"))
    prefix = f"@{BOT_NAME} " if chat < 0 else ""
    bot.telegram.inject_message(OWNER, prefix + words, chat_id=chat)
    await final_reply(bot, f"re: {words}")
    return system_prompt(bot)


async def test_persona_buttons_switch_this_chat_only_and_survive_a_restart(bot: Bot) -> None:
    write_personas(bot.home)
    group_before = await ask(bot, "hello group", GROUP)
    private_before = await ask(bot, "hello")
    assert PIRATE not in private_before and BUTLER not in private_before

    bot.telegram.inject_message(OWNER, "/persona")
    await delivered(bot.telegram, "Choose one")
    menu = bot.telegram.messages(OWNER)[-1]
    assert set(buttons(menu)) == {"butler", "pirate", "No persona"}
    bot.telegram.press_button(OWNER, menu["message_id"], buttons(menu)["pirate"])
    await bot.telegram.wait_for("editMessageText")

    pirate = await ask(bot, "where is the treasure?")
    assert PIRATE in pirate and BUTLER not in pirate
    group_after = await ask(bot, "still plain?", GROUP)
    assert group_after == group_before  # the other chat's prompt is byte for byte the same

    await bot.restart()
    assert PIRATE in await ask(bot, "after the restart")

    bot.telegram.inject_message(OWNER, "/persona butler")
    await delivered(bot.telegram, "Persona for this chat: butler.")
    butler = await ask(bot, "tea?")
    assert BUTLER in butler and PIRATE not in butler

    bot.telegram.inject_message(OWNER, "/persona nobody")
    await delivered(bot.telegram, "There is no persona 'nobody'; available: butler, pirate.")


async def test_persona_without_files_says_where_they_go(bot: Bot) -> None:
    bot.telegram.inject_message(OWNER, "/persona")
    await delivered(bot.telegram, "No personas yet")

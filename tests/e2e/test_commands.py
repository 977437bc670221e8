"""The table of commands is what the running bot offers: its menu, its /help and a handler for
every entry (docs/reference/telegram.md#commands). The docs' lists are held to the same table
by tests/unit/test_telegram_commands.py."""

from __future__ import annotations

import re

from augure.channels.telegram.commands import COMMANDS, GREETING, help_text
from tests.e2e.conftest import OWNER, Bot


async def reply(bot: Bot, text: str) -> str:
    """The one message the bot sends the owner for `text`."""
    count = len(bot.telegram.sent("sendMessage")) + 1
    bot.telegram.inject_message(OWNER, text)
    answer = (await bot.telegram.wait_for("sendMessage", count=count, timeout=10))[-1].params
    assert answer["chat_id"] in (OWNER, str(OWNER))
    return str(answer["text"])


async def test_the_menu_is_the_table_in_its_order(bot: Bot) -> None:
    await bot.telegram.wait_for("setMyCommands")
    menu = [(c["command"], c["description"]) for c in bot.telegram.commands]
    assert menu == [(command.name, command.menu) for command in COMMANDS]


async def test_help_names_every_command_of_the_table(bot: Bot) -> None:
    said = await reply(bot, "/help")
    assert said == help_text()
    named = set(re.findall(r"/([a-z]+)", said))
    # /start is the greeting that leads into this very text.
    assert named == {command.name for command in COMMANDS} - {"start"}
    assert await reply(bot, "/start") == GREETING + help_text()
    assert await reply(bot, "/no_such_command") == help_text()


async def test_every_command_of_the_table_has_its_own_answer(bot: Bot) -> None:
    """A command the bot did not register would be answered by /help's text instead."""
    for command in COMMANDS:
        if command.name in ("help", "start"):
            continue
        said = await reply(bot, f"/{command.name}")
        assert said != help_text(), f"/{command.name} has no handler"

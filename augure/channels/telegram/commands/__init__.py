"""The bot's commands, in the order of Telegram's menu (docs/reference/telegram.md#commands).

A command is a `Command` in the module of its family here (its name, its menu line, its line in
/help, its handler, the buttons its messages carry); adding one is adding it to this table. The
bot registers a handler for each, sets the menu from it and builds /help from it, so the three
cannot differ; tests/unit/test_telegram_commands.py holds the docs to it too.
"""

from __future__ import annotations

from augure.channels.telegram.commands import (
    approvals,
    conversation,
    dashboard,
    jobs,
    personas,
    skills,
    status,
    tasks,
    usage,
)
from augure.channels.telegram.commands.command import Asked, Command

GREETING = "Hello! I am Augure, your assistant.\n\n"
INTRODUCTION = "I am your personal assistant. Write to me in plain language.\n\n"
CLOSING = """

Send photos, documents, voice notes, locations, contacts and stickers too.
In a group, mention me or reply to me.
/help — this message

Anything that acts outside (sending, writing, running code) waits for your Approve."""


async def on_start(asked: Asked) -> None:
    await asked.say(GREETING + help_text())


async def on_help(asked: Asked) -> None:
    await asked.say(help_text())


START = Command(
    "start", menu="Introduce the assistant", help=None, handler=on_start, owner_only=False
)
# Also the answer to a command the bot does not know.
HELP = Command(
    "help",
    menu="What I can do and the commands",
    help=None,  # told in the closing lines
    handler=on_help,
    owner_only=False,
)

COMMANDS: tuple[Command, ...] = (
    START,
    HELP,
    conversation.NEW,
    status.STATUS,
    approvals.APPROVALS,
    usage.USAGE,
    status.MEMORY_FILES,
    jobs.JOBS,
    tasks.TASKS,
    jobs.PAUSE,
    jobs.RESUME,
    skills.SKILLS,
    personas.PERSONA,
    dashboard.DASHBOARD,
)


def help_text() -> str:
    """/help: each command's line, in the menu's order."""
    lines = [command.help for command in COMMANDS if command.help is not None]
    return INTRODUCTION + "\n".join(lines) + CLOSING

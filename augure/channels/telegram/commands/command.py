"""What a command module declares (a `Command`, the `Button`s its messages carry) and what its
handlers are given (`Asked`). The table of every command is `augure.channels.telegram.commands`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from telegram import CallbackQuery, Update
from telegram.constants import ChatType
from telegram.ext import ContextTypes

from augure.channels.telegram.delivery import Delivery
from augure.core.door.doors import Door

# What an owner command answers outside the owner's private chat: in a group everybody there
# would read the answer, and another allowed user is not the owner (docs/security.md).
OWNER_ONLY = "I answer /{command} only in our private chat, and only for my owner."


@dataclass(frozen=True)
class Asked:
    """A command or a button press, with what its handler needs: the update, the core's door
    and the way out to the chat. Handlers reach the core through `door` only."""

    update: Update
    context: ContextTypes.DEFAULT_TYPE
    door: Door
    delivery: Delivery

    @property
    def chat_id(self) -> int:
        chat = self.update.effective_chat
        assert chat is not None, "commands and presses come from a chat"
        return chat.id

    @property
    def private(self) -> bool:
        chat = self.update.effective_chat
        return chat is not None and chat.type == ChatType.PRIVATE

    @property
    def args(self) -> list[str]:
        """The words after the command (`/persona pirate`: `["pirate"]`)."""
        return list(self.context.args or [])

    @property
    def query(self) -> CallbackQuery:
        """The press of a button: who pressed it, in which message."""
        query = self.update.callback_query
        assert query is not None, "a button's handler is given a press"
        return query

    @property
    def data(self) -> str:
        """The pressed button's callback data."""
        data = self.query.data
        assert data is not None, "Augure's buttons all carry callback data"
        return data

    def by_owner(self, user_id: int) -> bool:
        return str(user_id) == self.door.config.owner_chat

    async def say(self, text: str) -> None:
        await self.delivery.send_text(self.chat_id, text)


Handler = Callable[[Asked], Awaitable[None]]


@dataclass(frozen=True)
class Button:
    """The presses on the inline buttons whose callback data matches `pattern`."""

    pattern: str
    handler: Handler


@dataclass(frozen=True)
class Command:
    """One command: `/name` runs `handler`. `menu` is its line in Telegram's command menu;
    `help` its line in /help (None: another command's line tells it); `owner_only`: answered
    in the owner's private chat only, elsewhere by one line saying so (docs/security.md);
    `buttons`: the presses on the buttons its messages carry."""

    name: str
    menu: str
    help: str | None
    handler: Handler
    owner_only: bool = True
    buttons: tuple[Button, ...] = ()

    async def run(self, asked: Asked) -> None:
        # An owner's command shows the owner's data or changes the owner's set-up.
        if self.owner_only and not in_owners_private_chat(
            asked.update, asked.door.config.owner_chat
        ):
            await asked.say(OWNER_ONLY.format(command=self.name))
            return
        await self.handler(asked)


def in_owners_private_chat(update: Update, owner_chat: str | None) -> bool:
    """Sent by the owner in their private chat with the bot (whose id is the owner's)."""
    chat, user = update.effective_chat, update.effective_user
    return (
        owner_chat is not None
        and chat is not None
        and chat.type == ChatType.PRIVATE
        and str(chat.id) == owner_chat
        and user is not None
        and str(user.id) == owner_chat
    )

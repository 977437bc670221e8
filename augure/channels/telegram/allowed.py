"""Who may use the bot: the first handler every update meets (docs/reference/telegram.md)."""

from __future__ import annotations

import logging

from telegram import Update
from telegram.constants import ChatType
from telegram.ext import ApplicationHandlerStop, ContextTypes

from augure.channels.telegram.delivery import Delivery
from augure.channels.telegram.inbound import addressed, in_group
from augure.host.home import HomeLock

log = logging.getLogger(__name__)

NOT_ALLOWED = "You are not allowed to use this bot."


class AllowedUsers:
    """Lets through the allowed users' updates (in a group, only those addressed to the bot);
    stops every other, telling a stranger in a private chat their own id and nothing else."""

    def __init__(
        self, allowed: set[int], delivery: Delivery, home_lock: HomeLock | None = None
    ) -> None:
        self.allowed = allowed
        self.delivery = delivery
        self.home_lock = home_lock

    async def __call__(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        if self.home_lock is not None:
            self.home_lock.note_update()
        user = update.effective_user
        allowed = user is not None and user.id in self.allowed
        message = update.message
        if in_group(message):
            # In a group the bot stays silent for everyone else, and for allowed users
            # unless they address it (docs/reference/telegram.md#groups).
            assert message is not None
            if allowed and addressed(message, context.bot.bot):
                return
            raise ApplicationHandlerStop
        if allowed:
            return
        if update.callback_query is not None:
            alert = None if in_group(update.callback_query.message) else NOT_ALLOWED
            await update.callback_query.answer(alert, show_alert=alert is not None)
        elif (
            update.effective_chat is not None
            and update.effective_chat.type == ChatType.PRIVATE
            and user
        ):
            await self.delivery.send_text(
                update.effective_chat.id,
                f"This is a private assistant. Your Telegram user id is {user.id}.",
            )
            log.info("refused a message from user %s", user.id)
        raise ApplicationHandlerStop

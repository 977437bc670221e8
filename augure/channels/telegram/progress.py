"""Long calls in a Telegram chat: the status board's messages, sent and edited as plain text
through the channel's delivery (flood control honoured, per-chat order kept)."""

from __future__ import annotations

from functools import partial

from telegram.error import BadRequest

from augure.channels.telegram.delivery import Delivery
from augure.common.progress import INTERVAL_SECONDS, THRESHOLD_SECONDS, StatusBoard


class TelegramStatus:
    """The board's surface in Telegram. Plain text: a tool's output line is not markup."""

    def __init__(self, delivery: Delivery) -> None:
        self.delivery = delivery

    def accepts(self, chat_id: str) -> bool:
        # Telegram chats only: a job's or the terminal's calls have no chat to show them in.
        return chat_id.lstrip("-").isdigit()

    async def post(self, chat_id: str, text: str) -> int:
        message = await self.delivery.send_text(int(chat_id), text)
        return message.message_id

    async def replace(self, chat_id: str, message_id: int, text: str) -> None:
        bot = self.delivery.bot
        edit = partial(bot.edit_message_text, text, chat_id=int(chat_id), message_id=message_id)
        try:
            await self.delivery.call(int(chat_id), edit)
        except BadRequest as exc:
            if "not modified" not in str(exc).lower():  # already showing exactly this
                raise


def telegram_board(
    delivery: Delivery,
    threshold: float = THRESHOLD_SECONDS,
    interval: float = INTERVAL_SECONDS,
) -> StatusBoard:
    return StatusBoard(TelegramStatus(delivery), threshold, interval)

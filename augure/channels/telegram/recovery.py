"""The Telegram side of crash recovery: notices as messages, cut-off previews edited in place."""

from __future__ import annotations

from typing import TYPE_CHECKING

from augure.channels.telegram.streaming import StreamingReply

if TYPE_CHECKING:
    from augure.channels.telegram.bot import TelegramChannel


class RecoveryNotices:
    def __init__(self, channel: TelegramChannel) -> None:
        self.channel = channel

    async def send(self, chat_id: str, markdown: str) -> None:
        await self.channel.notify(chat_id, markdown)

    async def finalize(self, chat_id: str, message_id: int, markdown: str) -> None:
        reply = StreamingReply(self.channel.delivery, int(chat_id), message_id=message_id)
        await reply.finish(markdown)

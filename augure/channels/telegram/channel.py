"""Telegram's side of the channel contract: what the core sends, edits, asks and delivers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from telegram.ext import Application

from augure.channels.base import Channel
from augure.channels.telegram.approvals import TelegramApprover
from augure.channels.telegram.delivery import Delivery
from augure.channels.telegram.media import send_artifacts
from augure.channels.telegram.progress import telegram_board
from augure.channels.telegram.showing import Showing
from augure.channels.telegram.streaming import StreamingReply
from augure.common.ports import NOT_KNOWN, ApprovalRequest, Attachment, Decide, Sources, Verdict
from augure.config.settings import Config


class TelegramChannel:
    name = "telegram"

    def __init__(self, config: Config, application: Application[Any, Any, Any, Any, Any, Any]):
        self.config = config
        self.application = application
        self.delivery = Delivery(application.bot, Showing.of(config.telegram))
        self._approver = TelegramApprover(config, self.delivery)
        self.progress = telegram_board(self.delivery)  # long calls' status messages

    def chat(self, chat_id: str) -> int:
        """A Telegram chat id, or the owner's for a chat of another channel (the terminal)."""
        target = chat_id if chat_id.lstrip("-").isdigit() else self.config.owner_chat
        if target is None:
            raise LookupError("no chat to deliver to")
        return int(target)

    async def send(self, chat_id: str, markdown: str, sources: Sources = NOT_KNOWN) -> None:
        await self.delivery.send_markdown(self.chat(chat_id), markdown, sources)

    async def edit(self, chat_id: str, message_id: int, markdown: str) -> None:
        # A text longer than one message keeps the first part in place and sends the rest.
        reply = StreamingReply(self.delivery, self.chat(chat_id), message_id=message_id)
        await reply.finish(markdown)

    async def deliver(self, chat_id: str, artifact: Attachment) -> None:
        await send_artifacts(self.delivery, self.chat(chat_id), [artifact])

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any]:
        return await self._approver.present(request, decide)

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        await self._approver.conclude(ref, tool, verdict)


if TYPE_CHECKING:  # mypy proves the contract is met; nothing runs
    _conforms: type[Channel] = TelegramChannel

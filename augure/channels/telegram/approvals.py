"""Approval requests as Telegram messages with inline buttons. The presses that decide them are
read by the /approvals command's module (augure.channels.telegram.commands.approvals)."""

from __future__ import annotations

import html
import logging
from functools import partial
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import ParseMode

from augure.approval.shown import arguments_text, visible
from augure.channels.telegram.delivery import Delivery
from augure.common.ports import ApprovalRequest, Decide, Verdict
from augure.config.settings import Config

log = logging.getLogger(__name__)

# Arguments longer than this go into an attached file: the message must stay readable and
# well within Telegram's 4,096 characters, and nothing may be cut silently.
INLINE_ARGUMENTS_LIMIT = 2500


class TelegramApprover:
    """The gate's Approver for Telegram: one message per request, buttons removed after.

    A press arrives as an update and is decided by the commands' `on_decision`, not here: its
    callback data is `ap:<request id>:<letter>`, the letters of `CHOICES` there."""

    def __init__(self, config: Config, delivery: Delivery) -> None:
        self.config = config
        self.delivery = delivery
        self.bot = delivery.bot

    def _chat_for(self, request: ApprovalRequest) -> int:
        """The owner's private chat asks there. A group turn, a guest's, a job or a skill asks
        the owner privately: buttons in a group would show the call to everyone, and a guest is
        not the owner (Telegram gives groups negative ids, private chats the user's id)."""
        chat = request.chat_id or ""
        if chat.isdigit() and not self.config.guest_chat(chat):
            return int(chat)
        owner = self.config.owner_chat
        if owner is None:
            raise LookupError("no owner chat to ask")
        return int(owner)

    async def present(self, request: ApprovalRequest, decide: Decide) -> dict[str, Any]:
        chat_id = self._chat_for(request)
        # a group or channel: approvals go to a private chat only
        # (docs/reference/approvals.md#the-request)
        if chat_id < 0:
            raise LookupError("approval requests are never posted outside a private chat")
        arguments = arguments_text(request.arguments)
        # Not the owner's own asking: where it was asked, on the first line.
        where = (
            f", asked in guest chat {request.chat_id}"
            if self.config.guest_chat(request.chat_id)
            else ""
        )
        header = (
            f"🔐 <b>Approval needed</b> ({html.escape(request.origin)}{where})\n"
            f"Tool: <code>{html.escape(request.tool)}</code>"
        )
        if len(arguments) <= INLINE_ARGUMENTS_LIMIT:
            text = f"{header}\n<pre>{html.escape(arguments)}</pre>"
        else:
            await self.delivery.call(
                chat_id,
                partial(
                    self.bot.send_document,
                    chat_id,
                    arguments.encode(),
                    filename=f"{request.tool}-{request.id}-arguments.json",
                    caption=f"Arguments of the {request.tool} call awaiting approval",
                ),
            )
            text = f"{header}\nThe arguments ({len(arguments)} characters) are in the file above."
        if request.rule_pattern:
            pattern = html.escape(visible(request.rule_pattern))
            text += f"\nAlways allow would save: <code>{pattern}</code>"
        buttons = [
            InlineKeyboardButton("Approve", callback_data=f"ap:{request.id}:y"),
            InlineKeyboardButton("Reject", callback_data=f"ap:{request.id}:n"),
        ]
        rows = [buttons]
        more = []
        if request.rule_pattern:
            more.append(InlineKeyboardButton("Always allow", callback_data=f"ap:{request.id}:a"))
        if request.in_chat:
            more.append(
                InlineKeyboardButton("Allow in this chat", callback_data=f"ap:{request.id}:c")
            )
        if more:
            rows.append(more)
        message = await self.delivery.call(
            chat_id,
            partial(
                self.bot.send_message,
                chat_id,
                text,
                parse_mode=ParseMode.HTML,
                reply_markup=InlineKeyboardMarkup(rows),
            ),
        )
        return {"chat_id": chat_id, "message_id": message.message_id, "text": text}

    async def conclude(self, ref: dict[str, Any] | None, tool: str, verdict: Verdict) -> None:
        if not ref:
            return
        icon = "✅" if verdict.approved else "❌"
        text = f"{ref['text']}\n\n{icon} <b>{html.escape(verdict.describe())}</b>"
        chat_id = int(ref["chat_id"])
        # Editing without reply_markup removes the buttons.
        await self.delivery.call(
            chat_id,
            partial(
                self.bot.edit_message_text,
                text,
                chat_id=chat_id,
                message_id=int(ref["message_id"]),
                parse_mode=ParseMode.HTML,
            ),
        )

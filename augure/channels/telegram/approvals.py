"""Approval requests as Telegram messages with inline buttons, and the presses that decide them."""

from __future__ import annotations

import html
import logging
from functools import partial
from typing import Any

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.constants import ParseMode
from telegram.ext import ContextTypes

from augure.approval.shown import arguments_text, visible
from augure.channels.telegram.delivery import Delivery
from augure.common.ports import ApprovalRequest, Decide, Decision, Verdict
from augure.config.settings import Config
from augure.core.door.doors import ReadingDoor

log = logging.getLogger(__name__)

# Arguments longer than this go into an attached file: the message must stay readable and
# well within Telegram's 4,096 characters, and nothing may be cut silently.
INLINE_ARGUMENTS_LIMIT = 2500
# A button's letter: the decision, whether it saves a rule, whether it allows in this chat.
CHOICES = {
    "y": (Decision.APPROVED, False, False),
    "a": (Decision.APPROVED, True, False),
    "c": (Decision.APPROVED, False, True),
    "n": (Decision.REJECTED, False, False),
}


class TelegramApprover:
    """The gate's Approver for Telegram: one message per request, buttons removed after.

    A press arrives as an update and is decided by `on_button`, not here."""

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


async def on_button(door: ReadingDoor, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A press on Approve / Reject / Always allow / Allow in this chat, or on a rule's Revoke."""
    query = update.callback_query
    assert query is not None and query.data is not None and query.from_user is not None
    kind, _, rest = query.data.partition(":")
    if kind == "rv":
        if str(query.from_user.id) != door.config.owner_chat:
            await query.answer("Only the owner can revoke a rule.", show_alert=True)
            return
        revoked = rest.isdigit() and await door.owner.revoke_rule(int(rest))
        await query.answer("Rule revoked." if revoked else "That rule no longer exists.")
        return
    invocation_id, _, choice = rest.partition(":")
    if kind != "ap" or choice not in CHOICES:
        await query.answer("Unknown button.")
        return
    if str(query.from_user.id) != door.config.owner_chat:  # a guest's forged press
        await query.answer("Only the owner decides.", show_alert=True)
        return
    decision, always, in_chat = CHOICES[choice]
    by = f"telegram:{query.from_user.id}"
    verdict = await door.owner.decide(invocation_id, decision, by, always=always, in_chat=in_chat)
    if verdict is not None:
        await query.answer(verdict.describe())
        return
    row = await door.reports.invocation(invocation_id)
    status = row.approval_status.replace("_", " ") if row else None
    await query.answer(f"Already decided: {status}." if status else "Unknown request.")


async def approvals_command(door: ReadingDoor, delivery: Delivery, chat_id: int) -> None:
    """/approvals: what waits for a decision, and the saved rules with a Revoke button each."""
    pending = await door.reports.pending_approvals(limit=20)
    rules = await door.owner.rules()
    lines = ["<b>Pending approvals</b>"]
    lines += [f"• <code>{r.id}</code> {html.escape(r.tool)}" for r in pending] or ["none"]
    lines.append("\n<b>Rules</b>")
    lines += [
        f"{rule.id}. {rule.effect}: <code>{html.escape(rule.pattern)}</code>" for rule in rules
    ] or ["none"]
    keyboard = [
        [InlineKeyboardButton(f"Revoke rule {rule.id}", callback_data=f"rv:{rule.id}")]
        for rule in rules[:20]
    ]
    await delivery.send_html(chat_id, "\n".join(lines), keyboard)

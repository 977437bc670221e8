"""/approvals: what waits for a decision and the saved rules, with a Revoke button per rule;
and the presses on an approval request's buttons (the request itself is sent by
augure.channels.telegram.approvals)."""

from __future__ import annotations

import html

from telegram import InlineKeyboardButton

from augure.channels.telegram.commands.command import Asked, Button, Command
from augure.common.ports import Decision

DECIDE = "ap:"  # callback data of a request's buttons: ap:<invocation id>:<choice letter>
REVOKE = "rv:"  # callback data of a rule's Revoke button: rv:<rule id>
# A button's letter: the decision, whether it saves a rule, whether it allows in this chat.
CHOICES = {
    "y": (Decision.APPROVED, False, False),
    "a": (Decision.APPROVED, True, False),
    "c": (Decision.APPROVED, False, True),
    "n": (Decision.REJECTED, False, False),
}


async def on_approvals(asked: Asked) -> None:
    pending = await asked.door.reports.pending_approvals(limit=20)
    rules = await asked.door.owner.rules()
    lines = ["<b>Pending approvals</b>"]
    lines += [f"• <code>{r.id}</code> {html.escape(r.tool)}" for r in pending] or ["none"]
    lines.append("\n<b>Rules</b>")
    lines += [
        f"{rule.id}. {rule.effect}: <code>{html.escape(rule.pattern)}</code>" for rule in rules
    ] or ["none"]
    keyboard = [
        [InlineKeyboardButton(f"Revoke rule {rule.id}", callback_data=f"{REVOKE}{rule.id}")]
        for rule in rules[:20]
    ]
    await asked.delivery.send_html(asked.chat_id, "\n".join(lines), keyboard)


async def on_decision(asked: Asked) -> None:
    """A press on Approve / Reject / Always allow / Allow in this chat."""
    query, door = asked.query, asked.door
    invocation_id, _, choice = asked.data.removeprefix(DECIDE).partition(":")
    if choice not in CHOICES:
        await query.answer("Unknown button.")
        return
    if not asked.by_owner(query.from_user.id):  # a guest's forged press
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


async def on_revoke(asked: Asked) -> None:
    """A press on a rule's Revoke."""
    query = asked.query
    if not asked.by_owner(query.from_user.id):
        await query.answer("Only the owner can revoke a rule.", show_alert=True)
        return
    rule = asked.data.removeprefix(REVOKE)
    done = rule.isdigit() and await asked.door.owner.revoke_rule(int(rule))
    await query.answer("Rule revoked." if done else "That rule no longer exists.")


APPROVALS = Command(
    "approvals",
    menu="Pending approvals and always-allow rules",
    help="/approvals — pending approvals and always-allow rules (with Revoke buttons)",
    handler=on_approvals,
    buttons=(Button(f"^{DECIDE}", on_decision), Button(f"^{REVOKE}", on_revoke)),
)

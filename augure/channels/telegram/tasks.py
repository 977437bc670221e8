"""/tasks: this chat's background tasks, with a Cancel button each for the running ones."""

from __future__ import annotations

import html

from telegram import InlineKeyboardButton, Update
from telegram.ext import ContextTypes

from augure.background.tools import line
from augure.channels.telegram.delivery import Delivery
from augure.core.door.doors import ReadingDoor

PREFIX = "tc:"  # callback data of the Cancel buttons
# Within one message (4,096 characters) whatever the results hold: 15 short lines.
LISTED = 15
EXCERPT = 60
NOT_OWNER = "Only the owner can cancel background tasks."
NOT_HERE = "There is no task {task_id} in this chat."


async def tasks_command(door: ReadingDoor, delivery: Delivery, chat_id: int) -> None:
    # A chat's background results are that chat's: another chat's work is never listed here.
    rows = await door.reports.tasks(limit=LISTED, chat_id=str(chat_id))
    lines = ["<b>Background tasks</b>"]
    shown = (line(row, limit=EXCERPT) for row in rows)
    lines += [f"• {html.escape(text)}" for text in shown] or ["none"]
    keyboard = [
        [InlineKeyboardButton(f"Cancel {row.id} ({row.tool})", callback_data=PREFIX + row.id)]
        for row in rows
        if row.status == "running"
    ]
    await delivery.send_html(chat_id, "\n".join(lines), keyboard)


async def on_cancel_button(
    door: ReadingDoor, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    query = update.callback_query
    assert query is not None and query.data is not None and query.from_user is not None
    if str(query.from_user.id) != door.config.owner_chat:
        await query.answer(NOT_OWNER, show_alert=True)
        return
    task_id = query.data.removeprefix(PREFIX)
    # A modified client can send any callback data: the press counts only for a task of the
    # chat the button is in, which is the only kind its listing ever offers.
    row = await door.reports.task(task_id)
    where = query.message.chat.id if query.message is not None else None
    if row is None or row.chat_id != str(where):
        await query.answer(NOT_HERE.format(task_id=task_id), show_alert=True)
        return
    await query.answer(await door.owner.cancel_task(task_id))

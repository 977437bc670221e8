"""/tasks: this chat's background tasks, with a Cancel button each for the running ones."""

from __future__ import annotations

import html

from telegram import InlineKeyboardButton

from augure.background.tools import line
from augure.channels.telegram.commands.command import Asked, Button, Command

CANCEL = "tc:"  # callback data of the Cancel buttons
# Within one message (4,096 characters) whatever the results hold: 15 short lines.
SHOWN = 15
RESULT_CHARS = 60
NOT_OWNER = "Only the owner can cancel background tasks."
NOT_HERE = "There is no task {task_id} in this chat."


async def on_tasks(asked: Asked) -> None:
    # A chat's background results are that chat's: another chat's work is never listed here.
    rows = await asked.door.reports.tasks(limit=SHOWN, chat_id=str(asked.chat_id))
    lines = ["<b>Background tasks</b>"]
    shown = (line(row, limit=RESULT_CHARS) for row in rows)
    lines += [f"• {html.escape(text)}" for text in shown] or ["none"]
    keyboard = [
        [InlineKeyboardButton(f"Cancel {row.id} ({row.tool})", callback_data=CANCEL + row.id)]
        for row in rows
        if row.status == "running"
    ]
    await asked.delivery.send_html(asked.chat_id, "\n".join(lines), keyboard)


async def on_cancel(asked: Asked) -> None:
    query = asked.query
    if not asked.by_owner(query.from_user.id):
        await query.answer(NOT_OWNER, show_alert=True)
        return
    task_id = asked.data.removeprefix(CANCEL)
    # A modified client can send any callback data: the press counts only for a task of the
    # chat the button is in, which is the only kind its listing ever offers.
    row = await asked.door.reports.task(task_id)
    where = query.message.chat.id if query.message is not None else None
    if row is None or row.chat_id != str(where):
        await query.answer(NOT_HERE.format(task_id=task_id), show_alert=True)
        return
    await query.answer(await asked.door.owner.cancel_task(task_id))


TASKS = Command(
    "tasks",
    menu="Background tasks, with Cancel buttons",
    help="/tasks — background work, with a Cancel button each",
    handler=on_tasks,
    buttons=(Button(f"^{CANCEL}", on_cancel),),
)

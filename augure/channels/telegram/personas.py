"""/persona: list the personas with a button each, or switch this chat to one
(docs/reference/personas.md#personas)."""

from __future__ import annotations

from functools import partial

from telegram import InlineKeyboardButton, InlineKeyboardMarkup, Update
from telegram.ext import ContextTypes

from augure.channels.telegram.delivery import Delivery
from augure.core.door.chat import ChatDesk

PREFIX = "ps:"  # callback data of the persona buttons
OFF = "off"
NONE_YET = (
    "No personas yet: add a markdown file per persona to the personas/ folder of the Augure "
    "home (e.g. personas/pirate.md), then /persona."
)


async def persona_command(
    chat: ChatDesk, delivery: Delivery, chat_id: int, args: list[str]
) -> None:
    names = chat.personas()
    if args:
        await delivery.send_text(chat_id, await switch(chat, str(chat_id), args[0]))
        return
    if not names:
        await delivery.send_text(chat_id, NONE_YET)
        return
    active = await chat.persona(str(chat_id))
    rows = [
        [InlineKeyboardButton(("✓ " if name == active else "") + name, callback_data=PREFIX + name)]
        for name in names[:50]
    ]
    rows.append([InlineKeyboardButton("No persona", callback_data=PREFIX + OFF)])
    text = f"Persona for this chat: {active or 'none'}. Choose one:"
    await delivery.call(
        chat_id,
        partial(delivery.bot.send_message, chat_id, text, reply_markup=InlineKeyboardMarkup(rows)),
    )


async def switch(chat: ChatDesk, chat_id: str, name: str) -> str:
    names = chat.personas()
    if name == OFF:
        await chat.set_persona(chat_id, None)
        return "This chat has no persona now."
    if name not in names:
        known = ", ".join(names) or "none"
        return f"There is no persona {name!r}; available: {known}."
    await chat.set_persona(chat_id, name)
    return f"Persona for this chat: {name}."


async def on_persona_button(
    chat: ChatDesk, update: Update, context: ContextTypes.DEFAULT_TYPE
) -> None:
    query = update.callback_query
    assert query is not None and query.data is not None
    message = query.message
    if message is None:
        await query.answer("That message is too old; send /persona again.")
        return
    said = await switch(chat, str(message.chat.id), query.data.removeprefix(PREFIX))
    await query.answer(said)
    await query.edit_message_text(said)  # also removes the buttons

"""/persona: list the personas with a button each, or switch this chat to one
(docs/reference/personas.md#personas)."""

from __future__ import annotations

from functools import partial

from telegram import InlineKeyboardButton, InlineKeyboardMarkup

from augure.channels.telegram.commands.command import Asked, Button, Command

CHOOSE = "ps:"  # callback data of the persona buttons
NO_PERSONA = "off"
NONE_YET = (
    "No personas yet: add a markdown file per persona to the personas/ folder of the Augure "
    "home (e.g. personas/pirate.md), then /persona."
)


async def on_persona(asked: Asked) -> None:
    chat, delivery, chat_id = asked.door.chat, asked.delivery, asked.chat_id
    names = chat.personas()
    if asked.args:
        await asked.say(await switch(asked, str(chat_id), asked.args[0]))
        return
    if not names:
        await asked.say(NONE_YET)
        return
    active = await chat.persona(str(chat_id))
    rows = [
        [InlineKeyboardButton(("✓ " if name == active else "") + name, callback_data=CHOOSE + name)]
        for name in names[:50]
    ]
    rows.append([InlineKeyboardButton("No persona", callback_data=CHOOSE + NO_PERSONA)])
    text = f"Persona for this chat: {active or 'none'}. Choose one:"
    await delivery.call(
        chat_id,
        partial(delivery.bot.send_message, chat_id, text, reply_markup=InlineKeyboardMarkup(rows)),
    )


async def switch(asked: Asked, chat_id: str, name: str) -> str:
    chat = asked.door.chat
    names = chat.personas()
    if name == NO_PERSONA:
        await chat.set_persona(chat_id, None)
        return "This chat has no persona now."
    if name not in names:
        known = ", ".join(names) or "none"
        return f"There is no persona {name!r}; available: {known}."
    await chat.set_persona(chat_id, name)
    return f"Persona for this chat: {name}."


async def on_persona_button(asked: Asked) -> None:
    query = asked.query
    message = query.message
    if message is None:
        await query.answer("That message is too old; send /persona again.")
        return
    said = await switch(asked, str(message.chat.id), asked.data.removeprefix(CHOOSE))
    await query.answer(said)
    await query.edit_message_text(said)  # also removes the buttons


PERSONA = Command(
    "persona",
    menu="Choose this chat's persona",
    help="/persona — choose this chat's persona (/persona NAME switches)",
    handler=on_persona,
    owner_only=False,  # it touches only the chat it is sent in
    buttons=(Button(f"^{CHOOSE}", on_persona_button),),
)

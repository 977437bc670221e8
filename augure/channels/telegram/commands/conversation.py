"""/new: a fresh conversation in this chat (memory files are kept)."""

from __future__ import annotations

from augure.channels.telegram.commands.command import Asked, Command


async def on_new(asked: Asked) -> None:
    await asked.door.chat.new_conversation(str(asked.chat_id))
    await asked.say("Started a fresh conversation.")


NEW = Command(
    "new",
    menu="Start a fresh conversation",
    help="/new — start a fresh conversation (memory files are kept)",
    handler=on_new,
    owner_only=False,  # it touches only the chat it is sent in
)

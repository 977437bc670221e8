"""Answers spoken as voice notes, with their text (docs/voice.md).

The text always arrives whole: as the caption of a single voice note when it fits Telegram's
caption limit, otherwise as the usual message(s) after the notes. When the speech fails, the
text goes alone, as if voice replies were off.
"""

from __future__ import annotations

import logging
from functools import partial

from telegram.constants import ChatAction
from telegram.error import BadRequest

from augure.channels.telegram.delivery import Delivery
from augure.channels.telegram.render import Chunk, utf16_len
from augure.common.ports import Sources
from augure.core.door.chat import ChatDesk

log = logging.getLogger(__name__)

CAPTION_LIMIT = 1024
NOTE_NAME = "answer.ogg"


async def reply_by_voice(
    delivery: Delivery, chat: ChatDesk, chat_id: int, markdown: str, sources: Sources
) -> None:
    async with delivery.typing(chat_id, ChatAction.RECORD_VOICE):
        notes = await chat.speak(str(chat_id), markdown)
    if notes is None:
        await delivery.send_markdown(chat_id, markdown, sources)
        return
    caption = _as_caption(delivery, markdown, sources, len(notes))
    for index, note in enumerate(notes):
        await _send_note(delivery, chat_id, note, caption if index == 0 else None)
    if caption is None:
        await delivery.send_markdown(chat_id, markdown, sources)


def _as_caption(delivery: Delivery, markdown: str, sources: Sources, notes: int) -> Chunk | None:
    """The text as one caption, when a single note carries all of it (shown for what it drew
    on, as a message would be)."""
    chunks = delivery.showing.chunks(markdown, sources, CAPTION_LIMIT)
    if notes != 1 or len(chunks) != 1 or utf16_len(chunks[0].plain) > CAPTION_LIMIT:
        return None
    return chunks[0]


async def _send_note(delivery: Delivery, chat_id: int, note: bytes, caption: Chunk | None) -> None:
    send = partial(delivery.bot.send_voice, chat_id, note, filename=NOTE_NAME)
    if caption is None:
        await delivery.call(chat_id, send)
        return
    try:
        await delivery.call(chat_id, partial(send, caption=caption.html, parse_mode="HTML"))
    except BadRequest as exc:
        if "parse" not in str(exc).lower():
            raise
        log.warning("Telegram refused the caption's markup (%s); sending it plain", exc)
        await delivery.call(chat_id, partial(send, caption=caption.plain))

"""Photos, documents and voice notes in; images and files out."""

from __future__ import annotations

import base64
import re
import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any

from telegram import Message

from augure.channels.telegram.delivery import Delivery
from augure.common.ports import Attachment
from augure.config.settings import Config

CAPTION_LIMIT = 1024
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
# A sender's name as the model reads it: the user chose it, so it is kept short and on one
# line, without the brackets that frame the note.
NAME_LIMIT = 40
UNSAFE_IN_NAME = re.compile(r"[\[\]\s]+")


def inbox_name(original: str | None, fallback: str) -> str:
    """A file name that cannot leave the inbox: basename only, tame characters, unique."""
    base = Path((original or fallback).replace("\\", "/")).name
    cleaned = SAFE_NAME.sub("_", base).strip("._") or fallback
    return f"{time.strftime('%Y%m%d-%H%M%S')}-{cleaned[:80]}"


async def save_to_inbox(inbox: Path, data: bytes, name: str) -> Path:
    """Into the chat's own inbox (`Config.inbox_dir`): a guest's documents never land in the
    owner's."""
    inbox.mkdir(parents=True, exist_ok=True)
    path = inbox / name
    path.write_bytes(data)
    return path


def sender(message: Message, config: Config) -> str:
    """Who sent it, as the note to the model says: the owner, or the guest by name."""
    user = message.from_user
    if user is None or str(user.id) == config.owner_chat:
        return "The owner"
    name = UNSAFE_IN_NAME.sub(" ", user.full_name).strip()[:NAME_LIMIT].strip()
    return f"{name or 'Someone'} (a guest)"


async def photo_content(message: Message, config: Config) -> list[dict[str, Any]]:
    """The model's content for a photo: the caption and the image itself."""
    largest = message.photo[-1]
    data = bytes(await (await largest.get_file()).download_as_bytearray())
    name = inbox_name(None, f"photo-{largest.file_unique_id}.jpg")
    saved = await save_to_inbox(config.inbox_dir(str(message.chat_id)), data, name)
    caption = message.caption or f"{sender(message, config)} sent this photo."
    encoded = base64.b64encode(data).decode()
    return [
        {"type": "text", "text": f"{caption}\n[photo saved as inbox/{saved.name}]"},
        {"type": "image_url", "image_url": {"url": f"data:image/jpeg;base64,{encoded}"}},
    ]


async def document_text(message: Message, config: Config) -> str:
    document = message.document
    assert document is not None
    data = bytes(await (await document.get_file()).download_as_bytearray())
    name = inbox_name(document.file_name, "document")
    saved = await save_to_inbox(config.inbox_dir(str(message.chat_id)), data, name)
    lines = [message.caption or "", ""] if message.caption else []
    lines.append(
        f"[{sender(message, config)} sent a document: {document.file_name or 'unnamed'} "
        f"({len(data)} bytes, {document.mime_type or 'unknown type'}), "
        f"saved as inbox/{saved.name}; read it with the files tool.]"
    )
    return "\n".join(lines)


async def voice_bytes(message: Message) -> tuple[bytes, str]:
    voice = message.voice or message.audio
    assert voice is not None
    data = bytes(await (await voice.get_file()).download_as_bytearray())
    if message.voice is not None:
        return data, "voice.ogg"
    return data, (message.audio and message.audio.file_name) or "audio"


async def send_artifacts(delivery: Delivery, chat_id: int, artifacts: Sequence[Attachment]) -> None:
    """Images as photos, everything else as documents, captions within Telegram's limit."""
    bot = delivery.bot
    for artifact in artifacts:
        content = artifact.content
        data = content if isinstance(content, bytes) else content.encode()
        caption = artifact.name[:CAPTION_LIMIT]
        if artifact.type == "image":
            await delivery.call(chat_id, partial(bot.send_photo, chat_id, data, caption=caption))
            continue
        name = (
            artifact.name
            if artifact.type != "json" or artifact.name.endswith(".json")
            else (f"{artifact.name}.json")
        )
        await delivery.call(chat_id, partial(bot.send_document, chat_id, data, filename=name))

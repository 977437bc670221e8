"""Which updates the bot acts on, and how the message kinds without a handler of their own
reach the model (docs/reference/telegram.md#message-kinds)."""

from __future__ import annotations

import re

from telegram import (
    MaybeInaccessibleMessage,
    Message,
    MessageEntity,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    User,
)
from telegram.constants import ChatType

from augure.common.content import Content
from augure.tools.result import FORWARDED, wrap_untrusted

GROUP_CHATS = (ChatType.GROUP, ChatType.SUPERGROUP)
WHAT_I_TAKE = (
    "I can take text, photos, documents, voice notes, locations, contacts and stickers; "
    "this kind of message I cannot read."
)


def in_group(message: MaybeInaccessibleMessage | None) -> bool:
    return message is not None and message.chat.type in GROUP_CHATS


def addressed(message: Message, me: User) -> bool:
    """In a group: a command for this bot, a mention of it, or a reply to one of its messages.

    A command with no @name counts: Telegram delivers it to every bot of the group, and the
    sender meant one of them; a command naming another bot does not."""
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == me.id:
        return True
    username = f"@{me.username}".lower() if me.username else None
    kinds: list[str | None] = [
        MessageEntity.MENTION,
        MessageEntity.TEXT_MENTION,
        MessageEntity.BOT_COMMAND,
    ]
    found = {**message.parse_entities(kinds), **message.parse_caption_entities(kinds)}
    for entity, text in found.items():
        if entity.type == MessageEntity.TEXT_MENTION:
            if entity.user is not None and entity.user.id == me.id:
                return True
        elif entity.type == MessageEntity.MENTION:
            if text.lower() == username:
                return True
        elif entity.offset == 0:  # a command only counts at the start
            _, _, target = text.partition("@")
            if not target or f"@{target}".lower() == username:
                return True
    return False


def without_mention(text: str, me: User) -> str:
    """The text the model sees: a leading "@bot," that only addressed the bot is dropped."""
    if not me.username:
        return text
    lead = re.match(rf"\s*@{re.escape(me.username)}\b[\s,:;.!-]*", text, re.IGNORECASE)
    return (text[lead.end() :] if lead else text) or text


def _coordinates(latitude: float, longitude: float) -> str:
    return f"{round(latitude, 6)}, {round(longitude, 6)}"


def as_text(message: Message) -> str | None:
    """One short line for a location, venue, contact or sticker; None for other kinds."""
    if message.venue is not None:  # Telegram sends a venue's location too: venue first
        venue = message.venue
        where = _coordinates(venue.location.latitude, venue.location.longitude)
        return f"[venue {venue.title}, {venue.address} ({where})]"
    if message.location is not None:
        return f"[location {_coordinates(message.location.latitude, message.location.longitude)}]"
    if message.contact is not None:
        card = message.contact
        name = " ".join(part for part in (card.first_name, card.last_name) if part)
        return f"[contact {name} {card.phone_number}]"
    if message.sticker is not None:
        emoji = message.sticker.emoji
        return f"[sticker {emoji}]" if emoji else "[sticker]"
    return None


def forwarded_from(message: Message) -> str | None:
    """Who a forwarded message came from, as Telegram names its origin; None when the
    owner wrote it."""
    origin = message.forward_origin
    if origin is None:
        return None
    if isinstance(origin, MessageOriginUser):
        name = origin.sender_user.full_name
    elif isinstance(origin, MessageOriginHiddenUser):
        name = origin.sender_user_name
    elif isinstance(origin, MessageOriginChat):
        name = origin.sender_chat.title or origin.sender_chat.full_name or "a group"
    elif isinstance(origin, MessageOriginChannel):
        name = origin.chat.title or "a channel"
    else:
        name = "someone"
    # The name goes inside the marker's quotes: nothing in it may end them or the tag.
    name = re.sub(r'["<>\s]+', " ", name).strip()[:64] or "someone"
    return f"{FORWARDED}{name}"


def as_forwarded(content: Content, message: Message) -> Content:
    """A forwarded message's words (its text, its caption, its transcript) are not the
    owner's: outside content, marked with their origin, and the turn starts from them as from
    a page (docs/security.md, "Forwarded messages"). The owner's own words pass unchanged."""
    origin = forwarded_from(message)
    if origin is None:
        return content
    if isinstance(content, str):
        return wrap_untrusted(content, origin)
    marked = [dict(part) for part in content]
    for part in marked:
        if part.get("type") == "text":
            part["text"] = wrap_untrusted(part["text"], origin)
    return marked

"""Message contents and entities as Telegram sends them, for FakeTelegram.inject_message.

Each builder returns the fields to merge into a message, shaped like Telegram's own: a venue
comes with its ``location`` too, and an animation (GIF) with a ``document`` copy, as Telegram
sends them for older clients. File ids are synthetic; the bot has no reason to fetch them.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tests.fakes.telegram_html import utf16_len

JSON = dict[str, Any]

_ids = itertools.count(1)
# Telegram usernames: 5-32 characters, letters, digits and underscores.
_MENTION_RE = re.compile(r"(?<![\w@])@[A-Za-z0-9_]{5,32}\b")


def _file(prefix: str) -> JSON:
    n = next(_ids)
    return {"file_id": f"{prefix.upper()}{n:06d}", "file_unique_id": f"U{prefix[:3]}{n:06d}"}


def media_group_id() -> str:
    """Telegram's album ids are long decimal strings."""
    return str(13_000_000_000_000_000 + next(_ids))


def location(latitude: float, longitude: float) -> JSON:
    return {"location": {"latitude": latitude, "longitude": longitude}}


def venue(title: str, address: str, latitude: float, longitude: float) -> JSON:
    place = {"latitude": latitude, "longitude": longitude}
    return {"venue": {"location": place, "title": title, "address": address}, "location": place}


def contact(phone_number: str, first_name: str, last_name: str | None = None) -> JSON:
    card: JSON = {"phone_number": phone_number, "first_name": first_name}
    if last_name:
        card["last_name"] = last_name
    return {"contact": card}


def sticker(emoji: str | None) -> JSON:
    body = _file("sticker") | {"type": "regular", "width": 512, "height": 512}
    body |= {"is_animated": False, "is_video": False}
    if emoji:
        body["emoji"] = emoji
    return {"sticker": body}


def unsupported(kind: str) -> JSON:
    """A message of a kind the bot does not take: video, video_note, animation, poll, dice, game."""
    if kind == "video":
        return {"video": _file("video") | {"width": 640, "height": 360, "duration": 3}}
    if kind == "video_note":
        return {"video_note": _file("videonote") | {"length": 240, "duration": 3}}
    if kind == "animation":
        gif = _file("animation") | {"width": 320, "height": 240, "duration": 2}
        gif |= {"file_name": "funny.gif.mp4", "mime_type": "video/mp4"}
        document = {k: gif[k] for k in ("file_id", "file_unique_id", "file_name", "mime_type")}
        return {"animation": gif, "document": document}
    if kind == "poll":
        options = [
            {"persistent_id": str(i), "text": t, "voter_count": 0}
            for i, t in enumerate(("Yes", "No"))
        ]
        poll = {"id": str(next(_ids)), "question": "Lunch?", "options": options}
        poll |= {"total_voter_count": 0, "is_closed": False, "is_anonymous": True}
        poll |= {"type": "regular", "allows_multiple_answers": False, "allows_revoting": True}
        poll["members_only"] = False
        return {"poll": poll}
    if kind == "dice":
        return {"dice": {"emoji": "🎲", "value": 4}}
    if kind == "game":
        photo = [_file("game") | {"width": 640, "height": 360}]
        return {"game": {"title": "Snake", "description": "A game", "photo": photo}}
    raise ValueError(f"unknown message kind {kind!r}")


def entities(text: str, extra: list[JSON] | None = None) -> list[JSON]:
    """What Telegram marks in a text: a leading bot command and every @username, by offset."""
    found: list[JSON] = []
    if text.startswith("/"):
        length = utf16_len(text.split(maxsplit=1)[0])
        found.append({"type": "bot_command", "offset": 0, "length": length})
    for match in _MENTION_RE.finditer(text):
        offset = utf16_len(text[: match.start()])
        found.append({"type": "mention", "offset": offset, "length": utf16_len(match.group())})
    total = utf16_len(text)
    for entity in extra or []:
        if entity["offset"] < 0 or entity["offset"] + entity["length"] > total:
            raise ValueError(f"entity {entity} lies outside the text")
        found.append(entity)
    return sorted(found, key=lambda e: (e["offset"], -e["length"]))


def forwarded(kind: str, name: str, *, user_id: int = 5005, message_id: int = 77) -> JSON:
    """`forward_origin` as Telegram shapes it (Bot API 7.0, MessageOrigin): "user" (a person
    whose account may be linked), "hidden_user" (who chose not to be linked: a name only),
    "chat" (sent on behalf of a group) or "channel" (a channel's post)."""
    date = 1_700_000_000
    if kind == "user":
        sender = {"id": user_id, "is_bot": False, "first_name": name}
        return {"forward_origin": {"type": "user", "date": date, "sender_user": sender}}
    if kind == "hidden_user":
        return {"forward_origin": {"type": "hidden_user", "date": date, "sender_user_name": name}}
    if kind == "chat":
        group = {"id": -100_000_000_000 - user_id, "type": "supergroup", "title": name}
        return {"forward_origin": {"type": "chat", "date": date, "sender_chat": group}}
    if kind == "channel":
        channel = {"id": -100_000_000_000 - user_id, "type": "channel", "title": name}
        origin = {"type": "channel", "date": date, "chat": channel, "message_id": message_id}
        return {"forward_origin": origin}
    raise ValueError(f"unknown forward origin {kind!r}")

"""Link previews as Telegram makes them, for FakeTelegram.

Telegram's servers fetch the first link of a text message (a `url` it detects in the text or
a `text_link` entity, or `link_preview_options.url`) to show its preview, with no click from
anyone, unless the message asks for none: `link_preview_options.is_disabled`, or the older
`disable_web_page_preview`. A preview is a request to that address, so the fake records each
one: a test asserts which addresses Telegram would have fetched.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.telegram_html import utf16_len

JSON = dict[str, Any]

# The fields of LinkPreviewOptions (Bot API 7.0) and the type of each.
_OPTION_TYPES: dict[str, type] = {
    "is_disabled": bool,
    "url": str,
    "prefer_small_media": bool,
    "prefer_large_media": bool,
    "show_above_text": bool,
}
_BAD_OPTIONS = "Bad Request: can't parse link preview options JSON object"
# What Telegram's clients and servers detect as a link in plain text (a simplified form).
_URL = re.compile(r"(?i)\b(?:https?://|www\.)[^\s<>\"]+")


class PreviewError(Exception):
    """A request whose preview options Telegram refuses."""


def options(params: JSON) -> JSON | None:
    """The request's preview options, checked as Telegram checks them."""
    given = params.get("link_preview_options")
    legacy = params.get("disable_web_page_preview")
    if legacy is not None and not isinstance(legacy, bool):
        raise PreviewError("Bad Request: can't parse disable_web_page_preview")
    if given is None:
        return {"is_disabled": True} if legacy else None
    if not isinstance(given, dict):
        raise PreviewError(_BAD_OPTIONS)
    for key, value in given.items():
        kind = _OPTION_TYPES.get(key)
        if kind is not None and not isinstance(value, kind):
            raise PreviewError(_BAD_OPTIONS)
    if given.get("prefer_small_media") and given.get("prefer_large_media"):
        raise PreviewError("Bad Request: can't prefer both small and large media")
    return {key: value for key, value in given.items() if key in _OPTION_TYPES}


def fetched(text: str, entities: list[JSON], chosen: JSON | None) -> str | None:
    """The address Telegram would fetch to preview this text, or None."""
    if chosen and chosen.get("is_disabled"):
        return None
    if chosen and chosen.get("url"):
        return str(chosen["url"])
    links: list[tuple[int, str]] = [
        (int(e["offset"]), str(e["url"])) for e in entities if e.get("type") == "text_link"
    ]
    for match in _URL.finditer(text):
        links.append((utf16_len(text[: match.start()]), match.group().rstrip(".,;:!?)")))
    return min(links)[1] if links else None

"""Stateless checks of message content for the fake Bot API server (tests/fakes/telegram.py).

``parse_html`` mirrors the HTML parser of Telegram's server (tdlib), and ``parse_markdown_v2``
is a small MarkdownV2 parser. Both return the plain text and its MessageEntity dicts (offsets
and lengths in UTF-16 code units) or raise :class:`EntityParseError` with the text Telegram puts
after ``"Bad Request: can't parse entities: "``. ``format_text`` and ``check_reply_markup``
validate a whole text / reply_markup parameter and raise :class:`ContentError` with Telegram's
full error description.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

Entity = dict[str, Any]

_SIMPLE_TAGS = {
    "b": "bold",
    "strong": "bold",
    "i": "italic",
    "em": "italic",
    "u": "underline",
    "ins": "underline",
    "s": "strikethrough",
    "strike": "strikethrough",
    "del": "strikethrough",
    "tg-spoiler": "spoiler",
    "span": "spoiler",
    "code": "code",
    "pre": "pre",
    "blockquote": "blockquote",
    "a": "text_link",
    "tg-emoji": "custom_emoji",
}
_BUTTON_ACTIONS = (
    "url", "callback_data", "web_app", "login_url", "switch_inline_query", "pay",
    "switch_inline_query_current_chat", "switch_inline_query_chosen_chat", "copy_text",
    "callback_game",
)  # fmt: skip
_NAMED_ENTITIES = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_SPACES = " \t\r\n\f\v"


class EntityParseError(ValueError):
    """The text could not be parsed; ``str(err)`` is Telegram's error detail."""


class ContentError(ValueError):
    """Invalid message content; ``str(err)`` is Telegram's full error description."""


def utf16_len(text: str) -> int:
    return sum(2 if ord(ch) > 0xFFFF else 1 for ch in text)


@dataclass
class _Open:
    tag: str
    start: int  # UTF-16 offset in the output
    byte_pos: int
    arg: str = ""
    extra: dict[str, str] = field(default_factory=dict)


class _Out:
    def __init__(self) -> None:
        self.chars: list[str] = []
        self.u16 = 0
        self.entities: list[Entity] = []

    def add(self, text: str) -> None:
        self.chars.append(text)
        self.u16 += utf16_len(text)

    def entity(self, kind: str, start: int, end: int | None = None, /, **extra: Any) -> None:
        end = self.u16 if end is None else end
        if end > start:
            self.entities.append({"type": kind, "offset": start, "length": end - start, **extra})

    def result(self) -> tuple[str, list[Entity]]:
        self.entities.sort(key=lambda e: (e["offset"], -e["length"]))
        return "".join(self.chars), self.entities


def _byte_offset(text: str, index: int) -> int:
    return len(text[:index].encode("utf-8"))


def _decode_entity(text: str, i: int) -> tuple[str, int]:
    """Decodes the HTML entity starting at ``text[i] == "&"``; returns (char, next index)."""
    end = text.find(";", i + 1, i + 12)
    name = text[i + 1 : end] if end != -1 else ""
    if name in _NAMED_ENTITIES:
        return _NAMED_ENTITIES[name], end + 1
    digits, base = (name[2:], 16) if name[:2] in ("#x", "#X") else (name[1:], 10)
    allowed = "0123456789abcdefABCDEF" if base == 16 else "0123456789"
    if name.startswith("#") and digits and all(c in allowed for c in digits):
        code = int(digits, base)
        if 0 < code <= 0x10FFFF and not 0xD800 <= code <= 0xDFFF:
            return chr(code), end + 1
    raise EntityParseError(
        f'Unsupported HTML entity "{text[i : (end + 1) if end != -1 else i + 1]}" at byte offset '
        f'{_byte_offset(text, i)}; a bare "&" must be written as &amp;'
    )


def _parse_attributes(text: str, i: int, tag: str, begin: int) -> tuple[dict[str, str], int]:
    """Parses attributes after the tag name up to and including ``>``; returns the next index."""
    n = len(text)
    attrs: dict[str, str] = {}
    pos = _byte_offset(text, begin)
    while True:
        while i < n and text[i] in _SPACES:
            i += 1
        if i >= n:
            raise EntityParseError(f'Unclosed start tag "{tag}" at byte offset {pos}')
        if text[i] == ">":
            return attrs, i + 1
        name_start = i
        while i < n and text[i] not in _SPACES and text[i] not in "=>":
            i += 1
        name = text[name_start:i].lower()
        if not name:
            raise EntityParseError(f'Empty attribute name in the tag "{tag}" at byte offset {pos}')
        while i < n and text[i] in _SPACES:
            i += 1
        if i >= n or text[i] != "=":
            if tag == "blockquote" and name == "expandable":
                attrs[name] = ""
                continue
            raise EntityParseError(
                "Expected equal sign in declaration of an attribute of the tag "
                f'"{tag}" at byte offset {pos}'
            )
        i += 1
        while i < n and text[i] in _SPACES:
            i += 1
        if i >= n:
            raise EntityParseError(f'Unclosed start tag "{tag}" at byte offset {pos}')
        value: list[str] = []
        if text[i] in "\"'":
            quote, i = text[i], i + 1
            while i < n and text[i] != quote:
                if text[i] == "&":
                    ch, i = _decode_entity(text, i)
                    value.append(ch)
                else:
                    value.append(text[i])
                    i += 1
            if i >= n:
                raise EntityParseError(f'Unclosed start tag "{tag}" at byte offset {pos}')
            i += 1
        else:
            token_start = i
            while i < n and (text[i].isalnum() or text[i] in ".-"):
                i += 1
            if i == token_start:
                raise EntityParseError(
                    f"Unexpected end of name token at byte offset {_byte_offset(text, i)}"
                )
            value.append(text[token_start:i])
        attrs[name] = "".join(value)


def _open_tag(text: str, i: int, stack: list[_Open], out: _Out) -> int:
    begin, n = i, len(text)
    pos = _byte_offset(text, begin)
    i += 1
    while i < n and text[i] not in _SPACES and text[i] != ">":
        i += 1
    if i >= n:
        raise EntityParseError(f"Unclosed start tag at byte offset {pos}")
    tag = text[begin + 1 : i].lower()
    if tag not in _SIMPLE_TAGS:
        raise EntityParseError(f'Unsupported start tag "{tag}" at byte offset {pos}')
    attrs, i = _parse_attributes(text, i, tag, begin)
    item = _Open(tag, out.u16, pos)
    if tag == "span" and attrs.get("class") != "tg-spoiler":
        raise EntityParseError(f'Tag "span" must have class "tg-spoiler" at byte offset {pos}')
    if tag == "a":
        if not attrs.get("href"):
            raise EntityParseError(f'Tag "a" must have attribute "href" at byte offset {pos}')
        item.arg = attrs["href"]
    elif tag == "tg-emoji":
        if not attrs.get("emoji-id", "").isdigit():
            raise EntityParseError("Invalid custom emoji identifier specified")
        item.arg = attrs["emoji-id"]
    elif tag == "code" and attrs.get("class", "").startswith("language-"):
        item.arg = attrs["class"][len("language-") :]
    elif tag == "blockquote" and "expandable" in attrs:
        item.arg = "expandable"
    inside = {o.tag for o in stack}
    if tag in ("pre", "code") and ("code" in inside or (tag == "pre" and "pre" in inside)):
        parent = "code" if "code" in inside else "pre"
        raise EntityParseError(
            f'Tag "{tag}" can\'t be nested inside tag "{parent}" at byte offset {pos}'
        )
    stack.append(item)
    return i


def _close_tag(text: str, i: int, stack: list[_Open], out: _Out) -> int:
    begin, n = i, len(text)
    pos = _byte_offset(text, begin)
    if not stack:
        raise EntityParseError(f"Unexpected end tag at byte offset {pos}")
    i += 2
    while i < n and text[i] not in _SPACES and text[i] != ">":
        i += 1
    name = text[begin + 2 : i].lower()
    while i < n and text[i] in _SPACES:
        i += 1
    if i >= n or text[i] != ">":
        raise EntityParseError(f"Unclosed end tag at byte offset {pos}")
    item = stack.pop()
    if name and name != item.tag:
        raise EntityParseError(
            f'Unmatched end tag at byte offset {pos}, expected "</{item.tag}>", found "</{name}>"'
        )
    kind = _SIMPLE_TAGS[item.tag]
    if item.tag == "code" and stack and stack[-1].tag == "pre":
        if item.arg:
            stack[-1].extra["language"] = item.arg
    elif kind == "text_link":
        out.entity(kind, item.start, url=item.arg)
    elif kind == "custom_emoji":
        out.entity(kind, item.start, custom_emoji_id=item.arg)
    elif kind == "blockquote" and item.arg:
        out.entity("expandable_blockquote", item.start)
    else:
        out.entity(kind, item.start, **item.extra)
    return i + 1


def parse_html(text: str) -> tuple[str, list[Entity]]:
    out = _Out()
    stack: list[_Open] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "&":
            decoded, i = _decode_entity(text, i)
            out.add(decoded)
        elif ch != "<":
            out.add(ch)
            i += 1
        elif i + 1 < n and text[i + 1] == "/":
            i = _close_tag(text, i, stack, out)
        else:
            i = _open_tag(text, i, stack, out)
    if stack:
        raise EntityParseError(f'Can\'t find end tag corresponding to start tag "{stack[-1].tag}"')
    return out.result()


_MD_RESERVED = set("_*[]()~`>#+-=|{}.!")
_MD_TOGGLES = {"__": "underline", "||": "spoiler", "_": "italic", "*": "bold", "~": "strikethrough"}


def parse_markdown_v2(text: str) -> tuple[str, list[Entity]]:
    out = _Out()
    stack: list[_Open] = []
    i, n = 0, len(text)
    quote_start: int | None = None
    while i < n:
        ch, top = text[i], (stack[-1].tag if stack else "")
        at_line_start = i == 0 or text[i - 1] == "\n"
        if at_line_start and top not in ("pre", "code"):
            if ch == ">":
                quote_start = out.u16 if quote_start is None else quote_start
                i += 1
                continue
            if quote_start is not None:
                out.entity("blockquote", quote_start, out.u16 - 1)  # without the newline
                quote_start = None
        if ch == "\\" and i + 1 < n and 0 < ord(text[i + 1]) <= 126:
            out.add(text[i + 1])
            i += 2
        elif top == "pre" and text.startswith("```", i):
            item = stack.pop()
            out.entity("pre", item.start, **({"language": item.arg} if item.arg else {}))
            i += 3
        elif top == "code" and ch == "`":
            out.entity("code", stack.pop().start)
            i += 1
        elif top in ("pre", "code") or ch not in _MD_RESERVED:
            out.add(ch)
            i += 1
        elif text.startswith("```", i):
            newline = text.find("\n", i + 3)
            lang = text[i + 3 : newline] if newline != -1 else ""
            if lang and not any(c in _SPACES or c == "`" for c in lang):
                stack.append(_Open("pre", out.u16, _byte_offset(text, i), lang))
                i = newline + 1
            else:
                stack.append(_Open("pre", out.u16, _byte_offset(text, i)))
                i += 3
        elif ch == "`":
            stack.append(_Open("code", out.u16, _byte_offset(text, i)))
            i += 1
        elif ch == "[" or text.startswith("![", i):
            width = 1 if ch == "[" else 2
            kind = "text_link" if ch == "[" else "custom_emoji"
            stack.append(_Open(kind, out.u16, _byte_offset(text, i)))
            i += width
        elif ch == "]" and top in ("text_link", "custom_emoji"):
            i = _md_close_link(text, i, stack.pop(), out)
        else:
            marker = next((m for m in _MD_TOGGLES if text.startswith(m, i)), None)
            if marker is None:
                raise EntityParseError(
                    f"Character '{ch}' is reserved and must be escaped with the preceding '\\'"
                )
            if top == marker:
                out.entity(_MD_TOGGLES[marker], stack.pop().start)
            else:
                stack.append(_Open(marker, out.u16, _byte_offset(text, i)))
            i += len(marker)
    if quote_start is not None:
        out.entity("blockquote", quote_start)
    if stack:
        raise EntityParseError(
            f"Can't find end of the entity starting at byte offset {stack[-1].byte_pos}"
        )
    return out.result()


def _md_close_link(text: str, i: int, item: _Open, out: _Out) -> int:
    i += 1
    if i >= len(text) or text[i] != "(":
        raise EntityParseError(f"Can't find end of a URL at byte offset {_byte_offset(text, i)}")
    url: list[str] = []
    j = i + 1
    while j < len(text) and text[j] != ")":
        if text[j] == "\\" and j + 1 < len(text):
            j += 1
        url.append(text[j])
        j += 1
    if j >= len(text):
        raise EntityParseError(f"Can't find end of a URL at byte offset {_byte_offset(text, i)}")
    target = "".join(url)
    if item.tag == "custom_emoji":
        emoji_id = target.removeprefix("tg://emoji?id=")
        if not emoji_id.isdigit():
            raise EntityParseError("Invalid custom emoji identifier specified")
        out.entity("custom_emoji", item.start, custom_emoji_id=emoji_id)
    else:
        out.entity("text_link", item.start, url=target)
    return j + 1


def trim(text: str, entities: list[Entity]) -> tuple[str, list[Entity]]:
    """Strips leading/trailing whitespace like Telegram, shifting and clipping the entities."""
    body = text.strip()
    lead = utf16_len(text[: len(text) - len(text.lstrip())])
    total = utf16_len(body)
    result = []
    for entity in entities:
        start = max(entity["offset"] - lead, 0)
        end = min(entity["offset"] + entity["length"] - lead, total)
        if end > start:
            result.append({**entity, "offset": start, "length": end - start})
    return body, result


def format_text(value: object, parse_mode: object, entities: object) -> tuple[str, list[Entity]]:
    """The trimmed plain text and entities of a text or caption parameter."""
    text = "" if value is None else value if isinstance(value, str) else json.dumps(value)
    mode = parse_mode.lower() if isinstance(parse_mode, str) else ""
    if entities is not None:
        if not isinstance(entities, list) or not all(isinstance(e, dict) for e in entities):
            raise ContentError("Bad Request: can't parse entities JSON object")
        size = utf16_len(text)
        for n, e in enumerate(entities):
            offset, length = e.get("offset"), e.get("length")
            if not (isinstance(offset, int) and isinstance(length, int) and "type" in e):
                raise ContentError(f"Bad Request: can't parse entities: entity {n} is invalid")
            if offset < 0 or length <= 0 or offset + length > size:
                raise ContentError(
                    f"Bad Request: can't parse entities: entity {n} (offset {offset}, length "
                    f"{length}) is outside the text of {size} UTF-16 code units"
                )
        return trim(text, [dict(e) for e in entities])
    try:
        if mode == "html":
            return trim(*parse_html(text))
        if mode == "markdownv2":
            return trim(*parse_markdown_v2(text))
    except EntityParseError as err:
        raise ContentError(f"Bad Request: can't parse entities: {err}") from None
    if parse_mode and mode != "markdown":
        raise ContentError("Bad Request: unsupported parse_mode")
    return trim(text, [])


def check_reply_markup(markup: object) -> dict[str, Any] | None:
    """Validates a reply_markup parameter (JSON text or object); returns it as a dict."""
    if markup is None:
        return None
    if isinstance(markup, str):
        try:
            markup = json.loads(markup)
        except ValueError:
            markup = None
    if not isinstance(markup, dict):
        raise ContentError("Bad Request: can't parse reply keyboard markup JSON object")
    if "inline_keyboard" not in markup:
        return markup
    rows = markup["inline_keyboard"]
    prefix = "Bad Request: can't parse inline keyboard button: "
    if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
        raise ContentError('Bad Request: field "inline_keyboard" must be an Array of Arrays')
    for button in (b for row in rows for b in row):
        if not isinstance(button, dict):
            raise ContentError(prefix + "InlineKeyboardButton must be an Object")
        if not isinstance(button.get("text"), str):
            raise ContentError(prefix + 'Field "text" must be of type String')
        if not any(k in button for k in _BUTTON_ACTIONS):
            raise ContentError(prefix + "Text buttons are unallowed in the inline keyboard")
        data = button.get("callback_data")
        if "callback_data" in button and not (
            isinstance(data, str) and 1 <= len(data.encode("utf-8")) <= 64
        ):
            raise ContentError("Bad Request: BUTTON_DATA_INVALID")
    return {"inline_keyboard": rows}

"""The strict fake Telegram Bot API server, driven by the real python-telegram-bot client."""

from __future__ import annotations

import asyncio
import datetime as dtm
import io
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from telegram import (
    Bot,
    BotCommand,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    MessageEntity,
    ReplyParameters,
)
from telegram.error import BadRequest, Conflict, InvalidToken, NetworkError, RetryAfter

from tests.fakes.telegram import NOT_MODIFIED, ApiCall, FakeTelegram

CHAT = 42
NESTED = "can't be nested inside tag"
EQUAL_SIGN = "Expected equal sign in declaration of an attribute"
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
    + (320).to_bytes(4, "big")
    + (200).to_bytes(4, "big")
    + b"\x08\x02\x00\x00\x00fake-png-body"
)


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        fake.inject_message(CHAT, "hello")  # makes the chat known
        yield fake


@pytest.fixture
async def bot(tg: FakeTelegram) -> AsyncIterator[Bot]:
    client = Bot(tg.token, base_url=f"{tg.root}/bot", base_file_url=f"{tg.root}/file/bot")
    async with client:
        yield client


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d, callback_data=d) for d in data]])


def last_error(tg: FakeTelegram) -> str:
    """The exact description the fake answered the last call with."""
    description: str = tg.calls[-1].response["description"]
    return description


async def rejects(tg: FakeTelegram, call: Any, description: str) -> None:
    with pytest.raises(BadRequest):
        await call
    assert tg.calls[-1].status == 400
    assert last_error(tg) == description


async def raw(
    http: aiohttp.ClientSession, tg: FakeTelegram, method: str, **kwargs: Any
) -> tuple[int, dict[str, Any]]:
    http_method = "GET" if "params" in kwargs else "POST"
    async with http.request(http_method, f"{tg.root}/bot{tg.token}/{method}", **kwargs) as resp:
        return resp.status, await resp.json()


# ----------------------------------------------------------------- protocol
async def test_get_me_describes_the_bot(bot: Bot) -> None:
    me = await bot.get_me()
    assert (me.id, me.is_bot, me.username) == (123456, True, "augure_test_bot")
    assert me.can_join_groups is True and me.supports_inline_queries is False
    assert me.can_read_all_group_messages is False


async def test_wrong_token_is_unauthorized(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    intruder = Bot("999:WRONG", base_url=f"{tg.root}/bot")
    with pytest.raises(InvalidToken):
        await intruder.initialize()
    async with http.post(f"{tg.root}/bot999:WRONG/getMe") as resp:
        assert resp.status == 401
        assert await resp.json() == {"ok": False, "error_code": 401, "description": "Unauthorized"}


async def test_unknown_method_is_not_found(tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    status, body = await raw(http, tg, "sendTelepathy", json={"chat_id": CHAT})
    assert (status, body) == (404, {"ok": False, "error_code": 404, "description": "Not Found"})


async def test_json_form_and_query_encodings_are_parsed(
    tg: FakeTelegram, http: aiohttp.ClientSession
) -> None:
    markup = json.dumps({"inline_keyboard": [[{"text": "A", "callback_data": "a"}]]})
    status, body = await raw(
        http, tg, "sendMessage", json={"chat_id": str(CHAT), "text": "1", "reply_markup": markup}
    )
    assert status == 200 and body["result"]["text"] == "1"
    assert body["result"]["reply_markup"]["inline_keyboard"][0][0]["callback_data"] == "a"
    form = {"chat_id": str(CHAT), "text": "true", "disable_notification": "true"}
    status, body = await raw(http, tg, "sendMessage", data=form)
    assert status == 200 and body["result"]["text"] == "true"
    assert tg.calls[-1].params["disable_notification"] is True
    status, body = await raw(http, tg, "sendmessage", params={"chat_id": str(CHAT), "text": "42"})
    assert status == 200 and body["result"]["text"] == "42"
    assert tg.calls[-1].method == "sendMessage" and tg.calls[-1].params["chat_id"] == CHAT


async def test_housekeeping_methods_answer_true(bot: Bot, tg: FakeTelegram) -> None:
    assert await bot.delete_webhook(drop_pending_updates=True) is True
    assert await bot.get_updates() == ()  # the pending "hello" was dropped
    info = await bot.get_webhook_info()
    assert info.url == "" and info.pending_update_count == 0
    assert await bot.close() is True
    assert await bot.log_out() is True


# ----------------------------------------------------------------- getUpdates
async def test_long_poll_wakes_on_injected_message(bot: Bot, tg: FakeTelegram) -> None:
    first = await bot.get_updates(timeout=0)
    assert [u.message.text for u in first if u.message] == ["hello"]
    poll = asyncio.create_task(bot.get_updates(offset=first[-1].update_id + 1, timeout=5))
    await asyncio.sleep(0.05)
    assert not poll.done()
    started = time.monotonic()
    sent = tg.inject_message(CHAT, "/remember milk", first_name="Ann")
    updates = await poll
    assert time.monotonic() - started < 1
    message = updates[0].message
    assert message is not None and message.text == "/remember milk"
    assert message.message_id == sent["message_id"] == 2
    assert message.from_user is not None and message.from_user.first_name == "Ann"
    assert message.chat.type == "private" and message.chat.id == CHAT
    assert [(e.type, e.offset, e.length) for e in message.entities] == [("bot_command", 0, 9)]


async def test_an_album_comes_as_one_update_per_part_sharing_a_media_group(
    bot: Bot, tg: FakeTelegram
) -> None:
    first = await bot.get_updates(timeout=0)
    tg.inject_album(CHAT, [PNG, PNG], caption="our trip")
    updates = await bot.get_updates(offset=first[-1].update_id + 1, timeout=0)
    parts = [u.message for u in updates if u.message]
    assert len(parts) == 2 and parts[0].media_group_id is not None
    assert parts[0].media_group_id == parts[1].media_group_id
    assert [p.caption for p in parts] == ["our trip", None]
    assert all(p.photo for p in parts) and parts[0].photo[-1].file_id != parts[1].photo[-1].file_id
    tg.inject_album(CHAT, [("a.pdf", b"%PDF-1"), ("b.pdf", b"%PDF-2")])
    documents = await bot.get_updates(offset=updates[-1].update_id + 1, timeout=0)
    names = [u.message.document.file_name for u in documents if u.message and u.message.document]
    assert names == ["a.pdf", "b.pdf"]
    with pytest.raises(ValueError, match="album"):
        tg.inject_album(CHAT, [PNG, ("a.pdf", b"%PDF-1")])  # Telegram does not mix them
    with pytest.raises(ValueError, match="album"):
        tg.inject_album(CHAT, [PNG])


async def test_long_poll_times_out_with_empty_list(bot: Bot, tg: FakeTelegram) -> None:
    updates = await bot.get_updates(timeout=0)
    started = time.monotonic()
    assert (
        await bot.get_updates(offset=updates[-1].update_id + 1, timeout=dtm.timedelta(seconds=0.3))
        == ()
    )
    assert time.monotonic() - started >= 0.29


async def test_offset_confirms_and_limit_caps(bot: Bot, tg: FakeTelegram) -> None:
    for n in range(3):
        tg.inject_message(CHAT, f"m{n}")
    updates = await bot.get_updates(limit=2)
    assert [u.message.text for u in updates if u.message] == ["hello", "m0"]
    again = await bot.get_updates(offset=updates[-1].update_id + 1)
    assert [u.message.text for u in again if u.message] == ["m1", "m2"]
    assert await bot.get_updates(offset=again[-1].update_id + 1) == ()


async def test_allowed_updates_filters(bot: Bot, tg: FakeTelegram) -> None:
    assert await bot.get_updates(allowed_updates=["callback_query"]) == ()
    tg.inject_message(CHAT, "ignored")
    assert await bot.get_updates() == ()


async def test_second_poller_terminates_the_first(bot: Bot, tg: FakeTelegram) -> None:
    await bot.get_updates(offset=-1)
    first = asyncio.create_task(bot.get_updates(offset=2, timeout=5))
    await asyncio.sleep(0.05)
    async with Bot(tg.token, base_url=f"{tg.root}/bot") as other_instance:
        await other_instance.get_updates(offset=2)
    with pytest.raises(Conflict, match="terminated by other getUpdates request"):
        await asyncio.wait_for(first, 1)


# ----------------------------------------------------------------- sendMessage
async def test_send_message_is_stored_with_raw_text(bot: Bot, tg: FakeTelegram) -> None:
    message = await bot.send_message(
        CHAT, "  <b>Hi</b> &amp; 😀 <i>x</i>\n", parse_mode="HTML", reply_markup=keyboard("a")
    )
    assert message.text == "Hi & 😀 x" and message.message_id == 2
    assert [(e.type, e.offset, e.length) for e in message.entities] == [
        ("bold", 0, 2),
        ("italic", 8, 1),
    ]
    [stored] = tg.messages(CHAT)
    assert stored["raw_text"] == "  <b>Hi</b> &amp; 😀 <i>x</i>\n"
    assert stored["parse_mode"] == "HTML" and stored["edits"] == 0
    assert stored["reply_markup"] == {"inline_keyboard": [[{"text": "a", "callback_data": "a"}]]}
    assert stored["from"]["is_bot"] is True and isinstance(stored["date"], int)


async def test_message_ids_are_per_chat_and_shared(bot: Bot, tg: FakeTelegram) -> None:
    assert (await bot.send_message(CHAT, "one")).message_id == 2
    assert tg.inject_message(CHAT, "two")["message_id"] == 3
    assert tg.inject_message(7, "other chat")["message_id"] == 1
    assert (await bot.send_message(7, "reply")).message_id == 2
    assert [m["message_id"] for m in tg.messages(CHAT)] == [2]


async def test_unknown_chat(bot: Bot, tg: FakeTelegram) -> None:
    await rejects(tg, bot.send_message(999, "hi"), "Bad Request: chat not found")
    await rejects(tg, bot.send_chat_action(999, "typing"), "Bad Request: chat not found")


@pytest.mark.parametrize("text", ["", "   \n", "<b></b>", "<b> </b>"])
async def test_empty_text(bot: Bot, tg: FakeTelegram, text: str) -> None:
    await rejects(
        tg, bot.send_message(CHAT, text, parse_mode="HTML"), "Bad Request: message text is empty"
    )
    assert tg.messages(CHAT) == []


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("a" * 4096, True),
        ("a" * 4097, False),
        ("😀" * 2048, True),  # 4096 UTF-16 code units
        ("😀" * 2048 + "a", False),
        ("<b>" + "a" * 4096 + "</b>", True),  # tags don't count
        ("&amp;" * 4096, True),
        ("&amp;" * 4097, False),
    ],
)
async def test_text_length_in_utf16_after_parsing(
    bot: Bot, tg: FakeTelegram, text: str, ok: bool
) -> None:
    call = bot.send_message(CHAT, text, parse_mode="HTML")
    if ok:
        await call
    else:
        await rejects(tg, call, "Bad Request: message is too long")


# ----------------------------------------------------------------- HTML
@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("hi <foo>x</foo>", 'Unsupported start tag "foo" at byte offset 3'),
        ("é <p>x</p>", 'Unsupported start tag "p" at byte offset 3'),
        ("<b>bold", 'Can\'t find end tag corresponding to start tag "b"'),
        ("<b><i>x</b></i>", 'Unmatched end tag at byte offset 7, expected "</i>", found "</b>"'),
        ("x</b>", "Unexpected end tag at byte offset 1"),
        ("1 < 2", 'Unsupported start tag "" at byte offset 2'),
        ("a <b", "Unclosed start tag at byte offset 2"),
        ("<span>x</span>", 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
        ('<span class="x">x</span>', 'Tag "span" must have class "tg-spoiler" at byte offset 0'),
        ("<a>x</a>", 'Tag "a" must have attribute "href" at byte offset 0'),
        ("<code><pre>x</pre></code>", f'Tag "pre" {NESTED} "code" at byte offset 6'),
        ("<code>a<code>x</code></code>", f'Tag "code" {NESTED} "code" at byte offset 7'),
        ("<b x>y</b>", f'{EQUAL_SIGN} of the tag "b" at byte offset 0'),
    ],
)
async def test_html_parse_errors(bot: Bot, tg: FakeTelegram, text: str, detail: str) -> None:
    call = bot.send_message(CHAT, text, parse_mode="HTML")
    await rejects(tg, call, f"Bad Request: can't parse entities: {detail}")
    assert tg.messages(CHAT) == []


@pytest.mark.parametrize("text", ["AT&T", "&foo; bar", "&#xZZ;", "&amp", "&#0;"])
async def test_html_bare_ampersand_is_refused(bot: Bot, tg: FakeTelegram, text: str) -> None:
    with pytest.raises(BadRequest):
        await bot.send_message(CHAT, text, parse_mode="HTML")
    assert last_error(tg).startswith("Bad Request: can't parse entities: ")


async def test_html_allowed_tags_become_entities(bot: Bot, tg: FakeTelegram) -> None:
    html = (
        "<b>b</b><strong>s</strong><i>i</i><em>e</em><u>u</u><ins>n</ins><s>s</s>"
        "<strike>k</strike><del>d</del><span class='tg-spoiler'>p</span><tg-spoiler>q</tg-spoiler>"
        '<a href="https://x.org/?a=1&amp;b=2">L</a><code>c</code>'
        '<pre><code class="language-python">x = 1</code></pre><blockquote>q</blockquote>'
        "<blockquote expandable>z</blockquote>"
        '<tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
        "&lt;&gt;&quot;&#65;&#x42;"
    )
    message = await bot.send_message(CHAT, html, parse_mode="HTML")
    assert message.text == 'bsieunskdpqLcx = 1qz👍<>"AB'
    kinds = [(e.type, e.offset, e.length) for e in message.entities]
    assert kinds[:5] == [
        ("bold", 0, 1),
        ("bold", 1, 1),
        ("italic", 2, 1),
        ("italic", 3, 1),
        ("underline", 4, 1),
    ]
    by_type = {e.type: e for e in message.entities}
    assert by_type["text_link"].url == "https://x.org/?a=1&b=2"
    assert by_type["pre"].language == "python" and by_type["pre"].length == 5
    assert by_type["custom_emoji"].custom_emoji_id == "5368324170671202286"
    assert {"spoiler", "strikethrough", "code", "blockquote", "expandable_blockquote"} <= set(
        by_type
    )
    assert tg.messages(CHAT)[0]["text"] == message.text


# ----------------------------------------------------------------- MarkdownV2, entities
@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("Done.", "Character '.' is reserved and must be escaped with the preceding '\\'"),
        ("1-2", "Character '-' is reserved and must be escaped with the preceding '\\'"),
        ("(x)", "Character '(' is reserved and must be escaped with the preceding '\\'"),
        ("*bold", "Can't find end of the entity starting at byte offset 0"),
    ],
)
async def test_markdown_v2_reserved_characters(
    bot: Bot, tg: FakeTelegram, text: str, detail: str
) -> None:
    call = bot.send_message(CHAT, text, parse_mode="MarkdownV2")
    await rejects(tg, call, f"Bad Request: can't parse entities: {detail}")


async def test_markdown_v2_happy_path(bot: Bot, tg: FakeTelegram) -> None:
    text = "*bold* _it_ __u__ ~s~ ||sp|| `a.b` [link](https://x.org/a\\)b) 1\\.5\\!"
    message = await bot.send_message(CHAT, text, parse_mode="MarkdownV2")
    assert message.text == "bold it u s sp a.b link 1.5!"
    types = [e.type for e in message.entities]
    assert types == ["bold", "italic", "underline", "strikethrough", "spoiler", "code", "text_link"]
    assert message.entities[-1].url == "https://x.org/a)b"
    quoted = await bot.send_message(CHAT, ">a\n>b\nc", parse_mode="MarkdownV2")
    assert quoted.text == "a\nb\nc"
    assert [(e.type, e.offset, e.length) for e in quoted.entities] == [("blockquote", 0, 3)]


async def test_explicit_entities_are_checked_against_the_text(bot: Bot, tg: FakeTelegram) -> None:
    ok = await bot.send_message(CHAT, "😀 bold", entities=[MessageEntity("bold", 3, 4)])
    assert ok.entities[0].offset == 3
    with pytest.raises(BadRequest):
        await bot.send_message(CHAT, "😀 bold", entities=[MessageEntity("bold", 3, 5)])
    assert last_error(tg).startswith("Bad Request: can't parse entities: ")


async def test_unsupported_parse_mode(bot: Bot, tg: FakeTelegram) -> None:
    call = bot.send_message(CHAT, "x", parse_mode="BBCode")
    await rejects(tg, call, "Bad Request: unsupported parse_mode")


# ----------------------------------------------------------------- reply markup
@pytest.mark.parametrize(("data", "ok"), [("x" * 64, True), ("x" * 65, False), ("é" * 33, False)])
async def test_callback_data_is_limited_to_64_bytes(
    bot: Bot, tg: FakeTelegram, data: str, ok: bool
) -> None:
    call = bot.send_message(CHAT, "pick", reply_markup=keyboard(data))
    if ok:
        await call
    else:
        await rejects(tg, call, "Bad Request: BUTTON_DATA_INVALID")


@pytest.mark.parametrize(
    ("button", "description"),
    [
        ({"callback_data": "x"}, 'Field "text" must be of type String'),
        ({"text": "plain"}, "Text buttons are unallowed in the inline keyboard"),
        ({"text": "e", "callback_data": ""}, None),
    ],
)
async def test_malformed_buttons(
    tg: FakeTelegram, http: aiohttp.ClientSession, button: dict[str, str], description: str | None
) -> None:
    markup = {"inline_keyboard": [[button]]}
    status, body = await raw(
        http, tg, "sendMessage", json={"chat_id": CHAT, "text": "t", "reply_markup": markup}
    )
    expected = "Bad Request: BUTTON_DATA_INVALID"
    if description:
        expected = f"Bad Request: can't parse inline keyboard button: {description}"
    assert (status, body["description"]) == (400, expected)
    status, body = await raw(
        http, tg, "sendMessage", json={"chat_id": CHAT, "text": "t", "reply_markup": "{oops"}
    )
    assert body["description"] == "Bad Request: can't parse reply keyboard markup JSON object"


# ----------------------------------------------------------------- edits and deletes
async def test_edit_message_text(bot: Bot, tg: FakeTelegram) -> None:
    sent = await bot.send_message(CHAT, "draft", reply_markup=keyboard("a"))
    same = bot.edit_message_text("draft", CHAT, sent.message_id, reply_markup=keyboard("a"))
    await rejects(tg, same, NOT_MODIFIED)
    edited = await bot.edit_message_text(
        "<b>final</b>", CHAT, sent.message_id, parse_mode="HTML", reply_markup=keyboard("b")
    )
    assert not isinstance(edited, bool) and edited.text == "final"
    assert edited.edit_date is not None
    # editing without reply_markup removes the keyboard, like Telegram
    await bot.edit_message_text("<b>final</b>", CHAT, sent.message_id, parse_mode="HTML")
    [stored] = tg.messages(CHAT)
    assert stored["edits"] == 2 and stored["raw_text"] == "<b>final</b>"
    assert stored["reply_markup"] is None and "reply_markup" not in tg.sent()[-1].response["result"]


async def test_edit_message_text_errors(bot: Bot, tg: FakeTelegram) -> None:
    sent = await bot.send_message(CHAT, "draft")
    missing = bot.edit_message_text("x", CHAT, 99)
    await rejects(tg, missing, "Bad Request: message to edit not found")
    await rejects(tg, bot.edit_message_text("x", CHAT, 1), "Bad Request: message can't be edited")
    too_long = bot.edit_message_text("a" * 4097, CHAT, sent.message_id)
    await rejects(tg, too_long, "Bad Request: message is too long")
    empty = bot.edit_message_text(" ", CHAT, sent.message_id)
    await rejects(tg, empty, "Bad Request: message text is empty")
    bad_html = bot.edit_message_text("<b>x", CHAT, sent.message_id, parse_mode="HTML")
    unclosed = 'Can\'t find end tag corresponding to start tag "b"'
    await rejects(tg, bad_html, f"Bad Request: can't parse entities: {unclosed}")
    assert tg.messages(CHAT)[0]["text"] == "draft"


async def test_edit_reply_markup(bot: Bot, tg: FakeTelegram) -> None:
    sent = await bot.send_message(CHAT, "pick", reply_markup=keyboard("a"))
    same = bot.edit_message_reply_markup(CHAT, sent.message_id, reply_markup=keyboard("a"))
    await rejects(tg, same, NOT_MODIFIED)
    await bot.edit_message_reply_markup(CHAT, sent.message_id, reply_markup=None)
    [stored] = tg.messages(CHAT)
    assert stored["reply_markup"] is None and stored["edits"] == 1
    await rejects(tg, bot.edit_message_reply_markup(CHAT, sent.message_id), NOT_MODIFIED)
    missing = bot.edit_message_reply_markup(CHAT, 77, reply_markup=keyboard("a"))
    await rejects(tg, missing, "Bad Request: message to edit not found")


async def test_delete_message(bot: Bot, tg: FakeTelegram) -> None:
    sent = await bot.send_message(CHAT, "bye")
    assert await bot.delete_message(CHAT, sent.message_id) is True
    assert tg.messages(CHAT) == []
    again = bot.delete_message(CHAT, sent.message_id)
    await rejects(tg, again, "Bad Request: message to delete not found")


async def test_reply_to_unknown_message(bot: Bot, tg: FakeTelegram) -> None:
    reply = await bot.send_message(CHAT, "re", reply_parameters=ReplyParameters(1))
    assert reply.reply_to_message is not None and reply.reply_to_message.text == "hello"
    missing = bot.send_message(CHAT, "re", reply_parameters=ReplyParameters(50))
    await rejects(tg, missing, "Bad Request: message to be replied not found")


# ----------------------------------------------------------------- callbacks, actions
async def test_button_press_and_answer(bot: Bot, tg: FakeTelegram) -> None:
    sent = await bot.send_message(CHAT, "pick", reply_markup=keyboard("yes", "no"))
    with pytest.raises(LookupError):
        tg.press_button(CHAT, sent.message_id, "maybe")
    query_id = tg.press_button(CHAT, sent.message_id, "yes")
    updates = await bot.get_updates(offset=2)
    query = updates[-1].callback_query
    assert query is not None and query.id == query_id and query.data == "yes"
    assert query.message is not None and query.message.message_id == sent.message_id
    assert await bot.answer_callback_query(query_id, text="done") is True
    assert tg.callback_answers == [{"callback_query_id": query_id, "text": "done"}]
    stale = "Bad Request: query is too old and response timeout expired or query ID is invalid"
    await rejects(tg, bot.answer_callback_query(query_id), stale)
    await rejects(tg, bot.answer_callback_query("12345"), stale)


async def test_chat_action(bot: Bot, tg: FakeTelegram) -> None:
    assert await bot.send_chat_action(CHAT, "typing") is True
    bad = bot.send_chat_action(CHAT, "dancing")
    await rejects(tg, bad, "Bad Request: wrong parameter action in request")


async def test_commands(bot: Bot, tg: FakeTelegram) -> None:
    commands = [BotCommand("start", "Start"), BotCommand("remember_2", "Store a fact")]
    assert await bot.set_my_commands(commands) is True
    assert tg.commands == [c.to_dict() for c in commands]
    assert await bot.get_my_commands() == tuple(commands)
    for name in ("Start", "bad-name", "x" * 33, ""):
        call = bot.set_my_commands([BotCommand(name, "d")])
        await rejects(tg, call, "Bad Request: BOT_COMMAND_INVALID")
    for description in ("", "d" * 257):
        call = bot.set_my_commands([BotCommand("ok", description)])
        await rejects(tg, call, "Bad Request: BOT_COMMAND_DESCRIPTION_INVALID")
    assert tg.commands == [c.to_dict() for c in commands]


# ----------------------------------------------------------------- files
async def test_send_photo_stores_bytes_and_serves_them(bot: Bot, tg: FakeTelegram) -> None:
    message = await bot.send_photo(CHAT, PNG, caption="<b>chart</b>", parse_mode="HTML")
    assert message.caption == "chart" and message.photo[-1].width == 320
    [stored] = tg.messages(CHAT)
    assert stored["photo_bytes"] == PNG and stored["raw_text"] == "<b>chart</b>"
    file = await bot.get_file(message.photo[-1].file_id)
    assert bytes(await file.download_as_bytearray()) == PNG
    again = await bot.send_photo(CHAT, message.photo[-1].file_id)
    assert tg.messages(CHAT)[-1]["photo_bytes"] == PNG and again.caption is None


async def test_send_photo_errors(bot: Bot, tg: FakeTelegram) -> None:
    long_caption = bot.send_photo(CHAT, PNG, caption="c" * 1025)
    await rejects(tg, long_caption, "Bad Request: message caption is too long")
    await rejects(tg, bot.send_photo(CHAT, b"not an image"), "Bad Request: IMAGE_PROCESS_FAILED")
    unknown = bot.send_photo(CHAT, "no-such-file-id")
    await rejects(tg, unknown, "Bad Request: wrong file identifier/HTTP URL specified")
    assert tg.messages(CHAT) == []
    await bot.send_photo(CHAT, PNG, caption="c" * 1024)


async def test_send_document(bot: Bot, tg: FakeTelegram) -> None:
    message = await bot.send_document(CHAT, io.BytesIO(b"a,b\n1,2\n"), filename="report.csv")
    assert message.document is not None and message.document.file_name == "report.csv"
    [stored] = tg.messages(CHAT)
    assert (stored["document_name"], stored["document_bytes"]) == ("report.csv", b"a,b\n1,2\n")
    empty = bot.send_document(CHAT, io.BytesIO(b""), filename="e.txt")
    await rejects(tg, empty, "Bad Request: file must be non-empty")


async def test_injected_media_can_be_downloaded(bot: Bot, tg: FakeTelegram) -> None:
    tg.inject_message(CHAT, photo=PNG, caption="look")
    tg.inject_message(CHAT, document=("notes.txt", b"some notes"))
    updates = await bot.get_updates(offset=2)
    photo_msg, doc_msg = (u.message for u in updates)
    assert photo_msg is not None and doc_msg is not None
    assert photo_msg.caption == "look" and photo_msg.photo[-1].height == 200
    photo = await bot.get_file(photo_msg.photo[-1].file_id)
    assert bytes(await photo.download_as_bytearray()) == PNG
    assert doc_msg.document is not None and doc_msg.document.file_name == "notes.txt"
    document = await doc_msg.document.get_file()
    assert bytes(await document.download_as_bytearray()) == b"some notes"


async def test_file_errors(bot: Bot, tg: FakeTelegram, http: aiohttp.ClientSession) -> None:
    await rejects(tg, bot.get_file("nope"), "Bad Request: invalid file_id")
    async with http.get(f"{tg.root}/file/bot{tg.token}/photos/none.jpg") as resp:
        assert resp.status == 404
    file_id = tg.inject_message(CHAT, photo=PNG)["photo"][-1]["file_id"]
    path = (await bot.get_file(file_id)).file_path
    assert path is not None and path.startswith(f"{tg.root}/file/bot{tg.token}/")
    async with http.get(path.replace(tg.token, "1:BAD")) as resp:
        assert resp.status == 401


# ----------------------------------------------------------------- planned errors
async def test_planned_flood_error_changes_nothing(bot: Bot, tg: FakeTelegram) -> None:
    tg.plan_error("sendMessage", retry_after=3, count=2)
    for _ in range(2):
        with pytest.raises(RetryAfter, match=r"Retry in (3 seconds|0:00:03)"):
            await bot.send_message(CHAT, "hi")
    assert tg.calls[-1].response == {
        "ok": False,
        "error_code": 429,
        "description": "Too Many Requests: retry after 3",
        "parameters": {"retry_after": 3},
    }
    assert tg.messages(CHAT) == []
    assert (await bot.send_message(CHAT, "hi")).message_id == 2


async def test_planned_server_and_custom_errors(bot: Bot, tg: FakeTelegram) -> None:
    tg.plan_error("sendMessage", 500)
    with pytest.raises(NetworkError, match="Internal Server Error"):
        await bot.send_message(CHAT, "hi")
    tg.plan_error("sendChatAction", 400, description="Bad Request: chat is deactivated")
    await rejects(tg, bot.send_chat_action(CHAT, "typing"), "Bad Request: chat is deactivated")
    assert tg.sent() == tg.sent("getMe") and len(tg.sent("getMe")) == 1


# ----------------------------------------------------------------- waiting helpers
async def test_wait_for_wakes_on_new_calls(bot: Bot, tg: FakeTelegram) -> None:
    async def later() -> None:
        await asyncio.sleep(0.05)
        await bot.send_message(CHAT, "one")
        await bot.send_message(CHAT, "two")

    task = asyncio.create_task(later())
    calls = await tg.wait_for("sendMessage", count=2, timeout=2)
    assert [c.params["text"] for c in calls] == ["one", "two"]
    matched = await tg.wait_for(lambda c: c.params.get("text") == "two")
    assert isinstance(matched[0], ApiCall) and matched[0].response["ok"] is True
    await task


async def test_wait_for_times_out_with_a_summary(bot: Bot, tg: FakeTelegram) -> None:
    await bot.send_chat_action(CHAT, "typing")
    with pytest.raises(TimeoutError, match=r"sendChatAction") as caught:
        await tg.wait_for("sendMessage", timeout=0.1)
    assert "saw 0" in str(caught.value)


async def test_wait_idle(bot: Bot, tg: FakeTelegram) -> None:
    async def chatter(n: int) -> None:
        for _ in range(n):
            await bot.send_chat_action(CHAT, "typing")
            await asyncio.sleep(0.03)

    task = asyncio.create_task(chatter(20))
    with pytest.raises(TimeoutError):
        await tg.wait_idle(quiet=0.2, timeout=0.3)
    await task
    started = time.monotonic()
    await tg.wait_idle(quiet=0.1, timeout=1)
    assert time.monotonic() - started < 0.5


async def test_wait_polling_sees_a_long_poll_before_it_answers() -> None:
    async with FakeTelegram() as fake:
        bot = Bot(fake.token, base_url=f"{fake.root}/bot")
        async with bot:
            poll = asyncio.create_task(bot.get_updates(timeout=2))
            arrived = await fake.wait_polling(timeout=1)
            assert not poll.done() and arrived <= time.monotonic()
            fake.inject_message(1, "wake up")
            (update,) = await poll
            assert update.message is not None and update.message.text == "wake up"
